"""The streaming reader: the same analysis as the full load, header keys wherever they are, clear errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from reportgen.analyze import attribute_graphs, kernel_table, region_evidence
from reportgen.errors import AnalysisError
from reportgen.formats.stream import read_trace
from reportgen.formats.trace import Trace, load_trace
from tests.data import BUNDLES_DIR, H100_FIXTURE, H200_MIXNET_TRACE

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = H100_FIXTURE / "trace.json.gz"
CPU_TRACE = BUNDLES_DIR / "fused_add_mul" / "trace.json.gz"
H200_TRACE = H200_MIXNET_TRACE


def _results(trace: Trace, device: str) -> tuple[object, ...]:
    return (
        kernel_table(trace, device, 3),  # type: ignore[arg-type]
        attribute_graphs(trace, device),  # type: ignore[arg-type]
        region_evidence(trace),
    )


def _header(trace: Trace) -> tuple[object, ...]:
    return trace.device_properties, trace.display_time_unit, trace.base_time_ns, trace.distributed_info


@pytest.mark.parametrize(("path", "device"), [(FIXTURE, "cuda"), (H200_TRACE, "cuda"), (CPU_TRACE, "cpu")])
def test_streamed_trace_gives_the_full_load_results(path: Path, device: str) -> None:
    full, streamed = load_trace(path), read_trace(path, device)  # type: ignore[arg-type]
    assert _results(streamed, device) == _results(full, device)
    assert _header(streamed) == _header(full)
    assert len(streamed.events) < len(full.events)  # only what the analyses read is kept


def test_two_process_read_equals_the_single_stream(tmp_path: Path) -> None:
    plain = tmp_path / "trace.json"
    plain.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    halves, single = read_trace(plain, "cuda", parallel=True), read_trace(plain, "cuda", parallel=False)
    assert halves.events == single.events
    assert halves.cpu_extent_us == single.cpu_extent_us
    assert _results(halves, "cuda") == _results(load_trace(FIXTURE), "cuda")


def test_a_file_that_does_not_split_is_read_in_one_stream(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": i, "dur": 1, "args": {"correlation": i}} for i in range(50)
    ]
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps({"traceEvents": events}))  # one line: no `}, {` is missing, but nested ok
    trace = read_trace(path, "cuda", parallel=True)
    assert [e.ts for e in trace.events] == [float(i) for i in range(50)]


def test_header_keys_after_the_events_and_ns_unit(tmp_path: Path) -> None:
    payload = b'{"deviceProperties": [{"id": 0, "name": "GPU"}], "traceEvents": [{"name": "k", "cat": "kernel",'
    payload += b' "ts": 1, "dur": 2, "grid": [1, 2, 3]}], "displayTimeUnit": "ns",'
    payload += b' "distributedInfo": {"rank": 1, "world_size": 2, "pg": [[0, 1]]}, "traceName": "x]"}'
    path = tmp_path / "trace.json.gz"
    path.write_bytes(gzip.compress(payload))
    trace = read_trace(path)
    assert trace.display_time_unit == "ns"
    assert trace.distributed_info == {"rank": 1, "world_size": 2, "pg": [[0, 1]]}
    assert trace.device_properties[0].name == "GPU"
    assert [(e.name, e.ts, e.dur) for e in trace.events] == [("k", 1.0, 2.0)]


def _error(path: Path) -> AnalysisError:
    with pytest.raises(AnalysisError) as info:
        read_trace(path)
    assert info.value.path == str(path)
    return info.value


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert _error(tmp_path / "absent.json.gz").message == "trace file not found"
    assert _error(tmp_path).message == "cannot read trace file: Is a directory"


def test_truncated_gzip_names_the_problem(tmp_path: Path) -> None:
    raw = FIXTURE.read_bytes()
    path = tmp_path / "trace.json.gz"
    path.write_bytes(raw[: len(raw) // 2])
    error = _error(path)
    assert error.message == "truncated gzip: the compressed stream ends before its end marker"
    assert error.hint and "run the recipe again" in error.hint


def test_invalid_json_gives_the_byte_offset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reportgen.formats.stream._EXACT_ERROR_BYTES", 0)  # as for a trace over 256 MB
    text = gzip.decompress(FIXTURE.read_bytes())
    at = text.index(b"\n  {", 5_000_000)  # between two events, outside any string
    broken = text[:at] + b"]]" + text[at:]
    path = tmp_path / "trace.json"
    path.write_bytes(broken)
    error = _error(path)
    assert error.message.startswith("invalid JSON near byte ")
    offset = int(error.message.split("near byte ")[1].split()[0].replace(",", ""))
    assert at <= offset <= at + (2 << 20)  # within the parser's read-ahead of the fault


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"[]", "top level is a JSON array, expected an object with `traceEvents`"),
        (b'"x"', "top level is a JSON string, expected an object with `traceEvents`"),
        (b"1.5", "top level is a JSON number, expected an object with `traceEvents`"),
        (b'{"schemaVersion": 1}', "no `traceEvents`: not a torch.profiler chrome trace"),
        (b'{"traceEvents": {}}', "`traceEvents` is a JSON object, expected an array"),
        (b"", "invalid JSON at byte 0: Input is a zero-length, empty document"),
        (b'{"traceEvents": [1, 2,', "invalid JSON at byte 22: unexpected end of data"),
        (b"\x1f\x8bgarbage!", "invalid gzip data: Unknown compression method"),
    ],
)
def test_not_a_trace(tmp_path: Path, payload: bytes, message: str) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(payload)
    assert _error(path).message.startswith(message)


def _nested_trace(path: Path, count: int = 400) -> Path:
    """Kernels whose args hold arrays of objects: `}, {` inside events, where a cut must not land."""
    events = [
        {
            "ph": "X",
            "cat": "kernel" if i % 2 else "cpu_op",
            "name": f"k{i % 7}",
            "ts": float(i),
            "dur": 0.5,
            "args": {"correlation": i, "pairs": [{"a": i}, {"b": [{"c": 1}, {"d": 2}]}]},
        }
        for i in range(count)
    ]
    path.write_bytes(orjson.dumps({"traceEvents": events, "traceName": "nested]"}, option=orjson.OPT_INDENT_2))
    return path


@pytest.mark.parametrize("piece", [64, 300, 4096])
def test_cuts_inside_events_are_carried_into_the_next_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    monkeypatch.setattr("reportgen.formats.stream._PIECE", piece)
    path = _nested_trace(tmp_path / "trace.json")
    full = load_trace(path)
    for parallel in (False, True):
        streamed = read_trace(path, "cpu", parallel=parallel)
        assert streamed.records() == full.records()
        assert _results(streamed, "cpu") == _results(full, "cpu")


def test_text_that_does_not_cut_is_read_with_ijson(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.setattr("reportgen.formats.stream._EVENTS_START", re.compile(rb"(?!)"))  # never matches
    full, streamed = load_trace(FIXTURE), read_trace(FIXTURE, "cuda")
    assert _results(streamed, "cuda") == _results(full, "cuda")
    assert _header(streamed) == _header(full)
