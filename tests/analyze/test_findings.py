"""Tests of reportgen.analyze.findings: each rule fires with its numbers, and stays quiet at its threshold."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from reportgen.analyze import analyze
from reportgen.analyze.findings import (
    AUTOTUNE_COMPILE_MIN_S,
    LAUNCH_BOUND_BUSY_PERCENT,
    LAUNCH_BOUND_LAUNCHES_PER_CALL,
    LAUNCH_BOUND_MEAN_KERNEL_US,
    LISTED_MAX,
    RULES,
    FindingInputs,
    autotune_compile,
    compiled_slower,
    cpu_run,
    findings,
    graph_breaks,
    launch_bound,
    low_bandwidth,
    no_significant_difference,
    noisy_host,
    recompiles,
)
from reportgen.analyze.peak import peak_bandwidth
from reportgen.analyze.timing import timing_summary
from reportgen.bundle import (
    Analysis,
    Capture,
    CompileDiagnostics,
    DistributedRun,
    Environment,
    GpuInfo,
    GraphAnalysis,
    GraphBreak,
    GraphKernel,
    HostInfo,
    Interval,
    Kernel,
    KernelBenchmark,
    KernelTable,
    Manifest,
    Metrics,
    Recompile,
    RegionEvidence,
    RunStatus,
    StepTimes,
    TimingSummary,
    Versions,
    load_bundle,
    reason_headline,
)
from reportgen.recipe.model import Recipe
from tests.data import BUNDLES_DIR, DATA_DIR, H100_HOST_PROBE

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "data" / "h200-mixnet_l" / "trace.json.gz"

BREAK_REASON = """\
Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None
"""


# --- builders ------------------------------------------------------------------------------------------


def _times(median_ms: float, q1_ms: float | None = None, q3_ms: float | None = None) -> StepTimes:
    q1 = median_ms * 0.98 if q1_ms is None else q1_ms
    q3 = median_ms * 1.02 if q3_ms is None else q3_ms
    return StepTimes(samples_ms=[q1, median_ms, q3], median_ms=median_ms, q1_ms=q1, q3_ms=q3, min_ms=q1, max_ms=q3)


def _manifest(
    device: str = "cuda",
    metrics: Metrics | None = None,
    peak_gbps: float | None = 4800.0,
) -> Manifest:
    recipe = Recipe.model_validate(
        {"name": "r", "model": {"ref": "timm:mixnet_l"}, "inputs": {"batch_size": 2, "tensors": [{"shape": [3]}]}}
    )
    gpus = [
        GpuInfo(
            index=0,
            name="NVIDIA H200",
            total_memory_bytes=1,
            multiprocessor_count=132,
            capability="9.0",
            peak_bandwidth_gbps=peak_gbps,
        )
    ]
    environment = Environment(
        device=device,  # type: ignore[arg-type]
        device_name="NVIDIA H200" if device == "cuda" else "AMD EPYC",
        versions=Versions(python="3.12", reportgen="0.1.0", platform="linux"),
        host=HostInfo(cpu="x86_64", cpu_count=16),
        gpus=gpus if device == "cuda" else [],
    )
    return Manifest(
        name="r",
        recipe=recipe,
        recipe_sha256="0" * 64,
        recipe_path="recipes/r.yaml",
        status=RunStatus.ok,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:05:00Z",
        wall_time_s=300.0,
        environment=environment,
        metrics=metrics or Metrics(eager=_times(100.0), compiled=_times(80.0)),
        trace_file="trace.json.gz",
    )


def _graph(
    busy_seed: float | None,
    busy_union: float | None = 30.0,
    mean_us: float = 10.0,
    launches_per_call: int = 50,
    calls: int = 3,
    number: int | None = 0,
) -> GraphAnalysis:
    count = launches_per_call * calls
    kernel = GraphKernel(
        graph=number,
        name="triton_poi_fused_0",
        category="triton_pointwise",
        device_time_us=mean_us * count,
        count=count,
        share=1.0,
    )
    return GraphAnalysis(
        graph=number,
        label="forward (graph 0)" if number is not None else "outside compiled regions",
        key="k",
        kind="forward",
        calls=calls,
        wall_us=1000.0,
        kernel_time_us=mean_us * count,
        busy_union_percent=busy_union,
        busy_seed_percent=busy_seed,
        kernels=[kernel],
    )


def _analysis(graphs: list[GraphAnalysis] | None = None, kernels: list[Kernel] | None = None, **extra: Any) -> Analysis:
    table = KernelTable(device="cuda", profiled_steps=3, total_us=1000.0, kernels=kernels or [])
    return Analysis(kernels=table, graphs=graphs or [], **extra)


def _inputs(
    manifest: Manifest | None = None, capture: Capture | None = None, analysis: Analysis | None = None
) -> FindingInputs:
    manifest, capture, analysis = manifest or _manifest(), capture or Capture(), analysis or _analysis()
    peak = peak_bandwidth(manifest.environment, capture)  # as `analyze` stores it before the rules run
    return FindingInputs(manifest, capture, analysis.model_copy(update={"peak": peak}))


def _diagnostics(**fields: Any) -> Capture:
    return Capture(diagnostics=CompileDiagnostics(**fields))


# --- compiled slower than eager ------------------------------------------------------------------------


def test_compiled_slower_fires_with_times_and_interval_verdict() -> None:
    apart = Metrics(eager=_times(80.0, 79.0, 81.0), compiled=_times(100.0, 98.0, 103.0))
    finding = compiled_slower(_inputs(_manifest(metrics=apart)))
    assert finding is not None
    assert (finding.rule, finding.severity, finding.title) == (
        "compiled-slower",
        "problem",
        "Compiled is slower than eager (0.80x)",
    )
    assert finding.evidence.splitlines() == [
        "Median step: compiled 100.00 ms (95 % interval 98.00–103.00 ms), eager 80.00 ms (95 % interval "
        "79.00–81.00 ms); speedup 0.80x.",
        "The speedup's 95 % interval 0.79–0.81x lies below 1 and the inter-quartile ranges do not overlap: the "
        "slowdown is not run-to-run noise.",
    ]
    assert 'mode="reduce-overhead"' in finding.suggestion and 'mode="max-autotune"' in finding.suggestion


def test_compiled_slower_beyond_the_noise_but_within_the_spread_is_a_warning() -> None:
    # Compiled is 1 % slower in every pair of blocks: the interval excludes 1, the IQRs overlap.
    small = Metrics(eager=_times(99.0, 95.0, 104.0), compiled=_times(100.0, 96.0, 105.0))
    finding = compiled_slower(_inputs(_manifest(metrics=small)))
    assert finding is not None and finding.severity == "warning"
    assert "lies below 1, so the slowdown is not run-to-run noise; the inter-quartile ranges overlap" in (
        finding.evidence
    )
    assert no_significant_difference(_inputs(_manifest(metrics=small))) is None


def test_compiled_slower_on_recorded_samples() -> None:
    recorded = load_bundle(BUNDLES_DIR / "fused_add_mul").manifest.metrics  # 0.94x, 20 blocks each
    finding = compiled_slower(_inputs(_manifest(metrics=recorded)))
    assert finding is not None and finding.severity == "problem"
    assert "Median step: compiled 0.125 ms (95 % interval 0.12" in finding.evidence
    assert "eager 0.118 ms (95 % interval 0.116–0.119 ms); speedup 0.94x." in finding.evidence
    assert no_significant_difference(_inputs(_manifest(metrics=recorded))) is None


def test_compiled_slower_without_samples_is_a_warning() -> None:
    eager, compiled = _times(80.0, 79.0, 81.0), _times(100.0, 98.0, 103.0)
    empty = Metrics(eager=eager.model_copy(update={"samples_ms": []}), compiled=compiled)
    finding = compiled_slower(_inputs(_manifest(metrics=empty)))
    assert finding is not None and finding.severity == "warning"
    assert "compiled 100.00 ms (IQR 98.00–103.00 ms), eager 80.00 ms (IQR 79.00–81.00 ms)" in finding.evidence
    assert "No samples to resample" in finding.evidence


@pytest.mark.parametrize(
    ("mode", "device", "expected", "absent"),
    [
        ("default", "cuda", ['mode="reduce-overhead"', 'mode="max-autotune"'], []),
        ("default", "cpu", ['mode="max-autotune"'], ["reduce-overhead"]),
        ("reduce-overhead", "cuda", ['mode="max-autotune"'], ['mode="reduce-overhead"']),
        ("max-autotune", "cuda", ["slowest kernels"], ["mode="]),
        ("max-autotune-no-cudagraphs", "cuda", ['mode="reduce-overhead"'], ['mode="max-autotune"']),
    ],
)
def test_compiled_slower_suggests_only_modes_not_tried(
    mode: str, device: str, expected: list[str], absent: list[str]
) -> None:
    slow = Metrics(eager=_times(80.0), compiled=_times(100.0))
    manifest = _manifest(device=device, metrics=slow)
    recipe = manifest.recipe.model_copy(update={"compile": manifest.recipe.compile.model_copy(update={"mode": mode})})
    finding = compiled_slower(_inputs(manifest.model_copy(update={"recipe": recipe})))
    assert finding is not None
    assert all(text in finding.suggestion for text in expected), finding.suggestion
    assert not any(text in finding.suggestion for text in absent), finding.suggestion


@pytest.mark.parametrize("compiled_ms", [100.0, 99.0])
def test_compiled_slower_quiet_at_speedup_one_and_above(compiled_ms: float) -> None:
    metrics = Metrics(eager=_times(100.0), compiled=_times(compiled_ms))
    assert compiled_slower(_inputs(_manifest(metrics=metrics))) is None
    assert compiled_slower(_inputs(_manifest(metrics=Metrics(eager=_times(100.0))))) is None


def test_compiled_slower_on_cpu_does_not_suggest_cuda_graphs() -> None:
    metrics = Metrics(eager=_times(1.0), compiled=_times(1.5))
    finding = compiled_slower(_inputs(_manifest(device="cpu", metrics=metrics)))
    assert finding is not None and "reduce-overhead" not in finding.suggestion


# --- no significant difference -----------------------------------------------------------------------


def _noisy() -> Metrics:
    """Recorded eager blocks; compiled: the same blocks taken at other times, 1 % slower (0.99x)."""
    eager = load_bundle(BUNDLES_DIR / "fused_add_mul").manifest.metrics.eager
    assert eager is not None
    samples = [x * 1.01 for x in eager.samples_ms[7:] + eager.samples_ms[:7]]
    compiled = eager.model_copy(
        update={"samples_ms": samples, **{f: getattr(eager, f) * 1.01 for f in ("median_ms", "q1_ms", "q3_ms")}}
    )
    return Metrics(eager=eager, compiled=compiled)


def test_no_significant_difference_fires_with_interval_and_noise() -> None:
    inputs = _inputs(_manifest(metrics=_noisy()))
    finding = no_significant_difference(inputs)
    assert finding is not None
    assert (finding.rule, finding.severity, finding.title) == (
        "no-significant-difference",
        "info",
        "No significant difference between compiled and eager (speedup 0.99x)",
    )
    summary = timing_summary(_noisy())
    interval = summary.speedup_ci if summary is not None else None
    assert interval is not None and interval.low < 1.0 < interval.high
    lines = finding.evidence.splitlines()
    assert lines[0] == (
        f"Speedup 0.99x, 95 % interval {interval.low:.2f}–{interval.high:.2f}x: the interval contains 1, so this "
        "run cannot tell compiled from eager."
    )
    assert lines[1].startswith("Median step: compiled 0.119 ms (95 % interval ")
    assert lines[2] == (
        "Run-to-run noise (coefficient of variation of the blocks): eager 13.9 %, compiled 13.9 %; 20 blocks of "
        "1 step each."
    )
    assert "`profile.steps`" in finding.suggestion and "quieter machine" in finding.suggestion


def test_no_significant_difference_replaces_compiled_slower() -> None:
    noisy = _noisy()
    assert noisy.speedup is not None and noisy.speedup < 1.0
    assert compiled_slower(_inputs(_manifest(metrics=noisy))) is None
    found = [f.rule for f in findings(_manifest(metrics=noisy), None, _analysis())]
    assert found == ["no-significant-difference"]


@pytest.mark.parametrize(
    "metrics",
    [
        Metrics(eager=_times(100.0), compiled=_times(80.0)),  # faster beyond the noise
        Metrics(eager=_times(80.0), compiled=_times(100.0)),  # slower beyond the noise
        Metrics(eager=_times(100.0)),  # compiled not timed
    ],
)
def test_no_significant_difference_quiet_outside_the_interval(metrics: Metrics) -> None:
    assert no_significant_difference(_inputs(_manifest(metrics=metrics))) is None


def test_timing_rules_read_the_analysis_timing() -> None:
    slower = Metrics(eager=_times(80.0), compiled=_times(100.0))  # its own samples: 0.80x beyond the noise
    stored = TimingSummary(speedup_ci=Interval(low=0.7, high=1.1))
    inputs = _inputs(_manifest(metrics=slower), analysis=_analysis(timing=stored))
    finding = no_significant_difference(inputs)
    assert finding is not None and "95 % interval 0.70–1.10x" in finding.evidence
    assert "Run-to-run noise (coefficient of variation of the blocks): eager unknown" in finding.evidence
    assert compiled_slower(inputs) is None


# --- graph breaks --------------------------------------------------------------------------------------


_REAL_BREAKS = json.loads((DATA_DIR / "h200-nccl-2ranks" / "graph-breaks.json").read_text(encoding="utf-8"))
"""The compile diagnostics' breaks of recipes/resnet50_ddp.yaml (`ddp`) and transformer_fsdp2 (`fsdp2`), 2 x H200."""


