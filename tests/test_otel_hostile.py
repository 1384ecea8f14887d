"""Issue 47 item 2: hostile telemetry files stay bounded and end as rows, never "unchanged".

Zstd bombs (a whole-file stream and a framed message) and an over-long line are error rows
under small caps (``framing.Limits``; the real caps and a real bomb: benchmarks/
bench_otel_bomb.py); random bytes are an error row at once; a frame or stream cut short
waits while the file is fresh and is an error row once it has not changed for
STALE_PARTIAL_MINUTES (os.utime, no sleeping); the same export as JSON lines and as a zstd
stream is kept once; a file read in small batches gives the rows of one read.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import orjson
import zstandard

from brainlab.otel import export, framing
from brainlab.otel.ingest import discover, ingest_otel
from brainlab.spec import ranges
from brainlab.store import open_writer

SMALL = framing.Limits(message_max=64 * 1024, ratio_max=50, batch=8 * 1024, problems=20)


def calls(n: int, first: int = 0) -> list[export.Call]:
    return [export.Call("sess-h", f"req_{i}", "claude-sonnet-4-5-20250929",
                        datetime(2026, 11, 30, 10, i % 60), 10, 20, 30, 40, 0.01)
            for i in range(first, first + n)]


def json_lines(n: int, first: int = 0) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in export.logs_requests(calls(n, first),
                                                                          batch=1))


def framed(payloads: list[bytes]) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


def run(db: Path, *paths: Path, limits: framing.Limits = SMALL):
    con = open_writer(db)
    try:
        summary = ingest_otel(con, discover(paths), limits=limits)
        errors = con.execute("SELECT file, line, severity, reason FROM ingest_errors"
                             " ORDER BY file, line").fetchall()
        events = con.execute("SELECT count(*), count(DISTINCT request_id) FROM otel_events"
                             ).fetchone()
    finally:
        con.close()
    return summary, errors, events


def stale(path: Path) -> None:
    old = time.time() - (ranges.STALE_PARTIAL_MINUTES + 1) * 60
    os.utime(path, (old, old))


def test_bombs_and_long_lines_are_error_rows_and_the_good_rows_load(tmp_path):
    folder = tmp_path / "otel"
    folder.mkdir()
    # a whole-file zstd stream: 3 good lines, then megabytes of short lines from a few KB
    bomb = zstandard.ZstdCompressor().compress(
        json_lines(3) + b'{"resourceLogs":[]}\n' * 100_000)
    (folder / "bomb.json.zst").write_bytes(bomb)
    # a framed file: a good message, a zstd frame that decompresses past the cap, a good one
    good = export.logs_requests(calls(2, 10), batch=1)
    zeros = zstandard.ZstdCompressor().compress(b"{" + b" " * 1_000_000 + b"}")
    (folder / "frames.bin").write_bytes(framed([orjson.dumps(good[0]), zeros,
                                                orjson.dumps(good[1])]))
    # JSON lines: a good line, a line past the cap, a good line
    (folder / "long.json").write_bytes(json_lines(1, 20) + b'{"x": "' + b"a" * 200_000
                                       + b'"}\n' + json_lines(1, 21))
    summary, errors, events = run(tmp_path / "s.duckdb", folder)
    by_file = {}
    for file, line, severity, reason in errors:
        by_file.setdefault(Path(file).name, []).append((line, severity, reason))
    assert any("decompression bomb" in r and s == "error" for _, s, r in by_file["bomb.json.zst"])
    assert [(line, s) for line, s, r in by_file["frames.bin"]] == [(2, "error")]
    assert "decompresses past" in by_file["frames.bin"][0][2]
    assert [(line, s) for line, s, r in by_file["long.json"]] == [(2, "error")]
    assert "MESSAGE_MAX_BYTES" in by_file["long.json"][0][2]
    # the good records of each file loaded: 3 + 2 + 2; the bomb's short lines cost at most
    # PROBLEMS_PER_READ rows each batch
    assert events == (7, 7)
    assert len(by_file["bomb.json.zst"]) <= 4 * (SMALL.problems + 1)
    # the decompressed bytes read stayed under the file's cap
    assert summary.bytes_read <= SMALL.decompressed_max(len(bomb)) + 2 * SMALL.message_max \
        + 10_000


def test_random_bytes_and_stale_partial_frames_end_as_error_rows(tmp_path):
    folder = tmp_path / "otel"
    folder.mkdir()
    noise = folder / "noise.bin"
    noise.write_bytes(os.urandom(3000).replace(b"{", b"x").replace(b"[", b"x").replace(
        b"\x28\xb5", b"xx"))
    requests = [orjson.dumps(r) for r in export.logs_requests(calls(3), batch=1)]
    cut = folder / "cut.pb"
    body = framed(requests)
    cut.write_bytes(body + (len(requests[0]) + 10).to_bytes(4, "big") + requests[0][:20])
    line = folder / "cut.json"
    line.write_bytes(json_lines(2, 30) + json_lines(1, 32)[:-40])  # last line unfinished
    stream = folder / "cut.json.zst"
    stream.write_bytes(zstandard.ZstdCompressor().compress(json_lines(4, 40))[:-6])
    db = tmp_path / "s.duckdb"
    # a fresh file: the cut frame, line and stream wait; random bytes are an error at once
    summary, errors, events = run(db, folder)
    first = {(Path(f).name, s) for f, _line, s, _r in errors}
    assert ("noise.bin", "error") in first
    assert not any(name.startswith("cut") and s == "error" for name, s in first), errors
    assert events[0] == 3 + 2  # cut.pb's 3 whole frames, cut.json's 2 whole lines
    # a second run: nothing new; the noise file is not re-read, its error row stays
    _, again, _ = run(db, folder)
    assert sum(1 for f, *_ in again if f.endswith("noise.bin")) == sum(
        1 for f, *_ in errors if f.endswith("noise.bin")) == 1
    # unchanged for STALE_PARTIAL_MINUTES: each cut part becomes an error row, once
    for path in (cut, line, stream):
        stale(path)
    summary, errors, events = run(db, folder)
    rows = {Path(f).name: (ln, s, r) for f, ln, s, r in errors if s == "error"}
    assert rows["cut.pb"][0] == 4 and "cut short" in rows["cut.pb"][2]
    assert rows["cut.json"][0] == 3 and "not JSON" in rows["cut.json"][2]
    assert "ends inside a frame" in rows["cut.json.zst"][2]
    assert "minutes" in rows["cut.json.zst"][2]
    _, later, _ = run(db, folder)
    assert later == errors  # the same rows: nothing is read again


def test_the_same_export_as_json_and_zstd_is_kept_once(tmp_path):
    folder = tmp_path / "otel"
    folder.mkdir()
    text = json_lines(30)
    (folder / "logs.json").write_bytes(text)
    (folder / "logs.json.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    db = tmp_path / "s.duckdb"
    _, errors, events = run(db, folder, limits=framing.LIMITS)
    assert events == (30, 30) and errors == []
    _, _, events = run(db, folder, limits=framing.LIMITS)
    assert events == (30, 30)


def test_small_batches_give_the_rows_of_one_read(tmp_path):
    requests = export.logs_requests(calls(16), batch=2)
    plain = export.write_json_lines(tmp_path / "a" / "logs.json", requests)
    packed = tmp_path / "b" / "logs.pb"
    packed.parent.mkdir()
    export.write_framed(packed, requests, zstd=True)
    stream = tmp_path / "c" / "logs.json.zst"
    stream.parent.mkdir()
    stream.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    tiny = framing.Limits(message_max=64 * 1024, batch=1024)
    for path in (plain, packed, stream):
        chunks = list(framing.read(path, limits=tiny))
        assert len(chunks) > 3, path  # several batches
        _, errors, events = run(tmp_path / f"{path.parent.name}.duckdb", path, limits=tiny)
        assert events == (16, 16) and errors == [], path


def test_docs_show_the_ranges_of_spec():
    """docs/otel.md §12 shows ranges.describe() as it is (one fact in one place)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "otel.md").read_text()
    for line in ranges.describe():
        assert line in text, line


def test_a_stream_an_older_release_keyed_by_its_compressed_bytes_is_not_read_twice(tmp_path):
    from brainlab.otel.ingest import HEAD_BYTES, _key

    path = tmp_path / "logs.json.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(json_lines(5)))
    db = tmp_path / "s.duckdb"
    run(db, path)
    old_key = _key(path.read_bytes()[:HEAD_BYTES])  # the key before issue 47
    con = open_writer(db)
    try:
        for table in ("otel_files", "otel_events", "otel_attributes"):
            con.execute(f"UPDATE {table} SET file_key = ?", [old_key])
        con.execute("UPDATE otel_files SET head_bytes = ?", [int(old_key.split(":")[0])])
    finally:
        con.close()
    summary, errors, events = run(db, path)
    assert events == (5, 5) and errors == [] and summary.unchanged == 1
