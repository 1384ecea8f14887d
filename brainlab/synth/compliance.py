"""Protocol-compliance plants (issue 14): one breach per rule, and a lifecycle kept elsewhere.

Runs after every other writer, editing the files they wrote as a careless agent would: a
claim with an unknown type, a closed claim without its metabolism log, a log whose claim was
never written, a boot file and a stable domain kept by the broker, workspace files outside
the spec, a stop whose code disagrees with its name. Workspaces past their lifecycle are
archived the way the coach-scribe would (SPEC §5), except the planted ones, so ``brainlab
check`` finds exactly the breaches listed in ``synth_manifest.json`` (key ``violations``).
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, timedelta
from pathlib import Path

from brainlab.spec.stops import CODED_STOPS
from brainlab.synth import boot_close_plants, mode_plants
from brainlab.synth.model import SynthOptions, SynthSession

UNKNOWN_TYPE = "hotfix"  # not a SPEC §2.2 type


def plant(out_dir: Path, sessions: list[SynthSession], options: SynthOptions,
          sprint_plan: list[dict], project: str) -> list[dict]:
    """Plant one breach per compliance rule; return manifest entries with their violations."""
    out = Path(out_dir)
    planted = [*_claims(out, sessions), *_broker(out, sprint_plan, project, sessions)]
    planted += _workspaces(out, options)
    planted.append(_feedback_read(out))
    planted += _circuit_stop(out)
    planted += boot_close_plants.plant(out, sessions)  # transcript rules BOT, CLO003+, WSP010+
    planted += mode_plants.plant_transcripts(out, sessions)  # MOD, BUD, SES002
    return [p for p in planted if p]


def _entry(effect: str, where: str, violations: list[tuple[str, str]]) -> dict:
    return {"effect": f"compliance: {effect}", "where": where,
            "violations": [{"rule": r, "subject": s} for r, s in violations]}


def _claims(out: Path, sessions: list[SynthSession]) -> list[dict]:
    """SES001 (claim type unknown), CLO001 (closed claim, no log), CLO002 (log, no claim)."""
    n = len(sessions)
    typed, unclaimed, before_ghost = sessions[n // 4], sessions[n // 2], sessions[3 * n // 4]
    path = out / "claims" / f"{typed.sess_id}.yml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"(?m)^type: .*$", f"type: {UNKNOWN_TYPE}", text, count=1),
                    encoding="utf-8")
    (out / "claims" / f"{unclaimed.sess_id}.yml").unlink()
    ghost = f"sess-{before_ghost.started_at:%Y%m%d}-2355-work-nolog"
    opened = before_ghost.started_at.replace(hour=23, minute=55)
    (out / "claims" / f"{ghost}.yml").write_text(
        f"sess_id: {ghost}\ntype: work\nscope: projets/\nagent: helloWorld\nstatus: closed\n"
        f'opened_at: "{opened:%Y-%m-%dT%H:%M}"\n'
        f'closed_at: "{opened + timedelta(minutes=4):%Y-%m-%dT%H:%M}"\n', encoding="utf-8")
    return [
        _entry("claim with a type SPEC §2.2 does not know", typed.sess_id,
               [("SES001", typed.sess_id)]),
        _entry("claim closed without a metabolism log", ghost, [("CLO001", ghost)]),
        _entry("metabolism log whose claim file is missing", unclaimed.sess_id,
               [("CLO002", unclaimed.sess_id)]),
    ]


def _broker_file(out: Path, sprint: dict) -> Path:
    return out / "progression" / "broker" / f"{sprint['started_at']:%Y-%m-%d}-{sprint['sprint']}.md"


def _broker(out: Path, plan: list[dict], project: str,
            sessions: list[SynthSession]) -> list[dict]:
    """The broker's own breaches: >2 sources, unreferenced loads, a boot file, a kept stable file."""
    too_many, unreferenced = [], []
    for sprint in plan:
        if sprint["project"] != project:
            continue
        for agent in sprint["agents"]:
            refs = {r["path"] for r in agent["referenced"]}
            subject = f"{sprint['sprint']}/{agent['agent']}"
            if len(agent["loaded"]) > 2:
                too_many.append(("BRK001", subject))
            unreferenced += [("BRK004", subject) for p in agent["loaded"] if p not in refs]
    entries = [
        _entry("the broker loads a third source 'just in case' in the four-file domain",
               "billing sprints", too_many),
        _entry("the broker loads a source 'just in case' that the agent never references",
               "sprints of other domains", unreferenced),
    ]
    booted = {s.sess_id for s in sessions  # sessions whose type has a boot context file
              if (out / "contexts" / f"session-{s.type}.yml").exists()}
    candidates = [s for s in plan if s["project"] == project and s["released"]
                  and s["session"] in booted and not any(a["open_todos"] for a in s["agents"])]
    if len(candidates) < 2:  # a very short brain: no sprint to plant these in
        return entries
    boot, kept = candidates[0], candidates[1]
    path = _broker_file(out, boot)
    text = path.read_text(encoding="utf-8")
    boot_file = "KERNEL.md"  # layer L0 of every session context
    chosen = min(boot["agents"], key=lambda a: len(a["loaded"]))
    agent = chosen["agent"]
    text = re.sub(rf"(?m)^(  {agent} → \[)", rf'\1"{boot_file}", ', text, count=1)
    text = text.replace(f'"{boot_file}", ]', f'"{boot_file}"]')
    path.write_text(text, encoding="utf-8")
    subject = f"{boot['sprint']}/{agent}"
    also = [("BRK001", subject)] if len(chosen["loaded"]) >= 2 else []
    entries.append(_entry("the broker reloads a boot file (KERNEL.md, layer L0)", subject,
                          [("BRK002", subject), ("BRK004", subject), *also]))
    path = _broker_file(out, kept)
    text = path.read_text(encoding="utf-8")
    released = re.search(r'LIBÉRER : \[(.*)\]', text).group(1)
    first = released.split(",")[0].strip()
    rest = ", ".join(p.strip() for p in released.split(",")[1:] if p.strip())
    text = text.replace(f"LIBÉRER : [{released}]", f"LIBÉRER : [{rest}]")
    text = re.sub(r"GARDER  : \[(.*)\]",
                  lambda m: f"GARDER  : [{', '.join(filter(None, [m.group(1), first]))}]", text)
    path.write_text(text, encoding="utf-8")
    entries.append(_entry("the broker keeps a file of a stable domain (no open to-do)",
                          kept["sprint"], [("BRK003", kept["sprint"])]))
    return entries