def _distributed(strategy: str) -> Manifest:
    run = DistributedRun(world_size=2, strategy=strategy, backend="nccl", ranks=[])  # type: ignore[arg-type]
    return _manifest().model_copy(update={"distributed": run})


@pytest.mark.parametrize(("strategy", "name"), [("ddp", "DDP"), ("fsdp2", "FSDP2")])
def test_breaks_in_the_distributed_wrappers_own_code_are_by_design(strategy: str, name: str) -> None:
    """Real breaks: DDP's logger call and its `_inside_ddp_forward` (reached through contextlib), FSDP2's
    `torch._dynamo.disable`d hooks: an info finding, not a warning to fix the model's code."""
    breaks = [GraphBreak(**b) for b in _REAL_BREAKS[strategy]]
    finding = graph_breaks(_inputs(manifest=_distributed(strategy), capture=_diagnostics(graph_breaks=breaks)))
    assert finding is not None
    assert (finding.severity, finding.title) == ("info", f"3 graph breaks in {name}'s own code, by design")
    assert "/torch/" in finding.evidence
    alone = graph_breaks(_inputs(capture=_diagnostics(graph_breaks=breaks)))  # not a distributed run: as ever
    assert alone is not None and (alone.severity, alone.title) == ("warning", "3 graph breaks")
    mine = GraphBreak(reason=BREAK_REASON, location="models.py:29")
    both = graph_breaks(_inputs(manifest=_distributed(strategy), capture=_diagnostics(graph_breaks=[*breaks, mine])))
    assert both is not None and (both.severity, both.title) == ("warning", "1 graph break")
    assert "Besides these, 3 breaks in the distributed wrapper's own code (by design)." in both.evidence


