"""Hostile traces cost bounded memory and time: a gzip bomb, padding, millions of events, huge names, a tail
crafted against the closing search; each ends in one located `AnalysisError` saying which bound it passed."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import orjson
import pytest

from reportgen.errors import AnalysisError
from reportgen.formats import TraceBounds, load_trace, read_trace, trace_text
from reportgen.formats.bounds import MAX_NAME_CHARS
from reportgen.formats.trace_text import find_closing

__all__: list[str] = []

KERNEL = {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_0", "pid": 0, "tid": 7, "ts": 10.0, "dur": 2.0}
_MiB = 1 << 20


def _gzip_stream(path: Path, parts: list[tuple[bytes, int]]) -> Path:
    """Write `parts` (bytes, times repeated) gzipped, a block at a time: hundreds of MiB of text, a small file."""
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        for block, times in parts:
            for _ in range(times):
                out.write(packer.compress(block))
        out.write(packer.flush())
    return path


def _trace_error(path: Path, bounds: TraceBounds | None = None) -> tuple[AnalysisError, float]:
    started = time.monotonic()
    with pytest.raises(AnalysisError) as info:
        read_trace(path, "cuda", parallel=False, **({"bounds": bounds} if bounds else {}))  # type: ignore[arg-type]
    assert info.value.path == str(path)
    assert "\n" not in info.value.message
    return info.value, time.monotonic() - started


def test_a_gzip_bomb_stops_at_the_ratio_bound(tmp_path: Path) -> None:
    """256 MiB of `{"a":0},` (~1.4 MB gzipped, ~190x): refused once past 64 MiB of text, long before its end.

    The work done is read from the error (the text inflated when it was refused), not from the clock: the suite's
    other worker on a 2-core CI host once made this read take 6.3 s, where it takes 1-2 alone."""
    head = b'{"traceEvents": [' + orjson.dumps(KERNEL) + b","
    bomb = _gzip_stream(tmp_path / "trace.json.gz", [(head, 1), (b'{"a":0},' * (1 << 17), 256), (b"{}]}", 1)])
    assert bomb.stat().st_size < 2 * _MiB
    error, _ = _trace_error(bomb)
    assert "decompression bomb" in error.message and "more than 100x" in error.message
    inflated = int(re.search(r"inflate to over ([\d,]+)", error.message)[1].replace(",", ""))  # type: ignore[index]
    assert 64 * _MiB < inflated < 128 * _MiB  # past the floor, then stopped (104 MiB read): under half the bomb
    with pytest.raises(AnalysisError, match="decompression bomb"):
        load_trace(bomb)  # the whole-file loader inflates within the same bounds


def test_a_bomb_of_zeros_costs_bounded_memory(tmp_path: Path) -> None:
    """1 GiB of zeros (~1 MB gzipped) is not JSON: the error path used to inflate it whole for its message."""
    bomb = _gzip_stream(tmp_path / "trace.json.gz", [(bytes(16 * _MiB), 64)])
    script = textwrap.dedent(
        f"""
        import resource
        from reportgen.errors import AnalysisError
        from reportgen.formats import read_trace
        try:
            read_trace({str(bomb)!r}, "cuda", parallel=False)
        except AnalysisError as exc:
            print(exc.message)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    message, peak_mib = done.stdout.strip().splitlines()
    assert message.startswith("invalid JSON")
    # Before the bounds: 2,210 MiB (the whole text inflated for the error message). Now 238 MiB alone on a 2-core
    # VM, once 615 MiB inside the full suite; 1 GiB keeps the margin to both.
    assert int(peak_mib) < 1024, f"peak RSS {peak_mib} MiB"


def test_the_text_bound_is_applied_as_it_inflates(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json.gz"
    trace.write_bytes(gzip.compress(orjson.dumps({"traceEvents": [KERNEL] * 20_000})))
    error, _ = _trace_error(trace, TraceBounds(inflated_bytes=100_000))
    assert "passes 100,000 bytes" in error.message


_PAD = b" " * _MiB


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b'{"traceEvents": [' + orjson.dumps(KERNEL) + b",", orjson.dumps(KERNEL) + b"]}"),
        (b'{"traceEvents": [' + orjson.dumps(KERNEL) + b', {"ph": "X", "name": ', b'"k", "cat": "kernel"}]}'),
        (b"{", b'"traceEvents": [' + orjson.dumps(KERNEL) + b"]}"),
        (b'{"traceEvents": [' + orjson.dumps(KERNEL) + b"]", b"}"),
    ],
    ids=["between-events", "inside-an-event", "before-traceEvents", "after-the-closing-bracket"],
)
def test_padding_is_refused_after_the_event_bound(tmp_path: Path, before: bytes, after: bytes) -> None:
    """40 MiB of spaces anywhere: refused after 16 MiB without a complete event, not read through."""
    trace = _gzip_stream(tmp_path / "trace.json.gz", [(before, 1), (_PAD, 40), (after, 1)])
    error, seconds = _trace_error(trace)
    assert "hold no complete event" in error.message or "an event of its text passes" in error.message
    assert seconds < 10