def _workspace_dates(folder: Path) -> tuple[date | None, str | None]:
    decisions = [line[:10] for line in (folder / "log.md").read_text(encoding="utf-8")
                 .splitlines() if re.match(r"\d{4}-\d{2}-\d{2}", line)]
    archive = re.search(r"(?m)^archive: (\S+)", (folder / "README.md").read_text("utf-8"))
    return (date.fromisoformat(max(decisions)) if decisions else None,
            archive.group(1) if archive else None)


def _workspaces(out: Path, options: SynthOptions) -> list[dict]:
    """Apply SPEC §5 lifecycles as of the last day, but leave one breach of each rule."""
    folders = sorted(p for p in (out / "workspace").iterdir() if p.is_dir())
    expired: dict[str, list[Path]] = {"auto": [], "keep": [], "30d": []}
    # judged one day late, so a check at the brain's last timestamp never sees a borderline one
    for folder in folders:
        last, archive = _workspace_dates(folder)
        retention = 30 if archive == "30d" else 0
        if last and archive in expired and last + timedelta(days=8 + retention) <= options.end \
                + timedelta(days=1):
            expired[archive].append(folder)
    keep_planted = next((f for f in expired["keep"] if (f / "ram.md").read_text(
        encoding="utf-8").count("\n") > 52), expired["keep"][0] if expired["keep"] else None)
    planted = {"auto": expired["auto"][:1], "30d": expired["30d"][:1],
               "keep": [keep_planted] if keep_planted else []}
    for archive, found in expired.items():
        for folder in found:
            if folder in planted[archive]:
                continue
            if archive == "keep":  # the human decided: keep it for good
                readme = folder / "README.md"
                readme.write_text(readme.read_text("utf-8").replace(
                    "archive: keep", "archive: permanent"), encoding="utf-8")
            else:  # archived to handoffs/ by the coach-scribe, then deleted
                shutil.rmtree(folder)
    rules = {"auto": "WSP001", "keep": "WSP002", "30d": "WSP003"}
    entries = [_entry(f"workspace past its lifecycle (archive: {a})", f.name,
                      [(rules[a], f.name)]) for a, fs in planted.items() for f in fs]
    live = [f for f in folders if f.exists() and f not in sum(planted.values(), [])][-4:]
    for folder, plant_one in zip(live, (_custom_file, _long_readme, _bad_log, _no_archive),
                                 strict=False):  # a short brain has fewer live workspaces
        entries.append(plant_one(folder))
    return entries