def test_graph_breaks_list_reason_headlines_locations_and_regions() -> None:
    capture = _diagnostics(
        graph_breaks=[
            GraphBreak(reason=BREAK_REASON, location="models.py:29"),
            GraphBreak(reason="data-dependent branching", location=None, count=2),
        ]
    )
    regions = RegionEvidence(compiled_regions=4, nested_regions=9, compiled_function_blocks_per_step=4.0)
    finding = graph_breaks(_inputs(capture=capture, analysis=_analysis(regions=regions)))
    assert finding is not None
    assert (finding.rule, finding.severity, finding.title) == ("graph-breaks", "warning", "3 graph breaks")
    assert finding.evidence.splitlines() == [
        "3 graph breaks:",
        "- Call to `torch._dynamo.graph_break()` at `models.py:29`",
        "- data-dependent branching (2x)",
        "The profiled trace (3 steps) shows 4 compiled regions, 9 region events nested inside another and "
        "4.0 `CompiledFunction` blocks per step.",
    ]
    assert "`fullgraph=True`" in finding.suggestion


def test_graph_breaks_quiet_without_breaks_and_lists_at_most_a_few() -> None:
    assert graph_breaks(_inputs(capture=_diagnostics(graph_breaks=[]))) is None
    many = [GraphBreak(reason=f"reason {i}", location=f"m.py:{i}") for i in range(LISTED_MAX + 2)]
    finding = graph_breaks(_inputs(capture=_diagnostics(graph_breaks=many)))
    assert finding is not None and finding.title == f"{LISTED_MAX + 2} graph breaks"
    assert "- and 2 more" in finding.evidence and "reason 5" not in finding.evidence


