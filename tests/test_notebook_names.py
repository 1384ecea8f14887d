"""Every name defined where it is first used, every table through the formatter (issue 44 items 2, 5).

Reads the notebooks executed on the demo by tests/notebook_runs.py (no execution of its own).

Names: the glossary's terms (``brainlab.docgen.glossary_terms``: signals, breath alerts,
policies, rule sets, stops, compliance rules, all from spec/ and the policies' registry). A term
is *used* where a reader meets it, in cell order: in a markdown cell (a name with a hyphen or an
underscore, a rule code, anywhere; a plain word such as ``strict`` or ``noise`` only as code,
`` `strict` ``), or in what a cell shows (printed text, tables, the chart's drawn labels: the
names that cannot be words; a plain word as a whole table cell or chart value). Its first use
must be

- in markdown, a link in that cell to its glossary anchor or section
  (``[`strict`](../docs/glossary.md#rules-strict)``, ``[stops](../docs/glossary.md#stops)``) or
  a definition right after it (`` `strict` = ... ``, `` `on-demand` — ... ``, ``(...)``, ``:``);
- in an output, after a markdown cell (the latest above it with a glossary link) linking to its
  anchor or its section (``glossary.md#stops``).

A code never shows without its name: a chart axis, legend or facet holds no bare stop code
(``15``) or rule code (``BRK004``), and printed text names each rule code it shows.

Tables: no raw pandas table in any output (``class="dataframe"``, or a DataFrame's text repr
as the only view of an output): every table goes through ``brainlab.viz.frames.table``.
"""

from __future__ import annotations

import html
import re

import pytest
from notebook_runs import NOTEBOOK_DIR

from brainlab.docgen import SECTIONS, Term, glossary_terms
from brainlab.viz.render import SVG_MIME, VEGALITE_MIME

NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
TERMS = glossary_terms()
RULE_CODE = re.compile(r"\b[A-Z]{3}\d{3}\b")
DEFINED_AFTER = re.compile(r"^\**`?\**\s*(—|–|-\s|=|:|\()")
GLOSSARY_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*glossary\.md[^)]*)\)")


def _distinctive(term: Term) -> bool:
    """A name that cannot be an English word: matched in prose and outputs, not only as code."""
    return "-" in term.name or "_" in term.name


def _patterns(term: Term) -> list[re.Pattern]:
    names = [term.name] + ([term.code] if term.kind == "rule" else [])
    found = [re.compile(rf"`{re.escape(n)}`") for n in names]
    found += [re.compile(rf"(?<![\w`-]){re.escape(n)}(?![\w`-])") for n in names
              if _distinctive(term) or n == term.code]
    return found


def _links(markdown: str) -> set[str]:
    """The glossary anchors a markdown cell links to ('' for the page itself)."""
    return {target.split("#", 1)[1] if "#" in target else ""
            for _text, target in GLOSSARY_LINK.findall(markdown)}


def _markdown_use_ok(term: Term, markdown: str, span: tuple[int, int]) -> bool:
    """Linked (the cell links the term's anchor or its section) or defined right after it."""
    if {term.anchor, SECTIONS[term.kind]} & _links(markdown):
        return True
    return bool(DEFINED_AFTER.match(markdown[span[1]:]))


def _svg_text(svg: str) -> str:
    return " ".join(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg))