def _custom_file(folder: Path) -> dict:
    (folder / "notes.md").write_text("# Notes\n\n- a custom section\n", encoding="utf-8")
    return _entry("workspace file outside README/ram/log/feedback", folder.name,
                  [("WSP004", folder.name)])


def _long_readme(folder: Path) -> dict:
    readme = folder / "README.md"
    readme.write_text(readme.read_text("utf-8") + "".join(
        f"- extra line {i}\n" for i in range(6)), encoding="utf-8")
    return _entry("workspace README over 10 lines", folder.name, [("WSP005", folder.name)])


def _bad_log(folder: Path) -> dict:
    with open(folder / "log.md", "a", encoding="utf-8") as handle:
        handle.write("decided to go with B, see chat\n")
    return _entry("malformed decision line in log.md", folder.name, [("WSP007", folder.name)])


def _no_archive(folder: Path) -> dict:
    readme = folder / "README.md"
    readme.write_text(re.sub(r"(?m)^archive: .*\n", "", readme.read_text("utf-8")),
                      encoding="utf-8")
    return _entry("workspace README without an archive value", folder.name,
                  [("WSP008", folder.name)])


def _feedback_read(out: Path) -> dict:
    """WSP009: a main-chain transcript reads a live workspace's feedback.md during its sprint."""
    live = []
    for folder in sorted(p for p in (out / "workspace").iterdir() if p.is_dir()):
        last, _archive = _workspace_dates(folder)
        if last:
            live.append((last, folder.name))
    if not live:
        return {}
    last, workspace = max(live)
    for path in sorted((out / "claude" / "projects").glob("*/*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        final = json.loads(lines[-1])
        stamp = final.get("timestamp", "")
        if not stamp or date.fromisoformat(stamp[:10]) > last or final.get("isSidechain"):
            continue
        line = {"type": "assistant", "sessionId": final.get("sessionId"), "timestamp": stamp,
                "cwd": final.get("cwd"), "uuid": "plant-feedback-read", "isSidechain": False,
                "message": {"id": "msg_plant_feedback_read", "type": "message",
                            "role": "assistant", "content": [{
                                "type": "tool_use", "id": "toolu_plant_feedback_read",
                                "name": "Read", "input": {
                                    "file_path": f"/home/dev/brain/workspace/{workspace}/"
                                                 "feedback.md"}}]}}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        return _entry("feedback.md read during the sprint (needs the transcripts: --db)",
                      workspace, [("WSP009", workspace)])
    return {}


def _circuit_stop(out: Path) -> list[dict]:
    """CIR001: the first coded stop of the first journal carries another stop's code."""
    journals = sorted((out / "circuits").glob("*.jsonl"))
    if not journals:
        return []
    path = journals[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event.get("event") == "stop" and event.get("name") in CODED_STOPS:
            event["code"] = 23 if event["name"] != "references" else 15
            lines[i] = json.dumps(event, ensure_ascii=False)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return [_entry(f"stop {event['name']} written with code {event['code']}",
                           event["ticket"], [("CIR001", event["ticket"])]),
                    _code_before_tests(journals[-1])]
    return []


def _code_before_tests(path: Path) -> dict:
    """CIR002: a ticket's developer codes a component no testwriter wrote tests for first."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event.get("event") == "step" and event.get("step") == "2.3":
            rogue = {**event, "component": "hotfix"}
            lines.insert(i + 1, json.dumps(rogue, ensure_ascii=False))
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return _entry("developer step 2.3 on a component without tests (2.1) first",
                          event["ticket"], [("CIR002", event["ticket"])])
    return {}