def test_reason_headline_skips_the_generic_header() -> None:
    assert reason_headline(BREAK_REASON) == "Call to `torch._dynamo.graph_break()`"
    assert reason_headline("\n  Encountered graph break when tracing\n") == "Encountered graph break when tracing"
    assert reason_headline("  size mismatch at index 0. expected 8, actual 16\nmore") == (
        "size mismatch at index 0. expected 8, actual 16"
    )
    assert reason_headline("") == ""


# --- recompiles ----------------------------------------------------------------------------------------


def test_recompiles_list_frames_and_guards() -> None:
    capture = _diagnostics(
        recompiles=[Recompile(frame="forward", reason="tensor 'x' size mismatch at index 0. expected 8, actual 16")]
    )
    finding = recompiles(_inputs(capture=capture))
    assert finding is not None
    assert (finding.rule, finding.severity, finding.title) == ("recompiles", "warning", "1 recompile")
    assert "- `forward`: tensor 'x' size mismatch at index 0. expected 8, actual 16" in finding.evidence
    assert "mark_dynamic" in finding.suggestion and "`dynamic=True`" in finding.suggestion


def test_recompiles_quiet_without_recompiles() -> None:
    assert recompiles(_inputs(capture=_diagnostics(recompiles=[]))) is None


# --- launch-bound graphs -------------------------------------------------------------------------------


