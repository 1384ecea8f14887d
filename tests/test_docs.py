"""Docs stay true: command reference generated and fresh, every command documented and helped."""

from pathlib import Path

from brainlab import docgen

ROOT = Path(__file__).resolve().parents[1]


def test_cli_md_is_up_to_date():
    on_disk = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert on_disk == docgen.render(), "run: python -m brainlab.docgen"


def test_architecture_module_table_is_up_to_date():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert text == docgen.with_module_table(text), "run: python -m brainlab.docgen"
    assert "| `brainlab/store/schema.py` |" in text
    undocumented = [line for line in docgen.module_table().splitlines() if line.endswith("|  |")]
    assert undocumented == [], "modules without a docstring"


def test_every_command_has_help_and_a_section():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for full, command in docgen.commands():
        assert (command.help or "").strip(), f"{full} has no help text"
        assert f"## `{full}`" in text


def test_readme_names_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in ci


def test_readme_examples_run_on_the_demo_brain(demo, tmp_path, monkeypatch):
    """The README's 'own brain' commands, run as written but on the demo brain and a temp db;
    the output the README shows is what they print (80 columns)."""
    import re
    import shlex

    from click.testing import CliRunner

    from brainlab.cli import main
    from brainlab.cli import support as cli

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Using it on your own brain", 1)[1].split("\n## ", 1)[0]
    lines = re.findall(r"^\.venv/bin/brainlab (.+?)(?:\s+#.*)?$", section, flags=re.M)
    commands = {line.split()[0] if line.split()[0] != "ingest" else " ".join(line.split()[:2])
                for line in lines}
    assert {"ingest brain", "ingest claude", "usage", "report", "lab"} <= commands
    db = tmp_path / "readme.duckdb"
    places = {"~/brain": str(demo["root"]), "~/.claude/projects": str(demo["root"] / "claude")}
    monkeypatch.chdir(tmp_path)  # `report weekly` writes reports/ here
    old_width = cli.out._width
    cli.out.width = 80
    printed = []
    try:
        for line in lines:
            args = [places.get(a, a) for a in shlex.split(line)]
            if args[0] == "lab":
                args.append("--print-command")  # show the command, do not start JupyterLab
            result = CliRunner().invoke(main, [*args, "--db", str(db)])
            assert result.exit_code == 0, (line, result.output)
            printed += [ln.rstrip() for ln in result.output.splitlines()]
    finally:
        cli.out._width = old_width
    assert any("2026-W48" in ln for ln in printed)  # sql prints the weekly figures
    assert "jupyterlab" in printed[-1]
    shown, fence = [], None
    for ln in section.splitlines():
        if ln.startswith("```"):
            fence = None if fence is not None else ln[3:]
        elif fence == "" and re.search(r"\d{1,3},\d{3}|\$\d", ln):  # output blocks' figures
            shown.append(ln.rstrip())
    assert len(shown) >= 6
    assert [ln for ln in shown if ln.replace("data/brainlab.duckdb", str(db)) not in printed] == []


def test_notebooks_md_counts_the_notebooks():
    import re

    words = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
    text = (ROOT / "docs" / "notebooks.md").read_text(encoding="utf-8")
    said = re.search(r"(\w+) numbered notebooks in `notebooks/`", text)
    assert said, "docs/notebooks.md no longer says how many notebooks there are"
    numbered = [p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")]
    assert words[said[1].lower()] == len(numbered)


def test_compliance_rule_table_is_up_to_date():
    text = (ROOT / "docs" / "compliance.md").read_text(encoding="utf-8")
    assert text == docgen.with_rule_table(text), "run: python -m brainlab.docgen"


def test_glossary_is_generated_from_spec_and_names_every_code():
    """docs/glossary.md (issue 44 item 2): fresh, and every stop, rule, policy and rule set
    the notebooks and reports print is defined there, stops and rules with their names."""
    from brainlab.rules.catalogue import RULES
    from brainlab.sim.policies import REGISTRY
    from brainlab.spec.regulator import VARIANTS
    from brainlab.spec.stops import STOP_CODES

    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert text == docgen.glossary(), "run: python -m brainlab.docgen"
    # each name with its own anchor, which the notebooks link to (tests/test_notebook_names.py)
    assert ('| <a id="stop-sans-livraison"></a>15 | `sans-livraison` | a developer session '
            "changed no file") in text
    assert all(f'| <a id="rule-{r.id}"></a>`{r.id}` | `{r.name}` |' in text for r in RULES)
    own = [name for name, cls in REGISTRY.items() if cls.__module__.startswith("brainlab.")]
    assert all(f'<a id="policy-{name}"></a>`{name}` |' in text for name in own)
    assert all(f'<a id="rules-{name}"></a>`{name}` |' in text for name in VARIANTS)
    assert all(f"| `{name}` |" in text for name in STOP_CODES)
    # a policy a test or notebook registers (tests/test_broker_replay.py) is not brainlab's
    assert "`ab` |" not in text
    for name in ("greedy-domain", "on-demand", "history", "recorded", "strict", "lenient"):
        assert f"></a>`{name}` |" in text
    for section in docgen.SECTIONS.values():
        assert f'<a id="{section}"></a>' in text
