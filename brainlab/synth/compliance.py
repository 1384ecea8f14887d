"""Protocol-compliance plants (issue 14) in the claims, broker blocks, workspaces and journals.

Each is a registered plant of the ``files`` stage: it changes the rendered files in memory
the way a careless agent would, before anything is written: a claim with an unknown type, a
closed claim without its metabolism log, a log whose claim was never written, a boot file
and a stable domain kept by the broker, workspace files outside the spec, a stop whose code
disagrees with its name. Workspaces past their lifecycle are archived the way the
coach-scribe would (SPEC §5), except the planted ones, so ``brainlab check`` finds exactly
the breaches listed in ``synth_manifest.json`` (key ``violations``).
"""

from __future__ import annotations

import json
import random
import re
from datetime import timedelta

from brainlab.spec.stops import CODED_STOPS
from brainlab.synth.brain import claim_path
from brainlab.synth.files import BrainFiles, workspace_decisions
from brainlab.synth.registry import SynthContext, entry, plant
from brainlab.synth.sprints import PROJECT, broker_path

UNKNOWN_TYPE = "hotfix"  # not a SPEC §2.2 type


def _entry(effect: str, where: str, violations: list[tuple[str, str]]) -> dict:
    return entry(f"compliance: {effect}", where, violations)


@plant("claim-unknown-type", stage="files", spec="§2.2", rules=("SES001",),
       plants="a claim whose type SPEC §2.2 does not know")
