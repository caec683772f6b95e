"""Corrupt, unusual and third-party (ROCm) traces through the whole analysis: parsed, or one clear error.

A broken file gives an AnalysisError naming it (with the byte offset for invalid JSON); an unusual but
valid one (events without `dur`, `displayTimeUnit: ns`, `distributedInfo` after `traceEvents`, a ROCm
trace with `hip*` launches) gives a kernel table, and graph attribution falls back instead of failing.
A fuzz test feeds arbitrary event lists to every trace consumer.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reportgen.analyze import analyze, attribute_graphs, kernel_table, region_evidence
from reportgen.analyze.graphs import OUTSIDE_LABEL
from reportgen.bundle import Analysis, read_manifest
from reportgen.errors import AnalysisError
from reportgen.formats.trace import load_trace

__all__: list[str] = []

MakeBundle = Callable[..., Path]
HOST, STREAM = (100, 1), (0, "stream 0")
ROCM_GEMM = "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_1LDSB1_0_1K_1LPA0_1LPB0"


def _x(name: str, cat: str, ts: float, dur: float, where: tuple[int, object] = HOST, **args: object) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "pid": where[0], "tid": where[1], "ts": ts}
    event["dur"] = dur
    if args:
        event["args"] = args
    return event


def _rocm_events(runtime_cat: str = "cuda_runtime") -> list[dict[str, Any]]:
    """One profiled step of one compiled graph, as Kineto writes it on ROCm: `hip*` runtime calls, no `cu*`."""
    return [
        _x("ProfilerStep#2", "user_annotation", 0, 1000),
        _x("## Call CompiledFxGraph fabc123 ##", "user_annotation", 100, 500),
        _x("hipLaunchKernel", runtime_cat, 150, 10, correlation=1),
        _x("hipExtModuleLaunchKernel", runtime_cat, 200, 10, correlation=2),
        _x("hipMemcpyWithStream", runtime_cat, 300, 5, correlation=3),
        _x("triton_poi_fused_add_0", "kernel", 160, 50, STREAM, correlation=1, device=0, stream=0),
        _x(ROCM_GEMM, "kernel", 215, 80, STREAM, correlation=2, device=0, stream=0),
        _x("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 310, 20, STREAM, correlation=3),
        {"ph": "s", "id": 1, "pid": 100, "tid": 1, "ts": 150, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 1, "pid": 0, "tid": "stream 0", "ts": 160, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    ]


ROCM_HEADER: dict[str, Any] = {
    "schemaVersion": 1,
    "deviceProperties": [
        {"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 205822885888, "computeMajor": 9, "computeMinor": 4}
    ],
}


def _write_trace(bundle: Path, payload: bytes, *, compress: bool = True) -> Path:
    path = bundle / "trace.json.gz"
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


def _analyze(bundle: Path) -> Analysis:
    return analyze(bundle, read_manifest(bundle))


def _kernels(analysis: Analysis) -> dict[str, tuple[str, float, int]]:
    return {k.name: (k.category, k.device_time_us, k.count) for k in analysis.kernels.kernels}


ROCM_KERNELS = {
    ROCM_GEMM: ("extern_gemm", 80.0, 1),
    "triton_poi_fused_add_0": ("triton_pointwise", 50.0, 1),
    "Memcpy DtoD (Device -> Device)": ("memcpy", 20.0, 1),
}


@pytest.fixture
def bundle(tmp_path: Path, make_bundle: MakeBundle) -> Path:
    """An ok CUDA bundle whose trace each test writes."""
    return make_bundle(tmp_path / "results", "third-party")


# --- ROCm -------------------------------------------------------------------------------------------


def test_rocm_trace_is_analysed_and_attributed(bundle: Path) -> None:
    _write_trace(bundle, orjson.dumps({**ROCM_HEADER, "traceEvents": _rocm_events()}))
    analysis = _analyze(bundle)
    assert _kernels(analysis) == ROCM_KERNELS
    assert [g.label for g in analysis.graphs] == ["graph 0"]
    assert {k.name for k in analysis.graphs[0].kernels} == set(ROCM_KERNELS)
    assert [s.step for s in analysis.steps] == [2]
    assert load_trace(bundle / "trace.json.gz").device_properties[0].name == "AMD Instinct MI300X"


def test_launches_of_an_unknown_category_fall_back_to_outside_regions(bundle: Path) -> None:
    _write_trace(bundle, orjson.dumps({**ROCM_HEADER, "traceEvents": _rocm_events("hip_api")}))
    analysis = _analyze(bundle)
    assert _kernels(analysis) == ROCM_KERNELS
    assert [g.label for g in analysis.graphs if g.kernels] == [OUTSIDE_LABEL]


# --- unusual but valid ----------------------------------------------------------------------------


def test_events_without_dur_are_skipped(bundle: Path) -> None:
    odd: list[Any] = [
        {"ph": "i", "cat": "kernel", "name": "instant", "ts": 170, "s": "t"},
        {"ph": "X", "cat": "kernel", "name": "no_dur", "pid": 0, "tid": "stream 0", "ts": 170},
        {"ph": "X", "cat": "kernel", "name": "null_dur", "ts": 170, "dur": None},
        {"ph": "X", "cat": "kernel", "name": "text_dur", "ts": 170, "dur": "12"},
        {"ph": "X", "cat": "kernel", "name": "negative_dur", "ts": 170, "dur": -5},
        {"ph": "X", "cat": "kernel", "name": "bool_dur", "ts": 170, "dur": True},
        {"ph": "C", "name": "counter", "ts": 170, "args": {"value": 1}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
        7,
        "text",
        None,
        [],
    ]
    _write_trace(bundle, orjson.dumps({"traceEvents": _rocm_events() + odd}))
    assert _kernels(_analyze(bundle)) == ROCM_KERNELS


def test_nanosecond_display_unit_does_not_rescale_times(bundle: Path) -> None:
    _write_trace(bundle, orjson.dumps({"displayTimeUnit": "ns", "traceEvents": _rocm_events()}))
    assert load_trace(bundle / "trace.json.gz").display_time_unit == "ns"
    assert _kernels(_analyze(bundle)) == ROCM_KERNELS


def test_distributed_info_after_trace_events(bundle: Path) -> None:
    payload = orjson.dumps({"traceEvents": _rocm_events()})[:-1]
    payload += b', "distributedInfo": {"backend": "rccl", "rank": 1, "world_size": 8}}'
    _write_trace(bundle, payload)
    assert load_trace(bundle / "trace.json.gz").distributed_info == {"backend": "rccl", "rank": 1, "world_size": 8}
    assert _kernels(_analyze(bundle)) == ROCM_KERNELS


def test_empty_trace_gives_an_empty_table(bundle: Path) -> None:
    _write_trace(bundle, b'{"traceEvents": []}')
    analysis = _analyze(bundle)
    assert analysis.kernels.kernels == [] and analysis.graphs == []


# --- corrupt: one clear error naming the file ----------------------------------------------------

TRUNCATED_JSON = orjson.dumps({"traceEvents": _rocm_events()})[:-7]


@pytest.mark.parametrize(
    ("payload", "compress", "message"),
    [
        pytest.param(
            gzip.compress(orjson.dumps({"traceEvents": _rocm_events()}))[:-20],
            False,
            "truncated gzip: the compressed stream ends before its end marker",
            id="truncated-gzip",
        ),
        pytest.param(
            b'{"traceEvents": [{"name": "k", "ts": 1,, "dur": 2}]}',
            True,
            "invalid JSON at byte 39: unexpected character, expected a string key",
            id="invalid-json",
        ),
        pytest.param(
            TRUNCATED_JSON,
            True,
            f"invalid JSON at byte {len(TRUNCATED_JSON)}: unexpected end of data",
            id="truncated-json",
        ),
        pytest.param(
            b'{"schemaVersion": 1, "deviceProperties": []}',
            True,
            "no `traceEvents`: not a torch.profiler chrome trace",
            id="missing-trace-events",
        ),
        pytest.param(
            b"\x89PNG\r\n\x1a\n", False, "invalid gzip data: Not a gzipped file (b'\\x89P')", id="not-a-trace"
        ),
    ],
)
def test_corrupt_trace_is_one_clear_error(bundle: Path, payload: bytes, compress: bool, message: str) -> None:
    path = _write_trace(bundle, payload, compress=compress)
    with pytest.raises(AnalysisError) as info:
        _analyze(bundle)
    assert info.value.message == message
    assert str(info.value).startswith(f"{path}: {message}")


# --- fuzz ----------------------------------------------------------------------------------------

_NAMES = st.sampled_from(
    [
        "ProfilerStep#1",
        "ProfilerStep#x",
        "## Call CompiledFxGraph fkey ##",
        "Torch-Compiled Region: 0/0",
        "Torch-Compiled Region: 1/0",
        "CompiledFunction",
        "CompiledFunctionBackward",
        "triton_poi_fused_add_0",
        "graph_0_cpp_fused_mul_0",
        "hipLaunchKernel",
        "cudaLaunchKernel",
        "aten::mm",
        "##",
        "",
    ]
)
_CATS = st.sampled_from(
    [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "cuda_runtime",
        "cuda_driver",
        "cpu_op",
        "user_annotation",
        "gpu_user_annotation",
        "",
        "ac2g",
    ]
)
_JSON_NUMBERS = st.one_of(st.integers(-(10**6), 10**15), st.floats(-1e300, 1e300, allow_nan=False))
_ANY = st.one_of(st.none(), st.booleans(), _JSON_NUMBERS, st.text(max_size=5))
_EVENT = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "i", "s", "f", "M", "C", "B", "E"]),
        "cat": st.one_of(_CATS, _ANY),
        "name": st.one_of(_NAMES, _ANY),
        "pid": st.one_of(st.sampled_from([0, 100]), _ANY),
        "tid": st.one_of(st.sampled_from([1, "stream 7"]), _ANY),
        "ts": st.one_of(st.integers(0, 2000), _JSON_NUMBERS, _ANY),
        "dur": st.one_of(st.integers(0, 500), _JSON_NUMBERS, _ANY),
        "args": st.one_of(
            st.fixed_dictionaries({}, optional={"correlation": st.one_of(st.integers(0, 5), _ANY)}), _ANY
        ),
    },
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(events=st.lists(st.one_of(_EVENT, _ANY), max_size=40))
def test_fuzz_trace_consumers_never_crash(bundle: Path, events: list[Any]) -> None:
    """The whole analysis (GPU) of the bundle, and every consumer for CPU runs too."""
    _write_trace(bundle, orjson.dumps({"traceEvents": events}))
    _analyze(bundle)
    trace = load_trace(bundle / "trace.json.gz")
    kernel_table(trace, "cpu", 1)
    attribute_graphs(trace, "cpu")
    region_evidence(trace)
