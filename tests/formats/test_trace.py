"""Tests of reportgen.formats.trace: loading chrome traces and every error a bad file gives."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from reportgen.errors import AnalysisError
from reportgen.formats.trace import DeviceProperties, load_trace
from tests.data import H100_FIXTURE

__all__: list[str] = []

FIXTURE = H100_FIXTURE
RERUN_HINT = "the run may have been killed while writing the trace; run the recipe again"


@pytest.fixture(scope="module")
def fixture_trace_path() -> Path:
    path = FIXTURE / "trace.json.gz"
    assert path.is_file(), f"missing test fixture {path} (shared/ must sit beside the repository)"
    return path


def _write(path: Path, payload: bytes, *, compress: bool = False) -> Path:
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


def _error(path: Path) -> AnalysisError:
    with pytest.raises(AnalysisError) as info:
        load_trace(path)
    assert info.value.path == str(path)
    return info.value


def test_fixture_header_and_events(fixture_trace_path: Path) -> None:
    trace = load_trace(fixture_trace_path)
    assert len(trace.events) == 46324
    assert trace.device_properties == (
        DeviceProperties(
            index=0,
            name="NVIDIA H100 80GB HBM3",
            total_memory_bytes=85017493504,
            multiprocessor_count=132,
            capability="9.0",
        ),
    )
    assert trace.display_time_unit == "ms"
    assert trace.base_time_ns == 1790857026000000000
    assert trace.distributed_info is None
    assert trace.path == fixture_trace_path


def test_plain_json_with_distributed_info_after_events(tmp_path: Path) -> None:
    payload = b'{"traceEvents": [{"name": "k", "ts": 1, "dur": 2}], "displayTimeUnit": "ns",'
    payload += b' "distributedInfo": {"rank": 1, "world_size": 2}, "deviceProperties": [{"id": 3}, 7]}'
    trace = load_trace(_write(tmp_path / "trace.json", payload))
    assert trace.events == [{"name": "k", "ts": 1, "dur": 2}]
    assert trace.display_time_unit == "ns"
    assert trace.distributed_info == {"rank": 1, "world_size": 2}
    assert trace.device_properties == ()
    assert trace.base_time_ns is None


def test_gzip_detected_by_magic_bytes(tmp_path: Path) -> None:
    trace = load_trace(_write(tmp_path / "trace.json", b'{"traceEvents": []}', compress=True))
    assert trace.events == []


def test_accepts_str_path(tmp_path: Path) -> None:
    path = _write(tmp_path / "trace.json", b'{"traceEvents": []}')
    assert load_trace(str(path)).path == path


def test_missing_file(tmp_path: Path) -> None:
    error = _error(tmp_path / "absent.json.gz")
    assert error.message == "trace file not found"
    assert error.hint == "check the bundle's manifest.json `trace_file`"


def test_directory_is_not_a_trace(tmp_path: Path) -> None:
    assert _error(tmp_path).message == "cannot read trace file: Is a directory"


def test_truncated_gzip(tmp_path: Path, fixture_trace_path: Path) -> None:
    raw = fixture_trace_path.read_bytes()
    error = _error(_write(tmp_path / "trace.json.gz", raw[: len(raw) // 2]))
    assert error.message == "truncated gzip: the compressed stream ends before its end marker"
    assert error.hint == RERUN_HINT


def test_gz_suffix_on_plain_json(tmp_path: Path) -> None:
    error = _error(_write(tmp_path / "trace.json.gz", b'{"traceEvents": []}'))
    assert error.message == "invalid gzip data: Not a gzipped file (b'{\"')"


def test_corrupt_gzip_crc(tmp_path: Path) -> None:
    raw = bytearray(gzip.compress(b'{"traceEvents": []}', mtime=0))
    raw[-8] ^= 0xFF  # first byte of the CRC32 trailer
    error = _error(_write(tmp_path / "trace.json.gz", bytes(raw)))
    assert error.message == "invalid gzip data: CRC check failed"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"traceEvents": [1, 2,', "invalid JSON at byte 22: unexpected end of data"),
        (b'{"traceEvents": [}', "invalid JSON at byte 17: unexpected character, expected a JSON value"),
        (b"", "invalid JSON at byte 0: Input is a zero-length, empty document"),
    ],
)
def test_invalid_json(tmp_path: Path, payload: bytes, message: str) -> None:
    error = _error(_write(tmp_path / "trace.json.gz", payload, compress=True))
    assert error.message == message
    assert error.hint == RERUN_HINT


@pytest.mark.parametrize(
    ("value", "kind"),
    [([], "array"), ("x", "string"), (1.5, "number"), (True, "boolean"), (None, "null")],
)
def test_top_level_not_an_object(tmp_path: Path, value: object, kind: str) -> None:
    error = _error(_write(tmp_path / "trace.json", orjson.dumps(value)))
    assert error.message == f"top level is a JSON {kind}, expected an object with `traceEvents`"


def test_missing_trace_events(tmp_path: Path) -> None:
    error = _error(_write(tmp_path / "trace.json", b'{"schemaVersion": 1, "deviceProperties": []}'))
    assert error.message == "no `traceEvents`: not a torch.profiler chrome trace"
    assert error.hint == "export the trace with `prof.export_chrome_trace(path)`"
    assert str(error) == (
        f"{tmp_path / 'trace.json'}: no `traceEvents`: not a torch.profiler chrome trace"
        " (export the trace with `prof.export_chrome_trace(path)`)"
    )


def test_trace_events_not_a_list(tmp_path: Path) -> None:
    error = _error(_write(tmp_path / "trace.json", b'{"traceEvents": {}}'))
    assert error.message == "`traceEvents` is a JSON object, expected an array"