def test_launch_bound_fires_with_busy_launches_and_mean_kernel() -> None:
    graph = _graph(busy_seed=49.4, busy_union=31.0, mean_us=10.3, launches_per_call=785)
    finding = launch_bound(_inputs(analysis=_analysis([graph, _graph(10.0, number=None)])))
    assert finding is not None
    assert (finding.rule, finding.severity, finding.title) == (
        "launch-bound",
        "warning",
        "Launch-bound graph: forward (graph 0)",
    )
    assert finding.evidence.splitlines()[0] == (
        "forward (graph 0): GPU busy 31.0 % (union; -p 49.4 %), 785 kernel launches per call, "
        "mean kernel 10.3 µs, 3 calls."
    )
    assert 'mode="reduce-overhead"' in finding.suggestion


def test_launch_bound_uses_union_without_seed_and_lists_several() -> None:
    graphs = [_graph(None, busy_union=20.0), _graph(None, busy_union=25.0, number=1)]
    finding = launch_bound(_inputs(analysis=_analysis(graphs)))
    assert finding is not None and finding.title == "2 launch-bound graphs"
    assert "- forward (graph 0): GPU busy 20.0 % (union), 50 kernel launches per call" in finding.evidence


@pytest.mark.parametrize(
    ("graph", "fires"),
    [
        (_graph(None, busy_union=LAUNCH_BOUND_BUSY_PERCENT - 0.1), True),
        (_graph(None, busy_union=LAUNCH_BOUND_BUSY_PERCENT), False),
        (_graph(10.0, busy_union=60.0), False),  # the in-step (union) number wins over the -p one
        (_graph(LAUNCH_BOUND_BUSY_PERCENT - 0.1, busy_union=None), True),  # -p when there is no union
        (_graph(None, busy_union=None), False),
        (_graph(40.0, mean_us=LAUNCH_BOUND_MEAN_KERNEL_US - 0.1), True),
        (_graph(40.0, mean_us=LAUNCH_BOUND_MEAN_KERNEL_US), False),
        (_graph(40.0, mean_us=80.0, launches_per_call=LAUNCH_BOUND_LAUNCHES_PER_CALL + 1), True),
        (_graph(40.0, mean_us=80.0, launches_per_call=LAUNCH_BOUND_LAUNCHES_PER_CALL), False),
        (_graph(10.0, number=None), False),  # outside compiled regions
    ],
)
def test_launch_bound_thresholds(graph: GraphAnalysis, fires: bool) -> None:
    assert (launch_bound(_inputs(analysis=_analysis([graph]))) is not None) is fires


