"""The plant registry (issue 23 item 6): named streams, one writer, every plant in the manifest."""

import json
from pathlib import Path

import pytest

from brainlab.synth import SynthOptions, files, registry, synthesize
from brainlab.synth.files import AREA_SEEDS, BrainFiles, stream

DUMMY = "aaa-dummy"  # sorts first: it runs before every other plant of its stage


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def dummy_plant(ctx, rng):
    """Draws a lot from its own stream and writes its own file."""
    draws = [rng.random() for _ in range(1_000)]
    ctx.files.put("dummy/draws.txt", "".join(f"{d:.6f}\n" for d in draws))
    return [{"effect": "dummy", "where": "dummy/draws.txt"}]


@pytest.fixture
def dummy_registered():
    registry.plant(DUMMY, stage="files", plants="a test file", spec="none")(dummy_plant)
    try:
        yield
    finally:
        registry.unregister(DUMMY)


def test_an_extra_plant_leaves_every_other_output_byte_identical(tmp_path, request):
    options = SynthOptions(weeks=2, seed=3)
    before = tree(synthesize(tmp_path / "a", options).out_dir)
    request.getfixturevalue("dummy_registered")
    after = tree(synthesize(tmp_path / "b", options).out_dir)
    manifest_a = json.loads(before.pop("synth_manifest.json"))
    manifest_b = json.loads(after.pop("synth_manifest.json"))
    assert after.pop("dummy/draws.txt")
    assert after == before  # every other file, byte for byte
    dummy = [p for p in manifest_b["planted"] if p.get("plant") == DUMMY]
    assert len(dummy) == 1
    manifest_b["planted"].remove(dummy[0])
    assert manifest_b["plants"].pop(DUMMY) == {"entries": 1, "violations": 0}
    assert manifest_b == manifest_a


def test_the_manifest_lists_every_plant_with_what_it_planted(demo):
    manifest = json.loads((demo["root"] / "synth_manifest.json").read_text())
    # every plant of the default set (the demo's), none of those that run only when named
    assert set(manifest["plants"]) == {n for n, p in registry.PLANTS.items() if p.default}
    for name, counts in manifest["plants"].items():
        mine = [p for p in manifest["planted"] if p.get("plant") == name]
        assert counts == {"entries": len(mine),
                          "violations": sum(len(p.get("violations", [])) for p in mine)}
        assert counts["entries"] > 0, f"{name} planted nothing on the demo brain"


def test_no_file_is_written_twice_and_nothing_bypasses_the_writer(tmp_path, monkeypatch):
    written, texts = [], {}
    real = files.write_file

    def spy(path, text):
        relative = path.relative_to(tmp_path / "brain").as_posix()
        written.append(relative)
        texts[relative] = text.encode("utf-8")
        real(path, text)

    monkeypatch.setattr(files, "write_file", spy)
    manifest = synthesize(tmp_path / "brain", SynthOptions(weeks=2, seed=3))
    assert len(written) == len(set(written)) == manifest.files_written
    # no file written another way, and none changed after the writer wrote it
    assert tree(tmp_path / "brain") == texts


def test_every_manifest_violation_comes_from_a_registered_plant(demo):
    from brainlab.rules.catalogue import RULES

    declared = {rule for p in registry.PLANTS.values() for rule in p.rules}
    planted = {v["rule"] for p in demo["manifest"].planted for v in p.get("violations", [])}
    assert planted <= declared  # a plant that breaks a rule says so
    assert {r.id for r in RULES} <= declared  # every compliance rule has its plant
    for p in registry.PLANTS.values():
        assert p.plants and p.spec and p.stage in registry.STAGES, p.name


def test_streams_are_named_and_stable():
    assert stream(7, "mode-transcripts").random() == stream(7, "mode-transcripts").random()
    assert stream(7, "mode-transcripts").random() != stream(7, "other").random()
    assert stream(7, "mode-transcripts").random() != stream(8, "mode-transcripts").random()
    # the render areas keep the seeds the demo's figures were drawn from
    assert stream(7, "transcripts").random() == __import__("random").Random(7 * 7919 + 3).random()
    assert set(AREA_SEEDS) >= {"brain", "transcripts", "telemetry"}
    assert not set(AREA_SEEDS) & set(registry.PLANTS)


