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


def test_readme_examples_run_on_the_demo_brain(demo, tmp_path):
    """The README's 'own brain' commands, run as written but on the demo brain and a temp db."""
    import re
    import shlex

    from click.testing import CliRunner

    from brainlab.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = re.findall(r"^\.venv/bin/brainlab (.+?)(?:\s+#.*)?$", readme, flags=re.M)
    assert len(lines) >= 3
    db = tmp_path / "readme.duckdb"
    for line in lines:
        args = [str(demo["root"]) if a == "~/brain" else a for a in shlex.split(line)]
        result = CliRunner().invoke(main, [*args, "--db", str(db)])
        assert result.exit_code == 0, (line, result.output)
    assert "2026-W48" in result.output  # the last example prints the weekly figures


def test_compliance_rule_table_is_up_to_date():
    text = (ROOT / "docs" / "compliance.md").read_text(encoding="utf-8")
    assert text == docgen.with_rule_table(text), "run: python -m brainlab.docgen"
