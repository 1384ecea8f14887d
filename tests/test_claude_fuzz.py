"""Property-based tests of the transcript parser (issue 10): generated and mutated lines.

- the typed decoder (msgspec) and the tolerant decoder (orjson, repairs) give the same rows
  and errors for any line the typed decoder accepts (both feed the one row builder, issue 23);
  the line generator draws every field of the typed line (a field added to
  brainlab/transcripts/line.py and not to the generator fails a test);
- no exception escapes a file's parse, whatever its bytes; every line ends as rows, an
  error row, or nothing (blank, ignored types);
- a good file's rows are identical with and without bad files beside it.
"""

import json
from pathlib import Path

import pytest
from claude_factory import assistant, progress, tool_use, usage, user
from conftest import built_once
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import inspect as mi

from brainlab.store import open_writer
from brainlab.transcripts import build
from brainlab.transcripts import fast as claude_fast
from brainlab.transcripts import tolerant as cc
from brainlab.transcripts.ingest import ingest_claude
from brainlab.transcripts.line import RAW_FIELDS, Line
from brainlab.transcripts.scan import FileJob, _valid_utf8_block, parse_file
from brainlab.transcripts.writer import TABLES, Writer

ODD = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                st.floats(allow_nan=False), st.text(max_size=12), st.lists(st.integers(),
                                                                            max_size=2),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
TS = st.one_of(st.just("2026-05-01T08:00:00.000Z"), st.just("2026-02-30T10:00:00Z"),
               st.just("2026-13-45T10:00:00Z"), st.just("2031-01-01T00:00:00Z"),
               st.just("2026-05-01T10:00:00+02:00"), st.text(max_size=25))
TOKENS = st.one_of(st.integers(min_value=0, max_value=10**6), ODD)


BLOCKS = [  # the early ones are drawn most (the field check below needs each drawn)
    tool_use("t7", "NotebookEdit", notebook_path="n"),
    # a tool_result block where an assistant's content has none: typed, never read there
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"text": "x"}], "is_error": True},
    tool_use("toolu_01ABCdefGHij", "Grep", pattern="sk-ant-api03-" + "x" * 300, path="/s"),
    tool_use("t1", "Bash", command="git commit -m x"), tool_use("t2", "Read", file_path="/a/b.py"),
    tool_use("t3", "Task", subagent_type="broker"), tool_use("t4", "Agent"),
    tool_use("t6", "Glob", pattern="**/*.py"),
    tool_use("t8", "Edit", file_path="w/workspace/p-s1/log.md", old_string="a",
             new_string="| choisi : x\n| choisi : y"),
    tool_use("t9", "Write", file_path="workspace/p/log.md", content="| choisi : z"),
    tool_use("t10", "MultiEdit", file_path="workspace/p/log.md",
             edits=[{"old_string": "", "new_string": "| choisi : q"}]),
    tool_use("t11", "TodoWrite", todos=[{"content": "do", "status": "pending"}, "x"]),
    tool_use("t12", "TaskCreate", subject="s"), tool_use("t13", "TaskUpdate", taskId=3,
                                                         status="completed"),
    {"type": "tool_use", "id": "t14", "name": "Write", "input": "not an object"},
    {"type": "tool_use", "id": None, "name": "TodoWrite"},
    {"type": "text", "text": "hi"}, {"type": "thinking", "thinking": "..."},
    {"type": "text", "text": "Context-broker — inhale sprint s1"},
    {"type": "text", "text": "Hors périmètre : ouvre une autre session pour ça."},
]
BROKER_ANSWER = [{"type": "text", "text": "Context-broker — inhale sprint s2\nMode: build"}]
PROMPTS = st.sampled_from(["hi", "type: build mode: sprint", "fin", "<command>x</command>", "",
                           [{"type": "text", "text": "mode: review"}], [{"type": "image"}]])
TOOL_USE_RESULTS = [None, {"agentId": "a1"}, {"agentId": "a1", "agentType": "broker"},
                    {"totalDurationMs": 5}, {"agentId": 7}, "x", ["x", {"a": 1}], 3]


@st.composite
def odd_tool(draw):
    """A tool_use block whose name, id or input has an odd type or value."""
    block = tool_use(draw(st.sampled_from(["t1", "msg_123", None, 5])),
                     draw(st.sampled_from(["Bash", "Edit", "Read", "Grep", "?", ""])))
    block[draw(st.sampled_from(["name", "id", "input"]))] = draw(ODD)
    return block