def test_launch_bound_skipped_under_cuda_graphs_and_on_cpu() -> None:
    analysis = _analysis([_graph(10.0)])
    assert launch_bound(_inputs(capture=_diagnostics(cudagraphs="used"), analysis=analysis)) is None
    assert launch_bound(_inputs(capture=_diagnostics(cudagraphs="skipped"), analysis=analysis)) is not None
    assert launch_bound(_inputs(manifest=_manifest(device="cpu"), analysis=analysis)) is None


# --- kernels far below peak bandwidth ------------------------------------------------------------------


def _benchmark(name: str, gbps: float, ms: float = 0.2) -> KernelBenchmark:
    return KernelBenchmark(graph=1, name=name, module=f"modules/kernels/{name}.py", ms=ms, num_gb=gbps * ms / 1e3)


def test_low_bandwidth_lists_worst_kernels_with_share() -> None:
    capture = Capture(
        kernel_benchmarks=[
            _benchmark("triton_red_a", 805.0),
            _benchmark("triton_poi_b", 400.0),
            _benchmark("c", 4000.0),
        ]
    )
    kernels = [Kernel(name="triton_red_a", category="triton_reduction", device_time_us=16.0, count=1, share=0.016)]
    finding = low_bandwidth(_inputs(_manifest(peak_gbps=4814.0), capture, _analysis(kernels=kernels)))
    assert finding is not None
    assert (finding.rule, finding.title) == ("low-bandwidth", "2 of 3 benchmarked kernels below 30 % of peak bandwidth")
    lines = finding.evidence.splitlines()
    assert "the GPU's theoretical peak of 4814 GB/s" in lines[0]
    assert lines[1:] == [
        "- `triton_poi_b` (graph 1): 400 GB/s = 8 % of peak, 200.0 µs per call.",
        "- `triton_red_a` (graph 1): 805 GB/s = 17 % of peak, 200.0 µs per call, 1.6 % of profiled device time.",
    ]
    assert "TORCHINDUCTOR_MAX_AUTOTUNE=1" in finding.suggestion and "COORDINATE_DESCENT" in finding.suggestion