def _shown(output) -> str:
    """What a reader sees of one output, as text (a chart: its drawn labels and title)."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    if SVG_MIME in data:
        return _svg_text(str(data[SVG_MIME]))
    for mime in ("text/html", "text/markdown", "text/plain"):
        if mime in data:
            text = str(data[mime])
            return html.unescape(re.sub(r"<[^>]+>", " ", text)) if mime == "text/html" else text
    return ""


def _values(output) -> set[str]:
    """The whole values of a table's cells and of a chart's axes, legends and facets: a plain
    word there (``strict`` in a rule-set column, ``noise`` in a legend) is the name."""
    data = output.get("data", {})
    if VEGALITE_MIME in data:
        return {str(v).strip() for _field, v in _encoded_values(data[VEGALITE_MIME])}
    page = str(data.get("text/html", ""))
    return {html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", page, re.S)}


def first_uses(nb) -> dict[str, tuple[int, str, str | None]]:
    """Each term's first use: (cell index, where, problem or None)."""
    first: dict[str, tuple[int, str, str | None]] = {}
    last_links: set[str] = set()
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            source = cell.source
            for term in TERMS:
                if term.anchor in first:
                    continue
                hits = [m for p in _patterns(term) for m in p.finditer(source)]
                if hits:
                    hit = min(hits, key=lambda m: m.start())
                    ok = _markdown_use_ok(term, source, hit.span())
                    first[term.anchor] = (index, "markdown", None if ok else (
                        f"`{term.name}` first used in markdown cell {index} without a link to "
                        f"glossary.md#{term.anchor} or a definition: "
                        f"...{source[max(0, hit.start() - 40):hit.end() + 40]!r}..."))
            last_links = _links(source) or last_links
            continue
        if cell.cell_type != "code":
            continue
        shown = "\n".join(_shown(o) for o in cell.get("outputs", []))
        values = {v for o in cell.get("outputs", []) for v in _values(o)}
        for term in TERMS:
            if term.anchor in first:
                continue
            named = {term.name, f"{term.code} {term.name}"}
            if (_distinctive(term) or term.kind == "rule") and any(
                    p.search(shown) for p in _patterns(term)) or named & values:
                ok = bool({term.anchor, SECTIONS[term.kind]} & last_links)
                first[term.anchor] = (index, "output", None if ok else (
                    f"`{term.name}` first shown by code cell {index} before any markdown "
                    f"defines it (link glossary.md#{term.anchor} or #{SECTIONS[term.kind]} "
                    "in the markdown above it)"))
    return first