def drawn_usage(draw, tokens, clean: bool) -> dict:
    """A usage block; sometimes with the cache writes by time to live and a speed."""
    block = usage(draw(tokens), draw(tokens), draw(tokens), draw(tokens))
    if draw(st.booleans()):
        block["cache_creation"] = {"ephemeral_5m_input_tokens": draw(tokens),
                                   "ephemeral_1h_input_tokens": draw(tokens)}
    if draw(st.booleans()):
        block["speed"] = draw(st.sampled_from(["fast", "standard", ""]) if clean else ODD)
    if draw(st.booleans()):  # newer versions: advisor calls in usage.iterations (issue 45)
        entry = {"type": draw(st.sampled_from(["advisor_message", "message", None])),
                 "model": draw(st.sampled_from(["claude-opus-4-8", None])),
                 "input_tokens": draw(tokens), "output_tokens": draw(tokens),
                 "cache_creation_input_tokens": draw(tokens),
                 "cache_read_input_tokens": draw(tokens)}
        if draw(st.booleans()):
            entry["cache_creation"] = {"ephemeral_5m_input_tokens": draw(tokens),
                                       "ephemeral_1h_input_tokens": draw(tokens)}
        block["iterations"] = (draw(st.sampled_from([[entry], [{"type": "message"}, entry],
                                                     None])) if clean
                               else draw(st.one_of(st.just([entry]), ODD, st.lists(ODD, max_size=2))))
    return block