def claim_unknown_type(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The claim of the session a quarter in says ``type: hotfix``."""
    typed = ctx.sessions[len(ctx.sessions) // 4]
    path = claim_path(typed.sess_id)
    ctx.files.put(path, re.sub(r"(?m)^type: .*$", f"type: {UNKNOWN_TYPE}",
                               ctx.files.text(path), count=1))
    return [_entry("claim with a type SPEC §2.2 does not know", typed.sess_id,
                   [("SES001", typed.sess_id)])]


@plant("claim-without-log", stage="files", spec="§2.4", rules=("CLO001",),
       plants="a closed claim whose session wrote no metabolism log")
def claim_without_log(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """A closed four-minute work claim at 23:55, three quarters in, with no log."""
    before = ctx.sessions[3 * len(ctx.sessions) // 4]
    ghost = f"sess-{before.started_at:%Y%m%d}-2355-work-nolog"
    opened = before.started_at.replace(hour=23, minute=55)
    ctx.files.put(claim_path(ghost), (
        f"sess_id: {ghost}\ntype: work\nscope: projets/\nagent: helloWorld\nstatus: closed\n"
        f'opened_at: "{opened:%Y-%m-%dT%H:%M}"\n'
        f'closed_at: "{opened + timedelta(minutes=4):%Y-%m-%dT%H:%M}"\n'))
    return [_entry("claim closed without a metabolism log", ghost, [("CLO001", ghost)])]


@plant("log-without-claim", stage="files", spec="§2.4", rules=("CLO002",),
       plants="a metabolism log whose claim file is missing")
def log_without_claim(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The claim of the session half-way through is not written."""
    unclaimed = ctx.sessions[len(ctx.sessions) // 2]
    ctx.files.remove(claim_path(unclaimed.sess_id))
    return [_entry("metabolism log whose claim file is missing", unclaimed.sess_id,
                   [("CLO002", unclaimed.sess_id)])]


@plant("broker-extra-sources", stage="files", spec="§4.2", rules=("BRK001", "BRK004"),
       plants="the broker loading a third source, or one the agent never references")
def broker_extra_sources(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """List the 'just in case' loads the sprint plan drew (model: sprints._sprint)."""
    too_many, unreferenced = [], []
    for sprint in ctx.sprint_plan:
        if sprint["project"] != PROJECT:
            continue
        for agent in sprint["agents"]:
            refs = {r["path"] for r in agent["referenced"]}
            subject = f"{sprint['sprint']}/{agent['agent']}"
            if len(agent["loaded"]) > 2:
                too_many.append(("BRK001", subject))
            unreferenced += [("BRK004", subject) for p in agent["loaded"] if p not in refs]
    return [
        _entry("the broker loads a third source 'just in case' in the four-file domain",
               "billing sprints", too_many),
        _entry("the broker loads a source 'just in case' that the agent never references",
               "sprints of other domains", unreferenced),
    ]


def _broker_candidates(ctx: SynthContext) -> list[dict]:
    """Released sprints of sessions with a boot context file and no open to-do."""
    booted = {s.sess_id for s in ctx.sessions  # sessions whose type has a boot context file
              if ctx.files.exists(f"contexts/session-{s.type}.yml")}
    return [s for s in ctx.sprint_plan if s["project"] == PROJECT and s["released"]
            and s["session"] in booted and not any(a["open_todos"] for a in s["agents"])]


@plant("broker-boot-file", stage="files", spec="§4.2", rules=("BRK002", "BRK004", "BRK001"),
       plants="the broker reloading a boot file (KERNEL.md, layer L0)")
def broker_boot_file(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The first candidate sprint's leanest agent also loads KERNEL.md."""
    candidates = _broker_candidates(ctx)
    if len(candidates) < 2:  # a very short brain: no sprint to plant these in
        return []
    boot = candidates[0]
    path = broker_path(boot)
    boot_file = "KERNEL.md"  # layer L0 of every session context
    chosen = min(boot["agents"], key=lambda a: len(a["loaded"]))
    agent = chosen["agent"]
    text = re.sub(rf"(?m)^(  {agent} → \[)", rf'\1"{boot_file}", ', ctx.files.text(path),
                  count=1)
    ctx.files.put(path, text.replace(f'"{boot_file}", ]', f'"{boot_file}"]'))
    subject = f"{boot['sprint']}/{agent}"
    also = [("BRK001", subject)] if len(chosen["loaded"]) >= 2 else []
    return [_entry("the broker reloads a boot file (KERNEL.md, layer L0)", subject,
                   [("BRK002", subject), ("BRK004", subject), *also])]


@plant("broker-kept-stable", stage="files", spec="§4.3", rules=("BRK003",),
       plants="the broker keeping a file of a domain with no open to-do")
def broker_kept_stable(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The second candidate sprint moves its first released file to GARDER."""
    candidates = _broker_candidates(ctx)
    if len(candidates) < 2:
        return []
    kept = candidates[1]
    path = broker_path(kept)
    text = ctx.files.text(path)
    released = re.search(r'LIBÉRER : \[(.*)\]', text).group(1)
    first = released.split(",")[0].strip()
    rest = ", ".join(p.strip() for p in released.split(",")[1:] if p.strip())
    text = text.replace(f"LIBÉRER : [{released}]", f"LIBÉRER : [{rest}]")
    text = re.sub(r"GARDER  : \[(.*)\]",
                  lambda m: f"GARDER  : [{', '.join(filter(None, [m.group(1), first]))}]", text)
    ctx.files.put(path, text)
    return [_entry("the broker keeps a file of a stable domain (no open to-do)",
                   kept["sprint"], [("BRK003", kept["sprint"])])]


def _archive_value(files: BrainFiles, name: str) -> str | None:
    found = re.search(r"(?m)^archive: (\S+)", files.text(f"workspace/{name}/README.md"))
    return found.group(1) if found else None


@plant("workspace-lifecycle", stage="files", spec="§5", rules=("WSP001", "WSP002", "WSP003"),
       plants="one workspace past each lifecycle (auto, keep, 30d); the others archived")
def workspace_lifecycle(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Apply SPEC §5 lifecycles as of the last day, but leave one breach of each rule."""
    files = ctx.files
    expired: dict[str, list[str]] = {"auto": [], "keep": [], "30d": []}
    # judged one day late, so a check at the brain's last timestamp never sees a borderline one
    for name in files.folders("workspace"):
        days, archive = workspace_decisions(files, name), _archive_value(files, name)
        retention = 30 if archive == "30d" else 0
        if days and archive in expired and max(days) + timedelta(days=8 + retention) <= \
                ctx.options.end + timedelta(days=1):
            expired[archive].append(name)
    keep_planted = next((n for n in expired["keep"] if files.text(
        f"workspace/{n}/ram.md").count("\n") > 52), expired["keep"][0] if expired["keep"] else None)
    planted = {"auto": expired["auto"][:1], "30d": expired["30d"][:1],
               "keep": [keep_planted] if keep_planted else []}
    for archive, found in expired.items():
        for name in found:
            if name in planted[archive]:
                continue
            if archive == "keep":  # the human decided: keep it for good
                readme = f"workspace/{name}/README.md"
                files.put(readme, files.text(readme).replace("archive: keep",
                                                             "archive: permanent"))
            else:  # archived to handoffs/ by the coach-scribe, then deleted
                files.remove_tree(f"workspace/{name}")
    ctx.kept_expired = [n for names in planted.values() for n in names]
    rules = {"auto": "WSP001", "keep": "WSP002", "30d": "WSP003"}
    return [_entry(f"workspace past its lifecycle (archive: {a})", n, [(rules[a], n)])
            for a, names in planted.items() for n in names]


@plant("workspace-files", stage="files", spec="§5", after=("workspace-lifecycle",),
       rules=("WSP004", "WSP005", "WSP007", "WSP008"),
       plants="live workspaces with a custom file, a long README, a malformed decision "
              "line, no archive value")
def workspace_files(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """One breach in each of the last four live workspaces (fewer in a short brain)."""
    live = [n for n in ctx.files.folders("workspace") if n not in ctx.kept_expired][-4:]
    return [change(ctx.files, name) for name, change in
            zip(live, (_custom_file, _long_readme, _bad_log, _no_archive), strict=False)]


def _custom_file(files: BrainFiles, name: str) -> dict:
    files.put(f"workspace/{name}/notes.md", "# Notes\n\n- a custom section\n")
    return _entry("workspace file outside README/ram/log/feedback", name, [("WSP004", name)])


def _long_readme(files: BrainFiles, name: str) -> dict:
    files.append(f"workspace/{name}/README.md",
                 "".join(f"- extra line {i}\n" for i in range(6)))
    return _entry("workspace README over 10 lines", name, [("WSP005", name)])


def _bad_log(files: BrainFiles, name: str) -> dict:
    files.append(f"workspace/{name}/log.md", "decided to go with B, see chat\n")
    return _entry("malformed decision line in log.md", name, [("WSP007", name)])


def _no_archive(files: BrainFiles, name: str) -> dict:
    readme = f"workspace/{name}/README.md"
    files.put(readme, re.sub(r"(?m)^archive: .*\n", "", files.text(readme)))
    return _entry("workspace README without an archive value", name, [("WSP008", name)])


@plant("feedback-read", stage="files", spec="§5", rules=("WSP009",),
       after=("workspace-lifecycle", "workspace-files"),
       plants="a main-chain transcript reading a live workspace's feedback.md in its sprint")
def feedback_read(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """WSP009: the first transcript ending by the last decision reads feedback.md."""
    files = ctx.files
    live = [(max(days), name) for name in files.folders("workspace")
            if (days := workspace_decisions(files, name))]
    if not live:
        return []
    last, workspace = max(live)
    for path in files.glob("claude/projects/*/*.jsonl"):
        final = json.loads(files.text(path).splitlines()[-1])
        stamp = final.get("timestamp", "")
        if not stamp or stamp[:10] > last.isoformat() or final.get("isSidechain"):
            continue
        line = {"type": "assistant", "sessionId": final.get("sessionId"), "timestamp": stamp,
                "cwd": final.get("cwd"), "uuid": "plant-feedback-read", "isSidechain": False,
                "message": {"id": "msg_plant_feedback_read", "type": "message",
                            "role": "assistant", "content": [{
                                "type": "tool_use", "id": "toolu_plant_feedback_read",
                                "name": "Read", "input": {
                                    "file_path": f"/home/dev/brain/workspace/{workspace}/"
                                                 "feedback.md"}}]}}
        files.append(path, json.dumps(line, ensure_ascii=False) + "\n")
        return [_entry("feedback.md read during the sprint (needs the transcripts: --db)",
                       workspace, [("WSP009", workspace)])]
    return []


def _first_coded_stop(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if (event := json.loads(line)).get("event")
                 == "stop" and event.get("name") in CODED_STOPS), None)


@plant("stop-code-mismatch", stage="files", spec="§6.2", rules=("CIR001",),
       plants="a coded stop whose code is another stop's")
def stop_code_mismatch(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CIR001: the first coded stop of the first journal carries another stop's code."""
    journals = ctx.files.glob("circuits/*.jsonl")
    if not journals:
        return []
    lines = ctx.files.text(journals[0]).splitlines()
    i = _first_coded_stop(lines)
    if i is None:
        return []
    event = json.loads(lines[i])
    event["code"] = 23 if event["name"] != "references" else 15
    lines[i] = json.dumps(event, ensure_ascii=False)
    ctx.files.put(journals[0], "\n".join(lines) + "\n")
    return [_entry(f"stop {event['name']} written with code {event['code']}",
                   event["ticket"], [("CIR001", event["ticket"])])]


@plant("code-before-tests", stage="files", spec="§6.1", rules=("CIR002",),
       after=("stop-code-mismatch",),
       plants="a developer step 2.3 on a component no testwriter wrote tests for")
def code_before_tests(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CIR002: in the last journal, a step 2.3 repeated on a component named ``hotfix``."""
    journals = ctx.files.glob("circuits/*.jsonl")
    if not journals or _first_coded_stop(ctx.files.text(journals[0]).splitlines()) is None:
        return []  # planted beside CIR001, as it always was
    path = journals[-1]
    lines = ctx.files.text(path).splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event.get("event") == "step" and event.get("step") == "2.3":
            rogue = {**event, "component": "hotfix"}
            lines.insert(i + 1, json.dumps(rogue, ensure_ascii=False))
            ctx.files.put(path, "\n".join(lines) + "\n")
            return [_entry("developer step 2.3 on a component without tests (2.1) first",
                           event["ticket"], [("CIR002", event["ticket"])])]
    return []
