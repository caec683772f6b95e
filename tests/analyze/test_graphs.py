"""Tests of reportgen.analyze.graphs (+ regions, seed): graph attribution, steps, seed numbers, `analyze`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest

from reportgen.analyze import analyze
from reportgen.analyze.graphs import OUTSIDE_LABEL, GraphAttribution, attribute_graphs
from reportgen.analyze.seed import match_benchmarks, seed_bucket, seed_busy
from reportgen.bundle import (
    Analysis,
    Capture,
    Environment,
    GraphAnalysis,
    GraphBenchmark,
    HostInfo,
    KernelTable,
    Manifest,
    RunStatus,
    Versions,
)
from reportgen.formats.trace import Trace, load_trace
from reportgen.recipe.model import Recipe
from tests.data import H100_FIXTURE, H200_MIXNET_TRACE

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
H100 = H100_FIXTURE / "trace.json.gz"
H200 = H200_MIXNET_TRACE
PID = 100


# --- synthetic traces -------------------------------------------------------------------------------


class _Events:
    """Builds chrome-trace events: CPU spans/ops, launches and their GPU activity (shared correlation)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._correlation = 0

    def span(self, name: str, ts: float, dur: float, tid: int = 1, cat: str = "cpu_op") -> None:
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid, "ts": ts, "dur": dur})

    def kernel(
        self, name: str, launch: float, start: float, dur: float, tid: int = 1, cat: str = "kernel", stream: int = 7
    ) -> None:
        self._correlation += 1
        args = {"correlation": self._correlation}
        triton = name.startswith("triton_")
        launcher = ("cuLaunchKernel", "cuda_driver") if triton else ("cudaLaunchKernel", "cuda_runtime")
        if cat == "gpu_memcpy":
            launcher = ("cudaMemcpyAsync", "cuda_runtime")
        self.events.append(
            {
                "ph": "X",
                "cat": launcher[1],
                "name": launcher[0],
                "pid": PID,
                "tid": tid,
                "ts": launch,
                "dur": 2,
                "args": args,
            }
        )
        self.events.append(
            {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": start, "dur": dur, "args": args}
        )

    def annotation(self, name: str, ts: float, dur: float) -> None:
        """A GPU-side user annotation: a span on the GPU timeline, never work."""
        self.events.append(
            {"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur}
        )

    def trace(self) -> Trace:
        return Trace(path=Path("synthetic.json"), events=self.events)


def _nested_regions() -> Trace:
    """Inference, no graph keys, a graph break: Region 1/0 nested in Region 0/0."""
    b = _Events()
    b.span("Torch-Compiled Region: 0/0", 0, 100)
    b.kernel("triton_poi_fused_add_0", launch=10, start=20, dur=10)
    b.kernel("void at::native::vectorized_elementwise_kernel<4>", launch=40, start=45, dur=5)
    b.span("Torch-Compiled Region: 1/0", 50, 40)
    b.kernel("triton_poi_fused_add_0", launch=60, start=62, dur=18)
    b.kernel("void at::native::reduce_kernel<512>", launch=120, start=125, dur=5)
    b.annotation("## Call CompiledFxGraph abc ##", 0, 200)
    return b.trace()


def _training_step(b: _Events, step: int, t0: float) -> None:
    """One keyed training step (torch 2.11 names) with a graph break; see test_training_* for the numbers."""
    b.span(f"ProfilerStep#{step}", t0, 1000, cat="user_annotation")
    b.span("Torch-Compiled Region: 0/0", t0 + 10, 390)
    b.span("CompiledFunction", t0 + 20, 130)
    b.kernel("void at::native::vectorized_elementwise_kernel<4>", t0 + 25, t0 + 26, 3)  # runtime-wrapper prologue
    b.span("## Call CompiledFxGraph aaaa ##", t0 + 30, 110)
    b.kernel("triton_poi_fused_add_0", t0 + 40, t0 + 45, 15)
    b.kernel("triton_red_fused_sum_1", t0 + 50, t0 + 60, 30)
    b.kernel("void at::native::elementwise_kernel<128>", t0 + 200, t0 + 205, 10)  # eager, at the graph break
    b.span("Torch-Compiled Region: 1/0", t0 + 250, 140)
    b.span("CompiledFunction", t0 + 260, 120)
    b.span("## Call CompiledFxGraph bbbb ##", t0 + 270, 100)
    b.kernel("triton_poi_fused_add_0", t0 + 280, t0 + 285, 15)
    b.span("CompiledFunctionBackward", t0 + 500, 200, tid=2)
    b.span("## Call CompiledFxGraph cccc ##", t0 + 510, 180, tid=2)
    b.annotation("## Call CompiledFxGraph cccc ##", t0 + 505, 195)
    b.kernel("triton_per_fused_0", t0 + 520, t0 + 530, 30, tid=2)
    b.kernel("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n", t0 + 530, t0 + 540, 60, tid=2, stream=8)
    b.kernel("Memcpy DtoD (Device -> Device)", t0 + 600, t0 + 600, 10, tid=2, cat="gpu_memcpy")
    b.kernel("void at::native::reduce_kernel<512>", t0 + 990, t0 + 995, 105)  # runs past the step's end


def _training() -> Trace:
    b = _Events()
    b.kernel("triton_poi_fused_add_0", launch=-50, start=-45, dur=5)  # before the profiled steps: dropped
    _training_step(b, 1, 0)
    _training_step(b, 2, 2000)
    return b.trace()


def _table(graphs: list[GraphAnalysis]) -> list[tuple[object, ...]]:
    return [(g.graph, g.label, g.key, g.kind, g.calls, g.kernel_time_us) for g in graphs]


def _kernels(graph: GraphAnalysis) -> dict[str, tuple[str, float, int]]:
    return {k.name: (k.category, k.device_time_us, k.count) for k in graph.kernels}


# --- synthetic: nested regions, annotations, steps ---------------------------------------------------


def test_nested_regions_without_keys() -> None:
    result = attribute_graphs(_nested_regions(), "cuda")
    assert _table(result.graphs) == [
        (0, "inference (graph 0)", "Torch-Compiled Region: 0/0", "inference", 1, 15.0),
        (1, "inference (graph 1)", "Torch-Compiled Region: 1/0", "inference", 1, 18.0),
        (None, OUTSIDE_LABEL, None, "unknown", 0, 5.0),
    ]
    inner = result.graphs[1]
    assert _kernels(inner) == {"triton_poi_fused_add_0": ("triton_pointwise", 18.0, 1)}
    assert inner.kernels[0].graph == 1
    assert inner.busy_union_percent == pytest.approx(100 * 18 / 40)
    assert result.graphs[0].busy_union_percent == pytest.approx(100 * 15 / 100)
    assert result.graphs[0].categories_us == {"triton_pointwise": 10.0, "aten_native": 5.0}
    assert result.graphs[2].busy_union_percent is None


def test_cuda_graph_replay_wall_is_the_kernels_window_not_the_launch_span() -> None:
    """Under CUDA graphs the call's CPU span is the replay's launch; its kernels run long after it."""
    b = _Events()
    b.span("Torch-Compiled Region: 0/0", 0, 10)
    b.kernel("triton_poi_fused_add_0", launch=5, start=8, dur=40)
    b.kernel("triton_red_fused_sum_1", launch=6, start=60, dur=40)  # 12 us idle between the two
    (graph,) = attribute_graphs(b.trace(), "cuda").graphs
    assert (graph.kernel_time_us, graph.wall_us) == (80.0, 100.0)  # the span alone is 10 us
    assert graph.busy_union_percent == pytest.approx(80.0)


def test_gpu_user_annotation_is_not_work() -> None:
    result = attribute_graphs(_nested_regions(), "cuda")
    names = {k.name for g in result.graphs for k in g.kernels}
    assert not any(name.startswith("##") for name in names)
    (step,) = result.steps
    # whole trace: the 200 us annotation neither extends the window nor counts as busy
    assert (step.step, step.wall_us, step.kernel_time_us, step.busy_union_us) == (-1, 130.0, 38.0, 38.0)
    assert (step.window, step.window_start_us, step.note) == ("whole trace", 0.0, None)
    assert step.idle_us == 92.0
    assert step.gap_count == 4


def test_training_graphs_by_key() -> None:
    result = attribute_graphs(_training(), "cuda")
    assert _table(result.graphs) == [
        (0, "forward (graph 0)", "aaaa", "forward", 2, 96.0),
        (1, "forward (graph 1)", "bbbb", "forward", 2, 30.0),
        (2, "backward (graph 2)", "cccc", "backward", 2, 200.0),
        (None, OUTSIDE_LABEL, None, "unknown", 0, 230.0),
    ]
    first, second, backward, outside = result.graphs
    # the calls' CPU spans sum to 220 us; their kernels end after them: each window stretches by 4 us
    assert first.wall_us == 228.0
    # the prologue kernel in CompiledFunction but outside the Call belongs to the graph it wraps
    assert _kernels(first) == {
        "triton_red_fused_sum_1": ("triton_reduction", 60.0, 2),
        "triton_poi_fused_add_0": ("triton_pointwise", 30.0, 2),
        "void at::native::vectorized_elementwise_kernel<4>": ("aten_native", 6.0, 2),
    }
    assert [k.share for k in first.kernels] == pytest.approx([60 / 96, 30 / 96, 6 / 96])
    assert first.busy_union_percent == pytest.approx(100 * 48 / 114)
    assert second.busy_union_percent == pytest.approx(15.0)
    assert backward.busy_union_percent == pytest.approx(100 * 80 / 180)
    assert backward.categories_us == {"extern_gemm": 120.0, "triton_persistent_reduction": 60.0, "memcpy": 20.0}
    # eager kernel at the graph break (Region 0/0 wraps two graphs) and the tail kernel: outside
    assert _kernels(outside) == {
        "void at::native::reduce_kernel<512>": ("aten_native", 210.0, 2),
        "void at::native::elementwise_kernel<128>": ("aten_native", 20.0, 2),
    }


def test_training_steps() -> None:
    result = attribute_graphs(_training(), "cuda")
    assert [(s.step, s.wall_us, s.kernel_time_us, s.busy_union_us, s.idle_us, s.gap_count) for s in result.steps] == [
        (1, 1100.0, 278.0, 258.0, 842.0, 6),
        (2, 1100.0, 278.0, 258.0, 842.0, 6),
    ]
    assert result.steps[0].busy_percent == pytest.approx(100 * 258 / 1100)
    # the spans are 1000 us apart: step 2's window starts at its span, the time between lies in no window
    assert [(s.window, s.window_start_us, s.note) for s in result.steps] == [("step", 0, None), ("step", 2000, None)]
    assert result.idle is not None
    assert result.idle.total_idle_us == 2 * 842.0
    assert sum(result.idle.counts) == 12
    assert result.timeline == [(26, 29), (45, 90), (205, 215), (285, 300), (530, 610), (995, 1100)]


def test_kernel_without_launch_is_outside() -> None:
    b = _Events()
    b.span("Torch-Compiled Region: 0/0", 0, 100)
    b.events.append(
        {
            "ph": "X",
            "cat": "kernel",
            "name": "triton_poi_fused_0",
            "pid": 0,
            "tid": 7,
            "ts": 10,
            "dur": 5,
            "args": {"correlation": 99},
        }
    )
    (graph,) = attribute_graphs(b.trace(), "cuda").graphs[1:]
    assert (graph.graph, graph.kernel_time_us) == (None, 5.0)


def test_cpu_ops_attributed_by_their_own_spans() -> None:
    b = _Events()
    b.span("ProfilerStep#0", 0, 200, cat="user_annotation")
    b.span("Torch-Compiled Region: 0/0", 10, 100)
    b.span("Pregraph bytecode", 12, 3)
    b.span("## Call CompiledFxGraph kkkk ##", 20, 80)
    b.span("graph_0_cpp_fused_add_0", 30, 40)
    b.span("aten::empty", 35, 5)
    b.span("aten::sum", 150, 10)
    result = attribute_graphs(b.trace(), "cpu")
    assert _table(result.graphs) == [
        (0, "inference (graph 0)", "kkkk", "inference", 1, 43.0),
        (None, OUTSIDE_LABEL, None, "unknown", 0, 10.0),
    ]
    assert _kernels(result.graphs[0]) == {
        "graph_0_cpp_fused_add_0": ("cpp_fused", 35.0, 1),
        "Pregraph bytecode": ("other", 3.0, 1),
        "aten::empty": ("aten_native", 5.0, 1),
    }
    (step,) = result.steps
    assert (step.step, step.wall_us, step.busy_union_us) == (0, 200.0, 53.0)


def test_empty_trace() -> None:
    result = attribute_graphs(Trace(path=Path("empty.json"), events=[]), "cuda")
    assert result.graphs == []
    assert [(s.step, s.wall_us, s.busy_percent) for s in result.steps] == [(-1, 0.0, 0.0)]


# --- real traces: H100 fixture (3 steps, no step markers) and H200 bundle ---------------------------

# (kind, calls, distinct kernels, launches, kernel time us, busy union %, category shares) per graph
H100_GRAPHS = [
    (
        "forward",
        3,
        280,
        2334,
        26986.7,
        21.29,
        {
            "conv": 0.3976,
            "triton_pointwise": 0.3516,
            "triton_reduction": 0.1489,
            "extern_gemm": 0.0825,
            "triton_persistent_reduction": 0.0189,
            "memset": 0.0005,
        },
    ),
    (
        "backward",
        3,
        371,
        3786,
        76226.2,
        44.85,
        {
            "conv": 0.4278,
            "aten_native": 0.1748,
            "triton_pointwise": 0.1583,
            "triton_reduction": 0.1471,
            "extern_gemm": 0.074,
            "triton_persistent_reduction": 0.0086,
            "memset": 0.0077,
            "memcpy": 0.0015,
        },
    ),
    ("unknown", 0, 6, 927, 1526.7, None, {"aten_native": 1.0}),
]
H200_GRAPHS = [
    (
        "forward",
        3,
        286,
        2346,
        24472.1,
        19.09,
        {
            "conv": 0.4173,
            "triton_pointwise": 0.3185,
            "triton_reduction": 0.1523,
            "extern_gemm": 0.0915,
            "triton_persistent_reduction": 0.0199,
            "memset": 0.0006,
        },
    ),
    (
        "backward",
        3,
        370,
        3822,
        68930.1,
        56.35,
        {
            "conv": 0.4465,
            "aten_native": 0.1814,
            "triton_reduction": 0.141,
            "triton_pointwise": 0.1404,
            "extern_gemm": 0.0729,
            "triton_persistent_reduction": 0.0088,
            "memset": 0.0078,
            "memcpy": 0.0014,
        },
    ),
    ("unknown", 0, 5, 15, 45.7, None, {"aten_native": 1.0}),
]


@pytest.fixture(scope="module")
def h100() -> GraphAttribution:
    assert H100.is_file(), f"missing test fixture {H100} (shared/ must sit beside the repository)"
    return attribute_graphs(load_trace(H100), "cuda")


@pytest.fixture(scope="module")
def h200_trace() -> Trace:
    return load_trace(H200)


def _summary(graphs: list[GraphAnalysis]) -> list[tuple[object, ...]]:
    rows = []
    for g in graphs:
        shares = {name: round(us / g.kernel_time_us, 4) for name, us in g.categories_us.items()}
        busy = None if g.busy_union_percent is None else round(g.busy_union_percent, 2)
        launches = sum(k.count for k in g.kernels)
        rows.append((g.kind, g.calls, len(g.kernels), launches, round(g.kernel_time_us, 1), busy, shares))
    return rows


def _with_step_markers(trace: Trace) -> Trace:
    """The trace with `ProfilerStep#1..N` added: each step from one `TorchDynamo Cache Lookup` to the next."""
    events = list(trace.events)
    lookups = sorted((e for e in events if e.get("name") == "TorchDynamo Cache Lookup"), key=lambda e: e["ts"])
    end = max(e["ts"] + e["dur"] for e in events if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver"))
    bounds = [e["ts"] for e in lookups] + [end]
    for n, lookup in enumerate(lookups, start=1):
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{n}",
                "pid": lookup["pid"],
                "tid": lookup["tid"],
                "ts": bounds[n - 1],
                "dur": bounds[n] - bounds[n - 1],
            }
        )
    return Trace(path=trace.path, events=events)


def test_h100_graphs(h100: GraphAttribution) -> None:
    assert _summary(h100.graphs) == H100_GRAPHS
    assert [g.key for g in h100.graphs] == [
        "fry36jhsuvyntpbijvrkpvtdg7g2sblz76w3g6eoa6ywebghwax4",
        "faapasdlg4is7dipsolyoprw7sumoxy57rhl62og6z6wpd3mrx5l",
        None,
    ]
    assert [g.label for g in h100.graphs] == ["forward (graph 0)", "backward (graph 1)", OUTSIDE_LABEL]


def _triton_launches(graphs: list[GraphAnalysis]) -> int:
    return sum(k.count for g in graphs if g.graph is not None for k in g.kernels if k.name.startswith("triton_"))


def test_h100_every_triton_kernel_in_a_graph(h100: GraphAttribution) -> None:
    outside = h100.graphs[-1]
    assert outside.graph is None
    assert not any(k.name.startswith("triton_") for k in outside.kernels)
    assert _triton_launches(h100.graphs) == 3417  # every Triton kernel event of the trace


def test_h100_total_matches_kernel_table(h100: GraphAttribution) -> None:
    (step,) = h100.steps
    assert sum(g.kernel_time_us for g in h100.graphs) == pytest.approx(step.kernel_time_us)
    assert (step.step, round(step.wall_us, 1), round(step.kernel_time_us, 1)) == (-1, 343988.2, 104739.6)
    assert (round(step.busy_union_us, 1), round(step.busy_percent, 2), step.gap_count) == (104736.7, 30.45, 7023)
    assert len(h100.timeline) == 5000  # capped


def test_h200_graphs(h200_trace: Trace) -> None:
    result = attribute_graphs(h200_trace, "cuda")
    assert _summary(result.graphs) == H200_GRAPHS
    assert not any(k.name.startswith("triton_") for k in result.graphs[-1].kernels)
    assert _triton_launches(result.graphs) == 3417  # every Triton kernel event of the trace
    (step,) = result.steps  # this bundle's trace has no ProfilerStep markers
    assert (step.step, round(step.busy_percent, 2), step.gap_count) == (-1, 33.11, 6163)


def test_h200_steps(h200_trace: Trace) -> None:
    result = attribute_graphs(_with_step_markers(h200_trace), "cuda")
    assert _summary(result.graphs) == H200_GRAPHS
    rows = [
        (s.step, round(s.wall_us, 1), round(s.kernel_time_us, 1), round(s.busy_percent, 2), s.gap_count)
        for s in result.steps
    ]
    assert rows == [
        (1, 100153.3, 31183.4, 31.13, 2055),
        (2, 91716.2, 31131.1, 33.94, 2057),
        (3, 91340.7, 31133.4, 34.08, 2053),
    ]
    # the markers' spans adjoin and no step's kernels run past the next step's start: the windows tile the
    # three steps without overlap, over the same time as the whole-trace window
    ends = [s.window_start_us + s.wall_us for s in result.steps]
    assert [s.window_start_us for s in result.steps[1:]] == ends[:-1]
    assert sum(s.wall_us for s in result.steps) == pytest.approx(ends[-1] - result.steps[0].window_start_us)
    assert [s.note for s in result.steps] == [None] * 3
    assert result.idle is not None
    assert result.idle.total_idle_us == pytest.approx(sum(s.idle_us for s in result.steps))
    assert sum(result.idle.counts) == 6163  # the whole trace's gaps: none cut in two at a step boundary
    assert len(result.timeline) == 2056  # step 3, the median wall
    assert result.timeline[-1][1] <= result.steps[2].wall_us


# --- seed numbers (wrapper.py -p) and the stage entry --------------------------------------------------


def _benchmark_events(scale: float = 1.0) -> list[dict[str, Any]]:
    """Two profiled calls of one graph: 30 us of device work per call (x scale)."""
    b = _Events()
    for call in range(2):
        t0 = call * 1000
        b.span("## Call CompiledFxGraph aaaa ##", t0, 100)
        b.annotation("## Call CompiledFxGraph aaaa ##", t0, 500)
        for n, (name, dur) in enumerate(
            [
                ("triton_poi_fused_0", 10),
                ("triton_red_fused_1", 6),
                ("triton_per_fused_2", 4),
                ("triton_tem_fused_mm_3", 3),
                ("void cudnn::cnn::conv2d_grouped", 5),
            ]
        ):
            b.kernel(name, t0 + n, t0 + 10 * n, dur * scale)
        b.kernel("Memcpy DtoD (Device -> Device)", t0 + 9, t0 + 90, 2 * scale, cat="gpu_memcpy")
    return b.events


def _graph_benchmark(graph: int, kind: str, wall_ms: float, trace_file: str | None) -> GraphBenchmark:
    return GraphBenchmark(
        graph=graph,
        wrapper=f"modules/wrappers/w{graph}.py",
        kind=kind,  # type: ignore[arg-type]
        wall_ms_per_call=wall_ms,
        times=10,
        repeat=10,
        profiled_calls=2,
        trace_file=trace_file,
    )


def test_seed_bucket_mirrors_upstream() -> None:
    assert [
        seed_bucket(n)
        for n in (
            "triton_poi_fused_0",
            "triton_red_x",
            "triton_per_x",
            "triton_tem_x",
            "triton_",
            "Memcpy DtoD",
            "sm90_xmma_gemm",
        )
    ] == ["pointwise", "reduction", "persistent_reduction", "other", "other", "other", "other"]


def test_seed_busy() -> None:
    trace = Trace(path=Path("bench.json"), events=_benchmark_events())
    seed = seed_busy(trace, _graph_benchmark(0, "forward", 0.06, "bench.json"))
    assert seed is not None
    assert seed.busy_percent == pytest.approx(50.0)  # 30 us per call / 60 us; the annotation is excluded
    assert seed.categories_percent == pytest.approx(
        {"pointwise": 100 * 10 / 60, "reduction": 10.0, "persistent_reduction": 100 * 4 / 60, "other": 100 * 10 / 60}
    )
    assert seed_busy(trace, _graph_benchmark(0, "forward", 0.0, None)) is None


def test_match_benchmarks_by_kind_and_order() -> None:
    graphs = attribute_graphs(_training(), "cuda").graphs
    benchmarks = [
        _graph_benchmark(2, "backward", 1, None),
        _graph_benchmark(0, "forward", 1, None),
        _graph_benchmark(1, "forward", 1, None),
        _graph_benchmark(3, "inference", 1, None),
    ]
    matches = match_benchmarks(graphs, benchmarks)
    assert {number: benchmark.graph for number, benchmark in matches.items()} == {0: 0, 1: 1, 2: 2}


def _manifest(trace_file: str) -> Manifest:
    recipe = Recipe.model_validate(
        {
            "name": "synthetic",
            "model": {"ref": "timm:mixnet_l"},
            "inputs": {"batch_size": 2, "tensors": [{"shape": [3, 8, 8]}]},
            "profile": {"profiled_steps": 2},
        }
    )
    environment = Environment(
        device="cuda",
        device_name="NVIDIA H100 80GB HBM3",
        versions=Versions(python="3.11.9", reportgen="0.1.0", platform="linux"),
        host=HostInfo(cpu="x86_64", cpu_count=16),
    )
    return Manifest(
        name="synthetic",
        recipe=recipe,
        recipe_sha256="0" * 64,
        recipe_path="recipes/synthetic.yaml",
        status=RunStatus.ok,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:05:00Z",
        wall_time_s=300.0,
        environment=environment,
        trace_file=trace_file,
    )


def test_analyze_fills_graphs_steps_and_seed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "trace.json").write_bytes(orjson.dumps({"traceEvents": _training().events}))
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "g0.json").write_bytes(orjson.dumps({"traceEvents": _benchmark_events()}))
    (tmp_path / "bench" / "g2.json").write_bytes(orjson.dumps({"traceEvents": _benchmark_events(scale=3)}))
    capture = Capture(
        graph_benchmarks=[
            _graph_benchmark(0, "forward", 0.06, "bench/g0.json"),
            _graph_benchmark(1, "forward", 0.06, "bench/missing.json"),
            _graph_benchmark(2, "backward", 0.1, "bench/g2.json"),
        ]
    )
    with caplog.at_level(logging.WARNING, logger="reportgen.analyze"):
        analysis = analyze(tmp_path, _manifest("trace.json"), capture)
    assert [g.busy_seed_percent for g in analysis.graphs] == pytest.approx([50.0, None, 90.0, None])
    assert analysis.graphs[2].seed_categories_percent["pointwise"] == pytest.approx(30.0)
    assert analysis.graphs[1].seed_categories_percent == {}
    assert "skipping the benchmark trace of graph 1: " in caplog.text
    assert [s.step for s in analysis.steps] == [1, 2]
    assert analysis.idle is not None
    assert len(analysis.timeline) == 6
    assert isinstance(analysis.kernels, KernelTable)
    assert Analysis.model_validate_json(analysis.model_dump_json()) == analysis
    without = analyze(tmp_path, _manifest("trace.json"))
    assert [g.busy_seed_percent for g in without.graphs] == [None] * 4