@pytest.mark.parametrize(
    ("mode", "env", "expected", "absent"),
    [
        ("default", {}, ["TORCHINDUCTOR_MAX_AUTOTUNE=1", "COORDINATE_DESCENT"], ["already searched"]),
        ("default", {"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}, ["COORDINATE_DESCENT"], ["MAX_AUTOTUNE=1", "already"]),
        ("max-autotune", {}, ["already searched", "python <kernel>.py"], ["Try `"]),
        ("max-autotune-no-cudagraphs", {}, ["already searched"], ["Try `"]),
        (
            "reduce-overhead",
            {"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCHINDUCTOR_COORDINATE_DESCENT_TUNING": "1"},
            ["already searched"],
            ["Try `"],
        ),
    ],
)
def test_low_bandwidth_suggests_only_the_tuning_the_run_left_out(
    mode: str, env: dict[str, str], expected: list[str], absent: list[str]
) -> None:
    manifest = _manifest()
    recipe = manifest.recipe.model_copy(
        update={"compile": manifest.recipe.compile.model_copy(update={"mode": mode}), "env": env}
    )
    capture = Capture(kernel_benchmarks=[_benchmark("triton_red_a", 400.0)])
    finding = low_bandwidth(_inputs(manifest.model_copy(update={"recipe": recipe}), capture))
    assert finding is not None
    assert all(text in finding.suggestion for text in expected), finding.suggestion
    assert not any(text in finding.suggestion for text in absent), finding.suggestion


def test_low_bandwidth_threshold_and_copy_fallback() -> None:
    at = Capture(kernel_benchmarks=[_benchmark("k", 1200.0)], copy_bandwidth_gbps=4000.0)
    below = Capture(kernel_benchmarks=[_benchmark("k", 1199.0)], copy_bandwidth_gbps=4000.0)
    no_gpu_peak = _manifest(peak_gbps=None)
    assert low_bandwidth(_inputs(no_gpu_peak, at)) is None
    finding = low_bandwidth(_inputs(no_gpu_peak, below))
    assert finding is not None and "a measured device-to-device copy of 4000 GB/s" in finding.evidence
    assert low_bandwidth(_inputs(no_gpu_peak, below.model_copy(update={"copy_bandwidth_gbps": None}))) is None
    no_bytes = Capture(kernel_benchmarks=[KernelBenchmark(graph=0, name="k", module="m.py", ms=1.0)])
    assert low_bandwidth(_inputs(capture=no_bytes)) is None


# --- compile dominated by autotuning -------------------------------------------------------------------


def _autotune_inputs(autotune_s: float, other_s: float, compile_s: float | None) -> FindingInputs:
    capture = _diagnostics(compile_phases_s={"dynamo": other_s, "autotune": autotune_s})
    metrics = Metrics(eager=_times(100.0), compiled=_times(80.0), compile_time_s=compile_s)
    return _inputs(_manifest(metrics=metrics), capture)


def test_autotune_compile_fires_with_seconds_and_share() -> None:
    finding = autotune_compile(_autotune_inputs(80.0, 20.0, 130.0))
    assert finding is not None
    assert (finding.rule, finding.severity) == ("autotune-compile", "info")
    assert finding.title == "Compilation took 130 s, 80 % of it autotuning"
    assert "Autotuning 80.0 s of 100.0 s of compile phases; first compiled call 130.0 s." in finding.evidence
    assert "save_cache_artifacts" in finding.suggestion


@pytest.mark.parametrize(
    ("autotune_s", "other_s", "compile_s", "fires"),
    [
        (51.0, 49.0, 100.0, True),
        (50.0, 50.0, 100.0, False),  # exactly half
        (40.0, 1.0, AUTOTUNE_COMPILE_MIN_S, False),
        (40.0, 1.0, AUTOTUNE_COMPILE_MIN_S + 1, True),
        (61.0, 1.0, None, True),  # no first-call time: the phases' total
        (59.0, 0.5, None, False),
        (0.0, 0.0, 200.0, False),
    ],
)
def test_autotune_compile_thresholds(autotune_s: float, other_s: float, compile_s: float | None, fires: bool) -> None:
    assert (autotune_compile(_autotune_inputs(autotune_s, other_s, compile_s)) is not None) is fires


# --- CPU run -------------------------------------------------------------------------------------------


def test_cpu_run_note() -> None:
    finding = cpu_run(_inputs(_manifest(device="cpu")))
    assert finding is not None
    assert (finding.rule, finding.severity, finding.title) == ("cpu-run", "info", "CPU run")
    assert "AMD EPYC" in finding.evidence
    assert cpu_run(_inputs(_manifest(device="cuda"))) is None


# --- all rules -----------------------------------------------------------------------------------------


def test_findings_run_rules_in_order_without_capture() -> None:
    metrics = Metrics(eager=_times(1.0, 0.9, 1.1), compiled=_times(2.0, 1.9, 2.1))
    found = findings(_manifest(device="cpu", metrics=metrics), None, _analysis([_graph(10.0)]))
    assert [f.rule for f in found] == ["compiled-slower", "cpu-run"]
    assert len(RULES) == 11
    assert findings(_manifest(), Capture(), _analysis()) == []


def test_analyze_fills_regions_and_findings(tmp_path: Path) -> None:
    (tmp_path / "trace.json.gz").write_bytes(H200.read_bytes())
    analysis = analyze(tmp_path, _manifest(), _diagnostics(graph_breaks=[GraphBreak(reason=BREAK_REASON)]))
    assert analysis.regions == RegionEvidence(compiled_regions=1, nested_regions=0)
    assert analysis.timing is not None and analysis.timing == timing_summary(_manifest().metrics)
    assert [f.rule for f in analysis.findings] == ["graph-breaks", "launch-bound", "layout-copies"]
    assert "1 compiled region," in analysis.findings[0].evidence
    assert Analysis.model_validate_json(analysis.model_dump_json()) == analysis


def test_noisy_host_fires_on_a_recorded_noisy_host_and_not_on_a_quiet_one() -> None:
    run = json.loads(H100_HOST_PROBE.read_text())["runs"]["resnet50"][0]
    eager, compiled = run["eager_samples_ms"], run["compiled_samples_ms"]
    noisy = Metrics(
        eager=_times(statistics.median(eager), min(eager), max(eager)).model_copy(update={"samples_ms": eager}),
        compiled=_times(statistics.median(compiled), min(compiled), max(compiled)).model_copy(
            update={"samples_ms": compiled}
        ),
        host_probe_ms=run["host_probe_ms"],
    )
    finding = noisy_host(_inputs(_manifest(metrics=noisy)))
    assert finding is not None
    assert (finding.rule, finding.severity) == ("noisy-host", "warning")
    assert finding.title == "The host's CPU speed varied while steps were timed (CV 27 %)"
    assert "before each of the 20 pairs of blocks" in finding.evidence
    assert "rank correlation of the probe with the pair of blocks timed after it is 0.58" in finding.evidence
    quiet = noisy.model_copy(update={"host_probe_ms": [1.0 + 0.01 * (i % 3) for i in range(20)]})
    assert noisy_host(_inputs(_manifest(metrics=quiet))) is None
    assert noisy_host(_inputs(_manifest(metrics=noisy.model_copy(update={"host_probe_ms": []})))) is None


def test_layout_copies_name_the_share_of_mixnets_backward_copies(tmp_path: Path) -> None:
    (tmp_path / "trace.json.gz").write_bytes(H200.read_bytes())
    analysis = analyze(tmp_path, _manifest(), None)
    finding = next(f for f in analysis.findings if f.rule == "layout-copies")
    backward = next(line for line in finding.evidence.splitlines() if line.startswith("backward"))
    assert backward.startswith("backward (graph 1): 2 copy/layout kernels, 636 launches, 12.60 ms (18.3 %")
    assert "elementwise_kernel" in backward
    assert "Where they come from was not captured." in finding.evidence