def _encoded_values(spec: dict) -> list:
    """Values of every field a chart draws on an axis, a legend or a facet."""
    found, fields = [], set()

    def walk(node):
        if isinstance(node, dict):
            enc = node.get("encoding", {})
            for channel in ("x", "y", "color", "shape", "row", "column", "facet", "detail",
                            "text", "strokeDash"):
                field = enc.get(channel, {}).get("field") if isinstance(
                    enc.get(channel), dict) else None
                if field:
                    fields.add(field)
            facet = node.get("facet")
            if isinstance(facet, dict) and facet.get("field"):
                fields.add(facet["field"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    rows = [row for data in spec.get("datasets", {}).values() for row in data]
    rows += spec.get("data", {}).get("values", []) if isinstance(spec.get("data"), dict) else []
    for row in rows:
        found += [(field, row[field]) for field in fields if field in row]
    return found


STOP_CODE_VALUES = {t.code for t in TERMS if t.kind == "stop" and t.code}


def bare_codes(nb) -> list[str]:
    """Codes shown without their names: in chart encodings, and rule codes in printed text."""
    problems = []
    names = {t.code: t.name for t in TERMS if t.kind == "rule"}
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            spec = output.get("data", {}).get(VEGALITE_MIME)
            if spec:
                for field, value in _encoded_values(spec):
                    text = str(value).strip()
                    stop_field = "code" in field.lower() or "stop" in field.lower()
                    if RULE_CODE.fullmatch(text) or (stop_field and text in STOP_CODE_VALUES):
                        problems.append(f"cell {index}: chart field {field!r} shows code "
                                        f"{text!r} without its name")
                continue
            shown = _shown(output)
            for code in set(RULE_CODE.findall(shown)):
                if code in names and names[code] not in shown:
                    problems.append(f"cell {index}: {code} shown without its name "
                                    f"{names[code]}")
    return sorted(set(problems))


RAW_TEXT_TABLE = re.compile(r"^\s*\S.*\n\d+\s+\S", re.M)  # a header line, then "0   value"


def raw_tables(nb) -> list[str]:
    """Outputs that show a pandas table not passed through brainlab.viz.frames.table."""
    problems = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            page = str(data.get("text/html", ""))
            if 'class="dataframe' in page:
                problems.append(f"cell {index}: a raw DataFrame (class=\"dataframe\")")
            plain = str(data.get("text/plain", ""))
            if set(data) == {"text/plain"} and ("rows x" in plain and "columns]" in plain
                                               or RAW_TEXT_TABLE.search(plain)):
                problems.append(f"cell {index}: a DataFrame's text repr: {plain[:80]!r}")
            if output.get("output_type") == "stream" and re.search(
                    r"\[\d+ rows x \d+ columns\]", output.get("text", "")):
                problems.append(f"cell {index}: a printed DataFrame")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_name_is_defined_or_linked_where_first_used(path, executed):
    nb, _records, _seconds = executed(path)
    uses = first_uses(nb)
    problems = [problem for _cell, _where, problem in uses.values() if problem]
    problems += bare_codes(nb)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_table_goes_through_the_formatter(path, executed):
    nb, _records, _seconds = executed(path)
    problems = raw_tables(nb)
    assert not problems, "\n".join(problems)


def test_the_checks_catch_an_undefined_name_a_bare_code_and_a_raw_table():
    """The checks above on a crafted notebook: each problem is found, each fix accepted."""
    import nbformat
    import pandas as pd

    def notebook(markdown: str, *outputs):
        nb = nbformat.v4.new_notebook()
        code = nbformat.v4.new_code_cell("")
        code.outputs = list(outputs)
        nb.cells = [nbformat.v4.new_markdown_cell(markdown), code]
        return nb

    def problems(nb):
        return [p for _c, _w, p in first_uses(nb).values() if p]

    printed = nbformat.v4.new_output("stream", name="stdout",
                                     text="strict: 3 tickets cut by sans-livraison\n")
    assert problems(notebook("Under the `strict` rules", printed))  # a word as code, unlinked
    assert problems(notebook("Rule set `strict` here.", printed))
    assert not problems(notebook("`strict` = two relaunches; 15 `sans-livraison` (no file)",
                                 printed))
    linked = "[`strict`](../docs/glossary.md#rules-strict), [stops](../docs/glossary.md#stops)"
    assert not problems(notebook(linked, printed))
    # a name shown first by an output, with no glossary link in the markdown above it
    assert problems(notebook("# Replay", printed)) == [
        "`sans-livraison` first shown by code cell 1 before any markdown defines it (link "
        "glossary.md#stop-sans-livraison or #stops in the markdown above it)"]
    # a plain word as a whole table cell or chart value is the name
    cells = nbformat.v4.new_output("execute_result", data={
        "text/html": "<table><tr><th>recorded</th></tr><tr><td>strict</td></tr></table>"}, execution_count=1)
    assert problems(notebook("# Replay", cells))
    assert not problems(notebook("[rule sets](../docs/glossary.md#rule-sets)", cells))
    # plain words are not names: "integration" and "noise" in prose are not the stop and alert
    words = nbformat.v4.new_output("stream", name="stdout", text="integration noise\n")
    assert not problems(notebook("review and integration; noise in the data", words))

    chart = nbformat.v4.new_output("display_data", data={VEGALITE_MIME: {
        "data": {"values": [{"code_label": "15", "stops": 3}]},
        "mark": "bar", "encoding": {"x": {"field": "code_label"}, "y": {"field": "stops"}}}})
    assert bare_codes(notebook("", chart))
    chart["data"][VEGALITE_MIME]["data"]["values"][0]["code_label"] = "15 sans-livraison"
    assert not bare_codes(notebook("", chart))
    text = nbformat.v4.new_output("stream", name="stdout", text="BRK004 fired 3 times\n")
    assert bare_codes(notebook("", text))

    frame = pd.DataFrame({"policy": ["protocol", "recorded"], "tokens": [1.5, 2.0]})
    raw = nbformat.v4.new_output("execute_result", data={
        "text/html": frame.to_html(), "text/plain": repr(frame)}, execution_count=1)
    assert raw_tables(notebook("", raw))
    plain = nbformat.v4.new_output("execute_result", data={"text/plain": repr(frame)},
                                   execution_count=1)
    assert raw_tables(notebook("", plain))
    from brainlab.viz.frames import table

    styled = nbformat.v4.new_output("execute_result", data={
        "text/html": table(frame).to_html(), "text/plain": "<Styler>"}, execution_count=1)
    assert not raw_tables(notebook("", styled))
