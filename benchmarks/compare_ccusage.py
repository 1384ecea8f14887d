"""Side-by-side: brainlab's Claude Code usage vs ccusage's, per UTC day and per session.

Usage:
    PYTHONPATH=. python benchmarks/compare_ccusage.py [--corpus DIR] [--ccusage-dir DIR]

DIR is a Claude config dir (holding projects/); default: the shared real corpus. ccusage is
run as `npx ccusage claude daily|session --json --offline --timezone UTC` from --ccusage-dir
(where `npm install ccusage@20.0.24` was run). Prints, per day, both token counts and costs;
then reconciles the session reports: ccusage's sessions leave out subagent usage nested in
progress lines (which its daily report counts) and make separate sessions of older
project-level agent-*.jsonl files; brainlab's sessions add up to its days.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import emit

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

KINDS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")


def run_ccusage(report: str, corpus: Path, ccusage_dir: Path) -> dict:
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(corpus))
    out = subprocess.run(["npx", "--no-install", "ccusage", "claude", report, "--json",
                          "--offline", "--timezone", "UTC"], cwd=ccusage_dir, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpora/claude-code"))
    parser.add_argument("--ccusage-dir", type=Path, default=Path("/work/ccusage"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        con = open_writer(Path(tmp) / "cmp.duckdb")
        t0 = time.perf_counter()
        ingest_claude(con, args.corpus)
        ours = {str(r[0]): r[1:] for r in con.execute(
            "SELECT day, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,"
            " cost_usd FROM usage_daily ORDER BY day").fetchall()}
        print(f"brainlab ingest + daily: {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        daily = run_ccusage("daily", args.corpus, args.ccusage_dir)
        print(f"ccusage daily:           {time.perf_counter() - t0:.2f} s\n")

        print(f"{'day':<11} {'tokens (in/out/cache-w/cache-r)':>48}  {'same':>4}"
              f"  {'brainlab $':>11} {'ccusage $':>11} {'diff %':>7}")
        all_equal, worst = True, 0.0
        theirs = {d["date"]: d for d in daily["daily"]}
        for day in sorted(set(ours) | set(theirs)):
            mine, other = ours.get(day), theirs.get(day)
            toks = tuple(mine[:4]) if mine else None
            other_toks = tuple(other[k] for k in KINDS) if other else None
            same = toks == other_toks
            all_equal &= same
            cost, other_cost = (mine[4] if mine else 0.0), (other["totalCost"] if other else 0.0)
            diff = 100 * (cost - other_cost) / other_cost if other_cost else 0.0
            worst = max(worst, abs(diff))
            shown = "/".join(f"{t:,}" for t in (toks or other_toks))
            print(f"{day:<11} {shown:>48}  {'yes' if same else 'NO':>4}  {cost:>11.4f}"
                  f" {other_cost:>11.4f} {diff:>+7.3f}")
        print(f"\nper-day tokens identical: {all_equal}; largest cost difference: {worst:.3f} %")

        session = run_ccusage("session", args.corpus, args.ccusage_dir)
        print("\nSessions: ccusage session report vs brainlab usage_sessions")
        nested = dict(con.execute(
            "SELECT session_id, sum(input_tokens + output_tokens + cache_creation_tokens"
            " + cache_read_tokens) FROM cc_requests WHERE is_nested GROUP BY 1").fetchall())
        project_agent = {}
        for file, sess, tokens in con.execute(
                "SELECT r.source_file, r.session_id, sum(input_tokens + output_tokens"
                " + cache_creation_tokens + cache_read_tokens) FROM cc_requests r"
                " JOIN cc_files f USING (source_file) WHERE f.layout = 'project-agent'"
                " GROUP BY 1, 2").fetchall():
            project_agent[Path(file).stem] = (sess, tokens)
        mine = dict(con.execute("SELECT session_id, total_tokens FROM usage_sessions").fetchall())
        explained = True
        for s in sorted(session["sessions"], key=lambda s: -s["totalTokens"]):
            sid, theirs_total = s["sessionId"], s["totalTokens"]
            if sid in project_agent:
                parent, tokens = project_agent[sid]
                ok = tokens == theirs_total
                note = f"project-level agent file; brainlab counts it in its session {parent[:8]}"
                print(f"  {sid[:36]:<36} ccusage {theirs_total:>12,}  brainlab (in parent)"
                      f" {tokens:>12,}  {'ok' if ok else 'UNEXPLAINED'}  {note}")
            else:
                ours_total = mine.get(sid, 0)
                minus = nested.get(sid, 0) + sum(t for p, t in project_agent.values() if p == sid)
                ok = ours_total - minus == theirs_total
                notes = []
                if nested.get(sid):
                    notes.append(f"brainlab adds {nested[sid]:,} progress-nested subagent tokens")
                if minus - nested.get(sid, 0):
                    notes.append(f"and {minus - nested.get(sid, 0):,} of project-level agent files")
                note = "; ".join(notes)
                print(f"  {sid[:36]:<36} ccusage {theirs_total:>12,}  brainlab {ours_total:>12,}"
                      f"  {'ok' if ok else 'UNEXPLAINED'}  {note}")
            explained &= ok
        ours_sum = sum(mine.values())
        print(f"\nccusage: sessions {session['totals']['totalTokens']:,} tokens vs days"
              f" {daily['totals']['totalTokens']:,} (its sessions do not add up to its days)")
        print(f"brainlab: sessions {ours_sum:,} tokens vs days"
              f" {sum(sum(v[:4]) for v in ours.values()):,}")
        print(f"every session difference explained: {explained}")
        con.close()
        spaced_ok = spaced_demo(Path(tmp), args.ccusage_dir)
    emit("compare_ccusage", days_equal=all_equal, worst_session_pct=worst,
         sessions_explained=explained, spaced_json_ok=spaced_ok)
    return 0 if all_equal and worst < 1.0 and explained and spaced_ok else 1


def spaced_demo(tmp: Path, ccusage_dir: Path) -> bool:
    """One call written compactly, one written with spaces (valid JSON): who counts what."""
    root = tmp / "spaced"
    folder = root / "projects" / "p"
    folder.mkdir(parents=True)
    lines = []
    for i, seps in enumerate(((",", ":"), (", ", ": "))):
        line = {"type": "assistant", "sessionId": "s", "timestamp": "2026-01-01T10:00:00.000Z",
                "requestId": f"r{i}", "message": {
                    "id": f"m{i}", "model": "claude-sonnet-4-5", "role": "assistant",
                    "content": [], "usage": {"input_tokens": 100, "output_tokens": 10,
                                             "cache_creation_input_tokens": 0,
                                             "cache_read_input_tokens": 0}}}
        lines.append(json.dumps(line, separators=seps))
    (folder / "s.jsonl").write_text("\n".join(lines) + "\n")
    con = open_writer(tmp / "spaced.duckdb")
    ingest_claude(con, root)
    ours = con.execute("SELECT sum(input_tokens) FROM usage_daily").fetchone()[0]
    con.close()
    theirs = sum(d["inputTokens"] for d in run_ccusage("daily", root, ccusage_dir)["daily"])
    print(f"\nvalid JSON written with spaces (2 calls of 100 input tokens, one spaced):"
          f" brainlab {ours}, ccusage {theirs}")
    return ours == 200


if __name__ == "__main__":
    sys.exit(main())
