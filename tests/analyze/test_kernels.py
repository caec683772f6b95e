"""Tests of reportgen.analyze.kernels (kernel table) and reportgen.analyze.analyze (the stage entry)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from reportgen.analyze import analyze
from reportgen.analyze.kernels import kernel_table
from reportgen.bundle import Environment, HostInfo, KernelTable, Manifest, RunStatus, Versions
from reportgen.errors import AnalysisError
from reportgen.formats import read_trace
from reportgen.formats.trace import Trace, load_trace
from reportgen.recipe.model import Recipe
from tests.data import H100_FIXTURE, H200_MIXNET_TRACE

__all__: list[str] = []

FIXTURE = H100_FIXTURE


@pytest.fixture(scope="module")
def fixture_trace() -> Trace:
    path = FIXTURE / "trace.json.gz"
    assert path.is_file(), f"missing test fixture {path} (shared/ must sit beside the repository)"
    return load_trace(path)


@pytest.fixture(scope="module")
def gpu_table(fixture_trace: Trace) -> KernelTable:
    return kernel_table(fixture_trace, "cuda", 3)


def _trace(events: list[Any]) -> Trace:
    return Trace(path=Path("synthetic.json"), events=events)


def _x(name: str, ts: float, dur: float, cat: str = "cpu_op", tid: int = 1, pid: int = 100) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def _rows(table: KernelTable) -> dict[str, tuple[str, float, int]]:
    return {k.name: (k.category, round(k.device_time_us, 3), k.count) for k in table.kernels}


# --- GPU: the H100 fixture -------------------------------------------------------------------------


def test_fixture_kernel_events(fixture_trace: Trace) -> None:
    kernels = [e for e in fixture_trace.events if e.get("cat") == "kernel"]
    assert len(kernels) == 6762
    assert len({e["name"] for e in kernels}) == 639
    assert round(sum(e["dur"] for e in kernels), 1) == 104019.2


def test_fixture_table_totals(gpu_table: KernelTable) -> None:
    assert gpu_table.device == "cuda"
    assert gpu_table.profiled_steps == 3
    assert round(gpu_table.total_us, 1) == 104739.6  # kernels + memcpy + memset
    assert len(gpu_table.kernels) == 641
    assert sum(k.count for k in gpu_table.kernels) == 6762 + 96 + 189
    assert sum(k.share for k in gpu_table.kernels) == pytest.approx(1.0)
    times = [k.device_time_us for k in gpu_table.kernels]
    assert times == sorted(times, reverse=True)


def test_fixture_top5(gpu_table: KernelTable) -> None:
    top = [(k.name[:60], len(k.name), k.category, round(k.device_time_us, 1), k.count) for k in gpu_table.kernels[:5]]
    assert top == [
        ("void at::native::elementwise_kernel<128, 4, at::native::gpu_", 834, "aten_native", 13323.9, 540),
        ("dgrad2d_c1_k1_nhwc_specialized", 30, "conv", 7982.2, 117),
        ("void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, f", 314, "conv", 6194.3, 33),
        ("sm80_xmma_wgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwc", 150, "conv", 6002.4, 27),
        ("void tensorTransformGeneric<__half, __half, float, true, fal", 205, "conv", 3912.2, 99),
    ]
    assert "direct_copy_kernel_cuda" in gpu_table.kernels[0].name
    assert round(gpu_table.kernels[0].share, 4) == 0.1272


def test_fixture_category_totals(gpu_table: KernelTable) -> None:
    totals: dict[str, tuple[float, int]] = {}
    for k in gpu_table.kernels:
        time_us, count = totals.get(k.category, (0.0, 0))
        totals[k.category] = (time_us + k.device_time_us, count + k.count)
    assert {category: (round(t, 1), n) for category, (t, n) in totals.items()} == {
        "conv": (43342.0, 1149),
        "triton_pointwise": (21551.8, 2271),
        "triton_reduction": (15235.3, 822),
        "aten_native": (14850.6, 1467),
        "extern_gemm": (7869.4, 729),
        "triton_persistent_reduction": (1170.1, 324),
        "memset": (604.1, 189),
        "memcpy": (116.3, 96),
    }
    by_category = gpu_table.category_totals_us()  # what the category chart draws, longest first
    expected = sorted(((c, t) for c, (t, _) in totals.items()), key=lambda item: -item[1])
    assert [(c, round(t, 1)) for c, t in by_category] == [(c, round(t, 1)) for c, t in expected]
    assert [c for c, _ in by_category][:2] == ["conv", "triton_pointwise"]


def test_fixture_compiled_graph_calls_are_not_kernels(gpu_table: KernelTable) -> None:
    assert not [k for k in gpu_table.kernels if k.name.startswith("## Call CompiledFxGraph")]


# --- GPU: synthetic ---------------------------------------------------------------------------------


def test_gpu_user_annotation_spans_are_not_counted() -> None:
    events: list[Any] = [
        _x("## Call CompiledFxGraph fry36jh ##", 0, 100, cat="gpu_user_annotation", pid=0, tid=7),
        _x("## Call CompiledFxGraph fry36jh ##", -5, 110, cat="cpu_op"),
        _x("triton_poi_fused_add_0", 10, 30, cat="kernel", pid=0, tid=7),
        _x("triton_poi_fused_add_0", 45, 10, cat="kernel", pid=0, tid=7),
        _x("nvjet_sm90_hsh_96x384_64x3_1x2_h_bz_coopA_TNN", 60, 20, cat="kernel", pid=0, tid=7),
        _x("Memcpy DtoD (Device -> Device)", 90, 2.5, cat="gpu_memcpy", pid=0, tid=7),
        _x("Memset (Device)", 95, 1.5, cat="gpu_memset", pid=0, tid=7),
        _x("cudaLaunchKernel", 5, 3, cat="cuda_runtime"),
    ]
    table = kernel_table(_trace(events), "cuda", 1)
    assert _rows(table) == {
        "triton_poi_fused_add_0": ("triton_pointwise", 40.0, 2),
        "nvjet_sm90_hsh_96x384_64x3_1x2_h_bz_coopA_TNN": ("extern_gemm", 20.0, 1),
        "Memcpy DtoD (Device -> Device)": ("memcpy", 2.5, 1),
        "Memset (Device)": ("memset", 1.5, 1),
    }
    assert table.total_us == 64.0
    assert [k.share for k in table.kernels] == [40 / 64, 20 / 64, 2.5 / 64, 1.5 / 64]


def test_events_without_timing_are_skipped() -> None:
    events: list[Any] = [
        {"ph": "X", "cat": "kernel", "name": "no_dur", "ts": 1},
        {"ph": "X", "cat": "kernel", "name": "no_ts", "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "str_dur", "ts": 1, "dur": "5"},
        {"ph": "X", "cat": "kernel", "name": "bool_dur", "ts": 1, "dur": True},
        {"ph": "X", "cat": "kernel", "name": "negative", "ts": 1, "dur": -1},
        {"ph": "X", "cat": "kernel", "ts": 1, "dur": 1},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 1, "ts": 1},
        "not an event",
        None,
        _x("triton_red_fused_sum_1", 2, 4, cat="kernel"),
    ]
    assert _rows(kernel_table(_trace(events), "cuda", 1)) == {"triton_red_fused_sum_1": ("triton_reduction", 4.0, 1)}
    assert _rows(kernel_table(_trace(events), "cpu", 1)) == {}


def test_empty_trace() -> None:
    table = kernel_table(_trace([]), "cuda", 2)
    assert (table.total_us, table.kernels, table.profiled_steps) == (0.0, [], 2)


# --- CPU: synthetic ---------------------------------------------------------------------------------


def _cpu_events() -> list[Any]:
    return [
        # step 0, main thread: a compiled region around an Inductor C++ kernel, then an eager linear
        _x("ProfilerStep#0", 0, 1000, cat="user_annotation"),
        _x("Torch-Compiled Region: 0/0", 10, 490),
        _x("TorchDynamo Cache Lookup", 5, 4),
        _x("## Call CompiledFxGraph fym2xqb ##", 20, 380),
        _x("graph_0_cpp_fused_add_mul_0", 30, 100),
        _x("aten::linear", 600, 300),
        _x("aten::t", 610, 10),
        _x("aten::addmm", 620, 260),
        _x("aten::empty", 625, 5),
        _x("my_block", 640, 60, cat="user_annotation"),
        _x("aten::fill_", 650, 10),
        # step 0, autograd thread: evaluate_function around CompiledFunctionBackward
        _x("autograd::engine::evaluate_function: CompiledFunctionBackward", 690, 120, tid=2),
        _x("CompiledFunctionBackward", 700, 100, tid=2),
        _x("graph_1_cpp_fused_mul_0", 710, 50, tid=2),
        # between steps: not counted when steps exist
        _x("aten::add", 1100, 100),
        # step 1: same kernel again; a reshape whose time is all in its child view (zero self time)
        _x("ProfilerStep#1", 1300, 700, cat="user_annotation"),
        _x("CompiledFunction", 1305, 200),
        _x("graph_0_cpp_fused_add_mul_0", 1310, 100),
        _x("aten::reshape", 1500, 10),
        _x("aten::view", 1500, 10),
        # a GPU-side step span must not define CPU step windows
        _x("ProfilerStep#1", 5000, 100, cat="gpu_user_annotation", pid=0, tid=7),
        _x("cudaLaunchKernel", 1600, 5, cat="cuda_runtime"),
    ]


CPU_ROWS_IN_STEPS = {
    "graph_0_cpp_fused_add_mul_0": ("cpp_fused", 200.0, 2),
    "aten::addmm": ("extern_gemm", 195.0, 1),  # 260 - empty 5 - my_block 60
    "graph_1_cpp_fused_mul_0": ("cpp_fused", 50.0, 1),
    "aten::linear": ("extern_gemm", 30.0, 1),  # 300 - t 10 - addmm 260
    "autograd::engine::evaluate_function: CompiledFunctionBackward": ("other", 20.0, 1),
    "aten::fill_": ("aten_native", 10.0, 1),
    "aten::t": ("aten_native", 10.0, 1),
    "aten::view": ("aten_native", 10.0, 1),
    "aten::empty": ("aten_native", 5.0, 1),
    "TorchDynamo Cache Lookup": ("other", 4.0, 1),
}


def test_cpu_self_time() -> None:
    table = kernel_table(_trace(_cpu_events()), "cpu", 2)
    assert _rows(table) == CPU_ROWS_IN_STEPS
    assert [k.name for k in table.kernels][:3] == [
        "graph_0_cpp_fused_add_mul_0",
        "aten::addmm",
        "graph_1_cpp_fused_mul_0",
    ]
    assert table.total_us == 534.0
    assert (table.device, table.profiled_steps) == ("cpu", 2)


def test_cpu_without_profiler_steps_counts_everything() -> None:
    events = [e for e in _cpu_events() if not e["name"].startswith("ProfilerStep#")]
    assert _rows(kernel_table(_trace(events), "cpu", 1)) == {
        **CPU_ROWS_IN_STEPS,
        "aten::add": ("aten_native", 100.0, 1),
    }


def test_cpu_parent_listed_after_child_in_file() -> None:
    events = [_x("aten::mm", 10, 5), _x("aten::matmul", 10, 20), _x("aten::bmm", 0, 3, tid=9)]
    assert _rows(kernel_table(_trace(events), "cpu", 1)) == {
        "aten::matmul": ("extern_gemm", 15.0, 1),
        "aten::mm": ("extern_gemm", 5.0, 1),
        "aten::bmm": ("extern_gemm", 3.0, 1),
    }


@pytest.mark.slow
def test_real_cpu_compiled_kernel_profile(tmp_path: Path) -> None:
    """torch.compile on CPU with kernel profiling: the Inductor C++ kernel is a `cpp_fused` row."""
    trace_path = tmp_path / "trace.json"
    code = textwrap.dedent(
        f"""
        import torch

        def f(a, b, c):
            return a * b + c

        compiled = torch.compile(f)
        a, b, c = (torch.randn(64, 64) for _ in range(3))
        compiled(a, b, c)
        with torch.profiler.profile() as prof:
            out = compiled(a, b, c)
        prof.export_chrome_trace({str(trace_path)!r})
        """
    )
    env = {
        **os.environ,
        "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
    }
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    table = kernel_table(load_trace(trace_path), "cpu", 1)
    fused = [k for k in table.kernels if k.name.endswith("cpp_fused_add_mul_0")]
    assert [(k.name, k.category, k.count) for k in fused] == [("graph_0_cpp_fused_add_mul_0", "cpp_fused", 1)]
    assert fused[0].device_time_us > 0
    assert not [k for k in table.kernels if k.name.startswith(("## ", "Torch-Compiled Region"))]


# --- analyze() ----------------------------------------------------------------------------------------


def _manifest(device: str, trace_file: str | None, status: RunStatus = RunStatus.ok) -> Manifest:
    recipe = Recipe.model_validate(
        {
            "name": "mixnet-l",
            "model": {"ref": "timm:mixnet_l"},
            "inputs": {"batch_size": 64, "tensors": [{"shape": [3, 224, 224]}]},
            "profile": {"profiled_steps": 3},
            "cpu": {"profile": {"profiled_steps": 2}},
        }
    )
    environment = Environment(
        device=device,  # type: ignore[arg-type]
        device_name="NVIDIA H100 80GB HBM3" if device == "cuda" else "cpu",
        versions=Versions(python="3.11.9", reportgen="0.1.0", platform="linux"),
        host=HostInfo(cpu="x86_64", cpu_count=16),
    )
    return Manifest(
        name="mixnet-l",
        recipe=recipe,
        recipe_sha256="0" * 64,
        recipe_path="recipes/mixnet-l.yaml",
        status=status,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:05:00Z",
        wall_time_s=300.0,
        environment=environment,
        trace_file=trace_file,
    )


def test_analyze_cuda_bundle(tmp_path: Path, gpu_table: KernelTable) -> None:
    shutil.copyfile(FIXTURE / "trace.json.gz", tmp_path / "trace.json.gz")  # a copy: bundles hold no links
    analysis = analyze(tmp_path, _manifest("cuda", "trace.json.gz"))
    assert analysis.kernels == gpu_table


def test_analyze_cpu_bundle_uses_cpu_profile_overrides(tmp_path: Path) -> None:
    (tmp_path / "trace.json").write_bytes(orjson.dumps({"traceEvents": _cpu_events()}))
    analysis = analyze(tmp_path, _manifest("cpu", "trace.json"))
    assert analysis.kernels.profiled_steps == 2
    assert _rows(analysis.kernels) == CPU_ROWS_IN_STEPS


def test_analyze_without_trace(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError) as info:
        analyze(tmp_path, _manifest("cuda", None, RunStatus.failed))
    assert info.value.message == "run 'mixnet-l' (failed) recorded no trace"
    assert info.value.path == str(tmp_path / "manifest.json")


def test_analyze_trace_file_missing(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError) as info:
        analyze(tmp_path, _manifest("cuda", "trace.json.gz"))
    assert (info.value.message, info.value.path) == ("trace file not found", str(tmp_path / "trace.json.gz"))


def test_copies_and_fills_carry_the_bytes_the_profiler_recorded_for_each() -> None:
    """A real H200 trace (mixnet_l training): each Memcpy/Memset row's bytes are the sum of its events' `args.bytes`,
    summed here from the raw JSON; the row's GB/s is exact (not an estimate)."""
    raw = json.loads(gzip.decompress(H200_MIXNET_TRACE.read_bytes()))["traceEvents"]
    expected: dict[str, float] = {}
    for e in raw:
        if e.get("cat") in ("gpu_memcpy", "gpu_memset"):
            expected[e["name"]] = expected.get(e["name"], 0.0) + e["args"]["bytes"]
    assert len(expected) >= 2 and all(moved > 0 for moved in expected.values())
    for trace in (read_trace(H200_MIXNET_TRACE), load_trace(H200_MIXNET_TRACE)):
        rows = {row.name: row for row in kernel_table(trace, "cuda", 3).kernels}
        assert {name: rows[name].recorded_bytes for name in expected} == expected
        assert all(rows[name].bytes_moved == (expected[name], False) for name in expected)
        assert all(row.recorded_bytes is None for row in rows.values() if row.name not in expected)