def test_plants_run_by_name_after_what_they_wait_for():
    names = [p.name for p in registry.ordered("files")]
    assert names.index("workspace-files") > names.index("workspace-lifecycle")
    assert names.index("coach-scribe-early") > names.index("feedback-read")
    assert names.index("mode-transcripts") > names.index("feedback-read")
    plan = [p.name for p in registry.ordered("plan")]
    assert plan.index("audit") > max(plan.index("fit-modes"), plan.index("xss-note"))


def test_plants_waiting_on_each_other_and_duplicates_are_refused():
    def nothing(ctx, rng):
        return []

    registry.plant("zz-a", stage="files", plants="x", spec="x", after=("zz-b",))(nothing)
    registry.plant("zz-b", stage="files", plants="x", spec="x", after=("zz-a",))(nothing)
    try:
        with pytest.raises(ValueError, match="wait on each other"):
            registry.ordered("files")
        with pytest.raises(ValueError, match="registered twice"):
            registry.plant("zz-a", stage="files", plants="x", spec="x")(nothing)
    finally:
        registry.unregister("zz-a")
        registry.unregister("zz-b")
    with pytest.raises(ValueError, match="stage"):
        registry.plant("zz-c", stage="later", plants="x", spec="x")


def test_brain_files_glob_sorts_like_pathlib(tmp_path):
    brain = BrainFiles()
    for relative in ("a-b/x.jsonl", "a/y.jsonl", "a/b/z.jsonl", "c.txt"):
        brain.put(relative, "line\n")
    brain.write(tmp_path)
    assert brain.glob("*/*.jsonl") == [p.relative_to(tmp_path).as_posix()
                                       for p in sorted(tmp_path.glob("*/*.jsonl"))]
    assert brain.under("a", ".jsonl") == ["a/b/z.jsonl", "a/y.jsonl"]
    brain.remove_tree("a")
    assert list(brain) == ["a-b/x.jsonl", "c.txt"]


def test_plants_are_chosen_by_name_none_or_the_default_set(tmp_path):
    """`synth --plants` (issue 43 item 2): none, one by name, a default=False plant only when
    named, the default set otherwise; the plants not chosen plant nothing."""
    registry.plant(DUMMY, stage="files", plants="a test file", spec="none",
                   default=False)(dummy_plant)
    try:
        default = synthesize(tmp_path / "d", SynthOptions(weeks=2, seed=3))
        assert "dummy" not in {e["effect"] for e in default.planted}
        assert not (tmp_path / "d" / "dummy").exists()
        named = synthesize(tmp_path / "n", SynthOptions(weeks=2, seed=3, plants=(DUMMY,)))
        assert {e["plant"] for e in named.planted if "plant" in e} == {DUMMY}
        assert (tmp_path / "n" / "dummy" / "draws.txt").exists()
        none = synthesize(tmp_path / "0", SynthOptions(weeks=2, seed=3, plants=()))
        assert not [e for e in none.planted if "plant" in e]
        every = synthesize(tmp_path / "a", SynthOptions(weeks=2, seed=3, plants=("all",)))
        ran = {e["plant"] for e in every.planted if "plant" in e}
        assert DUMMY in ran and ran >= {e["plant"] for e in default.planted if "plant" in e}
    finally:
        registry.unregister(DUMMY)


def test_an_unknown_plant_is_one_error_line_and_keeps_the_old_brain(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "brain"
    synthesize(out, SynthOptions(weeks=1, seed=1))
    before = tree(out)
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "synth", "--out", str(out),
                           "--weeks", "1", "--plants", "no-such-plant"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: --plants: no plant named no-such-plant")
    assert "Traceback" not in done.stderr
    assert tree(out) == before
