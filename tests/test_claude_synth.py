"""The synthetic brain's transcripts exercise the reader: sessions match the plan (planted)."""

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude


def test_demo_transcripts_match_the_planned_sessions(demo, tmp_path):
    con = open_writer(tmp_path / "t.duckdb")
    summary = ingest_claude(con, demo["root"] / "claude")
    missing = {i for p in demo["manifest"].planted if "no transcript" in p["effect"]
               for i in p["sess_ids"]}  # planted (issue 13): a log whose transcript is missing
    sessions = [s for s in demo["manifest"].sessions if s.sess_id not in missing]
    assert missing and summary.errors == 0 and summary.unpriced_models == []
    # the brain's sessions; the sprint sessions (run in the repos under /home/dev/projects,
    # synth/sprint_transcripts.py) are another planted effect, tested in
    # test_broker_transcript_synth.py
    brain = "cwd NOT LIKE '/home/dev/projects/%'"
    # ... and the mode plants (issue 14, synth/mode_plants.py) are extra sessions of their own
    extra = [i for p in demo["manifest"].planted for i in p.get("transcript_sessions", [])]
    brain = f"{brain} AND session_id NOT IN ('" + "', '".join(extra) + "')"
    brain_s = brain.replace("cwd", "s.cwd").replace("session_id", "s.session_id")
    got = {(str(r[0])[:16], r[1], r[2], r[3], r[4]) for r in con.execute(
        "SELECT started_at, context_peak_pct, context_at_close, commits, duration_min"
        f" FROM cc_sessions WHERE {brain}").fetchall()}
    planned = {(s.started_at.strftime("%Y-%m-%d %H:%M"), float(s.context_peak_pct),
                float(s.context_at_close), s.commits, float(s.duration_min)) for s in sessions}
    assert got == planned
    # every agent a session uses ran as a subagent of that type, with a measured cost
    used = {(s.started_at.strftime("%Y-%m-%d %H:%M"), a) for s in sessions for a in s.agents_used}
    used |= {(a["started_at"], a["agent"]) for p in demo["manifest"].planted  # issue 14 plants
             for a in p.get("planted_subagents", [])}
    measured = {(str(r[0])[:16], r[1]) for r in con.execute(
        "SELECT s.started_at, l.agent FROM transcript_agent_loads l"
        " JOIN cc_sessions s ON s.session_id = l.sess_id"
        f" WHERE l.tokens_measured > 0 AND l.cost_usd_measured > 0 AND {brain_s}").fetchall()}
    assert measured == used
    # the agents a session loads are read from agents/*.md: estimated cost = file bytes / 4
    loaded = sum(len(s.agents_loaded) for s in sessions)
    assert con.execute("SELECT count(*) FROM transcript_agent_loads l"
                       " JOIN cc_sessions s ON s.session_id = l.sess_id"
                       f" WHERE tokens_estimated IS NOT NULL AND {brain_s}").fetchone()[0] == loaded