def test_padding_under_the_bound_still_reads(tmp_path: Path) -> None:
    trace = _gzip_stream(
        tmp_path / "trace.json.gz",
        [(b'{"traceEvents": [' + orjson.dumps(KERNEL) + b",", 1), (_PAD, 2), (orjson.dumps(KERNEL) + b"]}", 1)],
    )
    assert len(read_trace(trace, "cuda", parallel=False).records()) == 2


def test_the_event_count_is_bounded(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_bytes(orjson.dumps({"traceEvents": [{}] * 5_000}))
    error, _ = _trace_error(trace, TraceBounds(events=1_000))
    assert "over 1,000 events" in error.message


def test_the_event_count_is_bounded_in_two_processes(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_bytes(orjson.dumps({"traceEvents": [KERNEL] * 5_000}))
    with pytest.raises(AnalysisError, match="over 3,000 events"):
        read_trace(trace, "cuda", parallel=True, bounds=TraceBounds(events=3_000))


def test_a_kept_name_is_cut_and_distinct_names_are_bounded(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_bytes(orjson.dumps({"traceEvents": [{**KERNEL, "name": "k" * 50_000}]}))
    (event,) = read_trace(trace, "cuda", parallel=False).records()
    assert event.name is not None and len(event.name) == MAX_NAME_CHARS and event.name.endswith("…")
    many = tmp_path / "many.json"
    many.write_bytes(orjson.dumps({"traceEvents": [{**KERNEL, "name": f"k{i:06d}" * 20} for i in range(2_000)]}))
    error, _ = _trace_error(many, TraceBounds(names_chars=100_000))
    assert "distinct event names pass 100,000 characters" in error.message


def test_a_kept_span_name_counts_once_toward_the_names_bound(tmp_path: Path) -> None:
    """2,000 distinct `## … ##` spans of 40 characters (80,000 in all) fit a 100,000-character bound: each name
    counts once, not when its kind is decided and again when it is kept (it tripped at about half the bound)."""
    span = {"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "dur": 1}
    spans = [{**span, "name": f"## span {i:06d} {'x' * 22} ##", "ts": i} for i in range(2_000)]
    assert {len(str(s["name"])) for s in spans} == {40}
    trace = tmp_path / "spans.json"
    trace.write_bytes(orjson.dumps({"traceEvents": spans}))
    records = read_trace(trace, "cuda", parallel=False, bounds=TraceBounds(names_chars=100_000)).records()
    assert len(records) == 2_000
    with pytest.raises(AnalysisError, match="distinct event names pass 70,000 characters"):
        read_trace(trace, "cuda", parallel=False, bounds=TraceBounds(names_chars=70_000))


def test_find_closing_is_not_quadratic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `]` of a crafted tail is a candidate whose parse runs to the end: the search gives up in budget.
    Counted in bytes handed to the parser, not timed (a loaded CI host made 1 s of it 1.35 s)."""
    tail = b'],"a":[1]' * 40_000 + b"X}"
    parsed = [0]

    class Counting:
        JSONDecodeError = orjson.JSONDecodeError

        @staticmethod
        def loads(data: memoryview) -> object:
            parsed[0] += len(data)
            return orjson.loads(data)

    monkeypatch.setattr(trace_text, "orjson", Counting)
    assert find_closing(tail) is None
    # every candidate hands the parser the rest of the tail: without the budget 40,000 x 180 KB = 7.2 GB
    assert 0 < parsed[0] <= trace_text._CLOSING_BUDGET + len(tail)
    assert find_closing(b'{"a": [1]}, {"b": 2}] , "x": [1, 2]}') == (20, {"x": [1, 2]})