@st.composite
def lines(draw):
    """A transcript line: a real shape with some fields replaced by odd values."""
    i = draw(st.integers(0, 50))
    # half the lines keep well-typed tokens and fields: lines the fast path accepts
    clean = draw(st.booleans())
    tokens = st.integers(min_value=0, max_value=10**6) if clean else TOKENS
    kind = draw(st.sampled_from(["assistant", "user", "progress", "system", "other"]))
    ts = draw(TS)
    if kind == "assistant":
        tools = draw(st.lists(st.one_of(st.sampled_from(BLOCKS), odd_tool()), max_size=3))
        line = assistant("s", ts, f"m{i}", draw(st.sampled_from([f"r{i}", None])),
                         drawn_usage(draw, tokens, clean),
                         model=draw(st.sampled_from(["claude-opus-4-5", None, "claude-[/x]"])),
                         content=tools or None)
        if draw(st.booleans()):  # older versions' own cost (--cost-mode reported / auto)
            line["costUSD"] = draw(st.one_of(
                st.floats(min_value=0, max_value=50), st.integers(0, 3), st.just(-1.0),
                st.just(2e9)) if clean else ODD)
        if draw(st.booleans()):  # usage branches
            line["gitBranch"] = draw(st.sampled_from(["main", "", "feat/x" * 40])
                                     if clean else ODD)
        for key, values in (("attributionPlugin", ["gns-cowork", ""]),  # issue 45
                            ("attributionSkill", ["pdf", "gns-cowork:gns-bootstrap"]),
                            ("advisorModel", ["claude-opus-4-8"])):
            if draw(st.booleans()):
                line[key] = draw(st.sampled_from(values) if clean else ODD)
    elif kind == "user":
        line = user("s", ts, text=draw(PROMPTS), results=draw(st.sampled_from([None, [
            (f"t{i}", draw(st.one_of(st.text(max_size=20), st.just([{"text": "é"}]),
                                     st.just(BROKER_ANSWER), st.none())))]])),
                    tool_use_result=draw(st.sampled_from(TOOL_USE_RESULTS)),
                    agent=draw(st.sampled_from([None, "a1"])))
        if draw(st.booleans()):
            line["isMeta"] = draw(st.sampled_from([True, False, None, 1]))
        if draw(st.booleans()):  # typed or automatic prompt (issue 45)
            line["origin"] = draw(st.sampled_from([{"kind": "human"}, {"kind": "peer"}, {}])
                                  if clean else ODD)
        for block in line["message"]["content"] if results_given(line) else ():
            if draw(st.booleans()):
                block["is_error"] = draw(st.sampled_from([True, False, None, 1]))
    elif kind == "progress":
        line = progress("s", ts, "a1", "t3", f"m{i}", f"r{i}", drawn_usage(draw, tokens, clean))
        if draw(st.booleans()):
            line["gitBranch"] = draw(st.sampled_from(["main", "dev"]) if clean else ODD)
        data = line["data"]
        how = draw(st.sampled_from(["assistant", "tools", "user", "bash", "odd"]))
        if how == "tools":
            data["message"]["message"]["content"] = draw(st.one_of(
                st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=3),
                st.sampled_from([BLOCKS[i:i + 5] for i in range(0, len(BLOCKS), 5)])))
        elif how == "user":
            data["message"] = {"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}}
        elif how == "bash":
            line["data"] = {"type": "bash_progress", "output": "ok", "elapsedTimeSeconds": 2}
        elif how == "odd":
            data[draw(st.sampled_from(["agentId", "message"]))] = draw(ODD)
    elif kind == "system":
        subtype = draw(st.sampled_from(["compact_boundary", "microcompact_boundary"]))
        line = {"type": "system", "subtype": subtype, "sessionId": "s", "timestamp": ts,
                draw(st.sampled_from(["compactMetadata", "microcompactMetadata"])): {
                    "trigger": draw(ODD), "preTokens": draw(TOKENS)}}
    else:
        line = {"type": draw(ODD), "sessionId": draw(ODD), "timestamp": ts}
    for key in draw(st.lists(st.sampled_from(["message", "type", "sessionId", "usage", "cwd",
                                              "isSidechain", "requestId"]),
                             max_size=0 if clean else 2)):
        target = line["message"] if key == "usage" and isinstance(line.get("message"),
                                                                    dict) else line
        target[key] = draw(ODD)
    return json.dumps(line, ensure_ascii=draw(st.booleans())).encode()


def results_given(line: dict) -> bool:
    """Whether a user line's content is a list of tool results."""
    return isinstance(line["message"]["content"], list) and any(
        b.get("type") == "tool_result" for b in line["message"]["content"])


@st.composite
def mutated(draw):
    """A line's bytes cut, spliced, glued, nested or with bytes flipped."""
    data = bytearray(draw(lines()))
    how = draw(st.sampled_from(["cut", "flip", "glue", "insert", "nest", "bom", "same"]))
    if how == "cut" and data:
        del data[draw(st.integers(0, len(data) - 1)):]
    elif how == "flip" and data:
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    elif how == "glue":
        data += draw(lines())
    elif how == "insert":
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(st.binary(max_size=8))
    elif how == "nest":
        depth = draw(st.sampled_from([10, 1100, 5000]))
        data = bytearray(b'{"type":"user","x":' + b"[" * depth + b"]" * depth + b"}")
    elif how == "bom":
        data = b"\xef\xbb\xbf" + data
    return bytes(data).replace(b"\n", b" ")


def chunk_rows(chunk):
    return (chunk.requests, chunk.tool_calls, chunk.tool_results, chunk.agent_links,
            chunk.compactions, chunk.spans, chunk.errors, chunk.broker, chunk.marks)


@settings(max_examples=1500, deadline=None)
@given(lines())
def test_both_decoders_give_the_same_rows(raw):
    ctx = build.FileContext.of(Path("/t/projects/p/s.jsonl"))
    fast, slow = build.Chunk(), build.Chunk()
    if not claude_fast.parse_line(memoryview(raw), raw, 0, len(raw), ctx, 1, fast):
        return  # handed to the tolerant decoder, which is then the only one
    for obj in cc.load_line(raw, ctx, 1, slow):
        cc.parse_object(obj, ctx, 1, slow)
    assert chunk_rows(fast) == chunk_rows(slow)


def typed_fields(cls, prefix: str = "") -> set[str]:
    """Every field path of a Struct of the typed line, lists transparent (message.content.id).

    A Raw field counts as the type the builder decodes it to (line.RAW_FIELDS).
    """
    paths = set()
    for field in mi.type_info(cls).fields:
        path = prefix + field.encode_name
        paths.add(path)
        kind = field.type
        if isinstance(kind, mi.RawType) and (cls, field.name) in RAW_FIELDS:
            kind = mi.type_info(RAW_FIELDS[cls, field.name])
        for struct in _structs(kind):
            paths |= typed_fields(struct.cls, path + ".")
    return paths


def _structs(kind) -> list:
    if isinstance(kind, mi.StructType):
        return [kind]
    if isinstance(kind, mi.UnionType):
        return [s for t in kind.types for s in _structs(t)]
    if isinstance(kind, mi.ListType):
        return _structs(kind.item_type)
    return []


def json_fields(value, prefix: str = "") -> set[str]:
    """Every key path of a JSON value, lists transparent."""
    paths = set()
    if isinstance(value, dict):
        for key, item in value.items():
            paths.add(prefix + key)
            paths |= json_fields(item, prefix + key + ".")
    elif isinstance(value, list):
        for item in value:
            paths |= json_fields(item, prefix)
    return paths


def drawn_fields() -> set[str]:
    """The field paths the line generator draws, over a fixed set of examples."""
    seen: set[str] = set()

    @settings(max_examples=1000, derandomize=True, database=None, deadline=None)
    @given(lines())
    def collect(raw):
        seen.update(json_fields(json.loads(raw)))

    collect()
    # Hypothesis's draws depend on the modules loaded in the process (its constant pool), so
    # a run after other tests may not reach every block: the blocks the generator samples
    # from, at both places it puts them (an assistant line, a progress line's nested
    # message), count as drawn whatever the luck of the draw
    nested = progress("s", "2026-01-01T00:00:00Z", "a1", "t3", "m0", "r0", usage(1, 1, 1, 1))
    nested["data"]["message"]["message"]["content"] = BLOCKS
    for line in (assistant("s", "2026-01-01T00:00:00Z", "m0", "r0", usage(1, 1, 1, 1),
                           content=BLOCKS), nested):
        seen.update(json_fields(json.loads(json.dumps(line))))
    return seen


@pytest.fixture(scope="session")
def drawn(tmp_path_factory) -> set[str]:
    """:func:`drawn_fields`, drawn once per run (1,000 examples, ~2.2 CPU-s): the two tests
    below ran on both workers, each drawing the same set (issue 28 item 1)."""
    def build(folder: Path) -> None:
        (folder / "drawn.json").write_text(json.dumps(sorted(drawn_fields())))

    folder = built_once(tmp_path_factory, "claude-fuzz-drawn-fields", build)
    return set(json.loads((folder / "drawn.json").read_text()))


def test_the_line_generator_draws_every_field_of_the_typed_line(drawn):
    """The differential test proves nothing about a field it never draws (issue 23)."""
    assert typed_fields(Line) - drawn == set()


def test_the_field_check_sees_a_field_the_generator_lacks(drawn):
    class Extra(Line):
        brandNewField: int | None = None  # noqa: N815

    assert typed_fields(Extra) - drawn == {"brandNewField"}


@pytest.fixture(scope="module")
def column_types(tmp_path_factory):
    """The store's column types, which parse_file reads (as in a worker forked by the writer)."""
    Writer(open_writer(tmp_path_factory.mktemp("types") / "t.duckdb"))


def parse_bytes(tmp_path: Path, data: bytes):
    path = tmp_path / "projects" / "p" / "s.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return parse_file(FileJob(str(path), 0, 0, len(data), False, True, 0, 0, 0), arrow=False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(mutated(), min_size=1, max_size=6), st.booleans())
def test_no_exception_escapes_and_every_line_is_accounted_for(tmp_path, column_types, bad,
                                                             end_newline):
    data = b"\n".join(bad) + (b"\n" if end_newline else b"")
    read = parse_bytes(tmp_path, data)
    assert not any(e["reason"].startswith("parser failure") for e in read.errors), read.errors
    assert read.bytes_done + read.pending == len(data)
    tail = data.rsplit(b"\n", 1)[-1]  # after the last newline: complete only if it parses
    complete = data.count(b"\n") + (1 if tail and read.pending == 0 else 0)
    assert read.lines_done == complete


GOOD = [assistant("g", f"2026-05-01T08:{i:02d}:00.000Z", f"gm{i}", f"gr{i}", usage(i, 2 * i),
                  content=[tool_use(f"gt{i}", "Bash", command="ls")]) for i in range(5)]


def dump(con):
    return {t: sorted(con.execute(f'SELECT * FROM "{t}" WHERE source_file LIKE \'%good%\'')
                      .fetchall(), key=repr) for t in TABLES}


def _rows_of(con, root: Path) -> dict[str, list[tuple]]:
    """:func:`dump` as text, the store's folder ``root`` written ``<root>``."""
    return {t: [tuple(str(v).replace(str(root), "<root>") for v in row) for row in rows]
            for t, rows in dump(con).items()}


@pytest.fixture(scope="module")
def good_alone(tmp_path_factory):
    """The good file ingested alone, once a module (issue 28 item 1: each example ingested
    this same file into a store of its own): its rows, root-relative, and its line count."""
    base = tmp_path_factory.mktemp("fuzz-alone")
    good = base / "projects" / "p" / "good.jsonl"
    good.parent.mkdir(parents=True)
    good.write_bytes(b"\n".join(json.dumps(g).encode() for g in GOOD) + b"\n")
    con = open_writer(base / "alone.duckdb")
    try:
        ingest_claude(con, base)
        return {"file": good, "rows": _rows_of(con, base),
                "lines": con.execute("SELECT count(*) FROM cc_request_lines").fetchone()}
    finally:
        con.close()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(mutated(), min_size=1, max_size=5), min_size=1, max_size=3))
def test_good_files_load_the_same_with_bad_files_beside_them(tmp_path_factory, good_alone,
                                                             bad_files):
    base = tmp_path_factory.mktemp("fuzz")
    mixed = base / "mixed" / "projects" / "p"
    mixed.mkdir(parents=True)
    (mixed / "good.jsonl").write_bytes(good_alone["file"].read_bytes())
    for n, lines_ in enumerate(bad_files):
        (mixed / f"bad{n}.jsonl").write_bytes(b"\n".join(lines_) + b"\n")
    mixed_db = open_writer(base / "mixed.duckdb")
    try:
        summary = ingest_claude(mixed_db, base / "mixed")
        assert summary.read == 1 + len(bad_files)  # every file read: rows or error rows
        assert good_alone["rows"] == _rows_of(mixed_db, base / "mixed")
        assert good_alone["lines"] == (5,)
        for n in range(len(bad_files)):
            name = str(mixed / f"bad{n}.jsonl")
            assert mixed_db.execute("SELECT count(*) FROM cc_files WHERE source_file = ?",
                                    [name]).fetchone() == (1,)
    finally:
        mixed_db.close()


def test_an_unpaired_surrogate_escape_is_a_warning_and_costs_no_row(tmp_path, good_alone):
    """A line whose JSON escapes an unpaired UTF-16 surrogate (``"\\ud800"``: valid JSON
    text, refused by orjson, decoded to a lone surrogate by Python's json) loads with U+FFFD
    in its place and a warning row; the suite's fuzz test found an unknown line type holding
    one, whose warning text the store's insert refused, and the ingest of every file failed."""
    root = tmp_path / "s"
    folder = root / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "good.jsonl").write_bytes(good_alone["file"].read_bytes())
    odd = [{"type": "odd\ud800", "sessionId": "b"},  # an unknown type: its warning quotes it
           {**GOOD[0], "requestId": "br\udc03", "cwd": "/home/u/\ud83d\ude00"}]
    (folder / "bad.jsonl").write_bytes(b"\n".join(json.dumps(o).encode() for o in odd) + b"\n")
    assert b"\\ud800" in (folder / "bad.jsonl").read_bytes()  # the escape, as ASCII text
    con = open_writer(tmp_path / "s.duckdb")
    try:
        summary = ingest_claude(con, root)
        assert summary.read == 2
        assert good_alone["rows"] == _rows_of(con, root)
        reasons = [r for (r,) in con.execute(
            "SELECT reason FROM ingest_errors WHERE file LIKE '%bad.jsonl' ORDER BY line, reason"
        ).fetchall()]
        assert sum("surrogate" in r for r in reasons) == 2, reasons
        assert not any("invalid UTF-8" in r for r in reasons), reasons  # the bytes are valid
        assert any("unknown line type (odd\ufffd)" in r for r in reasons), reasons
        kept = con.execute("SELECT request_id, cwd FROM cc_request_lines"
                           " WHERE source_file LIKE '%bad.jsonl'").fetchall()
        assert kept == [("br\ufffd", "/home/u/\U0001f600")]  # the valid pair kept whole
    finally:
        con.close()


_UTF8_PIECES = [b"a", b"\n", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff", b"\xc3",
                b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_UTF8_PIECES), max_size=16), st.binary(max_size=4))
def test_block_utf8_check_agrees_with_python_strict_decoder(pieces, tail):
    """The block check accepts exactly what Python decodes, by Arrow's validation (no copy:
    large blocks, or pyarrow already imported) and by Python's decoder (small blocks)."""
    data = b"".join(pieces)
    try:
        data.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert _valid_utf8_block(data + tail, len(data), arrow=True) is valid
    assert _valid_utf8_block(data + tail, len(data), arrow=False) is valid
