"""Findings: small rules that read a run's numbers and say what stood out and what to try.

Each rule is a pure function `(FindingInputs) -> Finding | None`, registered in `RULES`; `findings` runs them
in that order (problems and compile issues first, the CPU note last). A rule fires on numbers the bundle
already holds (manifest metrics, capture.json, the rest of the analysis) and puts those numbers in its
evidence. Thresholds are the named constants below; evidence and suggestion follow the text convention of
`reportgen.bundle.model.Finding` (one paragraph per line, `- ` list items, backticks for code).
The rules on step times (`compiled_slower`, `no_significant_difference`) live in `timing_findings`.
"""

from __future__ import annotations

from collections.abc import Sequence

from reportgen.analyze.copy_finding import layout_copies
from reportgen.analyze.finding_inputs import FindingInputs, Rule
from reportgen.analyze.origin_text import benchmark_place, short_kernel_modules
from reportgen.analyze.rank_findings import (
    buckets,
    different_graphs,
    exposed_communication,
    host_kept_env,
    in_wrapper,
    straggler_rank,
    waiting_for_rank,
    wrapper_breaks,
)
from reportgen.analyze.roof_finding import time_left
from reportgen.analyze.timing_findings import compiled_slower, no_significant_difference, noisy_host
from reportgen.bundle import (
    Analysis,
    Capture,
    Finding,
    GraphAnalysis,
    KernelBenchmark,
    Manifest,
    reason_headline,
)

__all__ = [
    "AUTOTUNE_COMPILE_MIN_S",
    "AUTOTUNE_SHARE",
    "LAUNCH_BOUND_BUSY_PERCENT",
    "LAUNCH_BOUND_LAUNCHES_PER_CALL",
    "LAUNCH_BOUND_MEAN_KERNEL_US",
    "LISTED_MAX",
    "LOW_BANDWIDTH_FRACTION",
    "RULES",
    "FindingInputs",
    "Rule",
    "autotune_compile",
    "compiled_slower",
    "cpu_run",
    "findings",
    "graph_breaks",
    "launch_bound",
    "low_bandwidth",
    "no_significant_difference",
    "noisy_host",
    "recompiles",
]

LAUNCH_BOUND_BUSY_PERCENT = 50.0
"""A graph is launch-bound when its GPU busy % in the steps (`busy_union_percent`, else `busy_seed_percent`) is below this ..."""
LAUNCH_BOUND_MEAN_KERNEL_US = 50.0
"""... and its kernels are short on average (mean duration below this, in µs) ..."""
LAUNCH_BOUND_LAUNCHES_PER_CALL = 100
"""... or it launches more kernels than this per call: CPU-side launch overhead then shows as device idle."""
LOW_BANDWIDTH_FRACTION = 0.30
"""A benchmarked kernel is far below peak when its achieved GB/s is under this fraction of the peak."""
AUTOTUNE_SHARE = 0.50
"""Compilation is dominated by autotuning when the autotune phase exceeds this share of all compile phases ..."""
AUTOTUNE_COMPILE_MIN_S = 60.0
"""... and compilation (the first compiled call, else the phases' total) took longer than this, in seconds."""
LISTED_MAX = 5
"""At most this many graphs, reasons or kernels are listed in one finding's evidence."""


def findings(manifest: Manifest, capture: Capture | None, analysis: Analysis) -> list[Finding]:
    """Run every rule of `RULES`, in order, and keep what fired.

    :param manifest: the run's manifest
    :param capture: its capture.json, if any
    :param analysis: the rest of the analysis (its own `findings` are ignored)
    """
    inputs = FindingInputs(manifest, capture if capture is not None else Capture(), analysis)
    distributed = [
        different_graphs(manifest),
        straggler_rank(analysis),
        waiting_for_rank(analysis),
        exposed_communication(manifest, analysis),
        buckets(manifest, analysis),
        host_kept_env(manifest),
    ]
    return [*(f for f in distributed if f is not None), *(f for rule in RULES if (f := rule(inputs)) is not None)]


# --- rules ---------------------------------------------------------------------------------------------


def graph_breaks(inputs: FindingInputs) -> Finding | None:
    """Dynamo broke the graph: count, each reason's headline and location. In a distributed run the breaks in
    the DDP or FSDP wrapper's own code are by design: an info finding when they are all there is."""
    breaks = inputs.capture.diagnostics.graph_breaks
    wrapper = [b for b in breaks if in_wrapper(b)] if inputs.manifest.distributed is not None else []
    breaks = [b for b in breaks if b not in wrapper]
    if not breaks:
        return wrapper_breaks(inputs.manifest, wrapper) if wrapper else None
    total = sum(b.count for b in breaks)
    items = [
        f"- {reason_headline(b.reason) or 'unknown reason'}"
        + (f" at `{b.location}`" if b.location else "")
        + (f" ({b.count}x)" if b.count > 1 else "")
        for b in breaks[:LISTED_MAX]
    ]
    regions = inputs.analysis.regions
    lines = [f"{_plural(total, 'graph break')}:", *items, *_more(len(breaks))]
    if wrapper:
        lines.append(
            f"Besides these, {_plural(sum(b.count for b in wrapper), 'break')} in the distributed wrapper's own code (by design)."
        )
    if regions is not None and regions.compiled_regions:
        blocks = regions.compiled_function_blocks_per_step
        lines.append(
            f"The profiled trace ({_plural(inputs.analysis.kernels.profiled_steps, 'step')}) shows "
            f"{_plural(regions.compiled_regions, 'compiled region')}, "
            f"{regions.nested_regions} region events nested inside another"
            + (f" and {blocks:.1f} `CompiledFunction` blocks per step." if blocks else ".")
        )
    return Finding(
        rule="graph-breaks",
        severity="warning",
        title=f"{_plural(total, 'graph break')}",
        evidence="\n".join(lines),
        suggestion="Each break splits the model into separately compiled graphs with eager code in between, "
        "which blocks fusion across the break and adds per-graph overhead. Fix the code at each location "
        "(the reason says what Dynamo could not trace), or compile with `fullgraph=True` to make the first "
        "break an error with a full traceback.",
    )


def recompiles(inputs: FindingInputs) -> Finding | None:
    """A compiled frame was recompiled because a guard failed: count, frames and guard failures."""
    found = inputs.capture.diagnostics.recompiles
    if not found:
        return None
    items = [f"- `{r.frame}`: {reason_headline(r.reason) or 'unknown guard'}" for r in found[:LISTED_MAX]]
    return Finding(
        rule="recompiles",
        severity="warning",
        title=_plural(len(found), "recompile"),
        evidence="\n".join([f"{_plural(len(found), 'recompile')} (frame: failed guard):", *items, *_more(len(found))]),
        suggestion="Guards on sizes fail when input shapes vary: mark the varying dimensions dynamic before the "
        "first call (`torch._dynamo.mark_dynamic(tensor, dim)`) or compile with `dynamic=True`. Guards on "
        "Python values (flags, ids, lengths) mean the inputs change between calls: keep them constant or pass "
        "them as tensors.",
    )


def launch_bound(inputs: FindingInputs) -> Finding | None:
    """GPU graphs that keep the device idle and launch many (or short) kernels; skipped under CUDA graphs."""
    if inputs.device != "cuda" or inputs.capture.diagnostics.cudagraphs == "used":
        return None
    bound = [g for g in inputs.analysis.graphs if g.graph is not None and _is_launch_bound(g)]
    if not bound:
        return None
    items = (
        [_launch_evidence(g) for g in bound]
        if len(bound) == 1
        else [f"- {_launch_evidence(g)}" for g in bound[:LISTED_MAX]]
    )
    thresholds = (
        f"Launch-bound: busy below {LAUNCH_BOUND_BUSY_PERCENT:.0f} % with a mean kernel under "
        f"{LAUNCH_BOUND_MEAN_KERNEL_US:.0f} µs or over {LAUNCH_BOUND_LAUNCHES_PER_CALL} launches per call."
    )
    title = f"Launch-bound graph: {bound[0].label}" if len(bound) == 1 else f"{len(bound)} launch-bound graphs"
    return Finding(
        rule="launch-bound",
        severity="warning",
        title=title,
        evidence="\n".join([*items, *_more(len(bound)), thresholds]),
        suggestion='Compile with `mode="reduce-overhead"` to replay each graph as a CUDA graph: one launch '
        "instead of one per kernel. Each new input shape records another CUDA graph, and Inductor skips graphs "
        "with mutated inputs or CPU tensors: check the CUDA graphs status under compile diagnostics after the "
        "change.",
    )


def low_bandwidth(inputs: FindingInputs) -> Finding | None:
    """Benchmarked Triton kernels that reach under `LOW_BANDWIDTH_FRACTION` of the peak bandwidth."""
    peak_gbps, peak_text = _peak(inputs)
    if peak_gbps is None:
        return None
    slow = [
        b
        for b in inputs.capture.kernel_benchmarks
        if (gbps := b.bandwidth_gbps) is not None and gbps < LOW_BANDWIDTH_FRACTION * peak_gbps
    ]
    if not slow:
        return None
    slow.sort(key=lambda b: b.bandwidth_gbps or 0.0)
    shares = {k.name: k.share for k in inputs.analysis.kernels.kernels}
    items = [
        f"- {_bandwidth_evidence(b, peak_gbps, shares.get(b.name))}"
        + benchmark_place(inputs.analysis, inputs.manifest, b.graph, b.name)
        for b in slow[:LISTED_MAX]
    ]
    total = len(inputs.capture.kernel_benchmarks)
    return Finding(
        rule="low-bandwidth",
        severity="warning",
        title=f"{len(slow)} of {_plural(total, 'benchmarked kernel')} below "
        f"{100 * LOW_BANDWIDTH_FRACTION:.0f} % of peak bandwidth",
        evidence="\n".join(
            [
                f"Against {peak_text} (Inductor's byte estimate ÷ the kernel's own benchmark time):",
                *items,
                *_more(len(slow)),
            ]
        ),
        suggestion=_bandwidth_suggestion(inputs.manifest),
    )


_INSPECT = (
    "inspect the kernel (run its module, `python <kernel>.py`, and read its loads and reductions): strided or "
    "broadcast access and small reductions keep a memory-bound kernel far from peak."
)


def _bandwidth_suggestion(manifest: Manifest) -> str:
    """More tuning where the run left some out; where it already searched, go straight to the kernel."""
    by_mode, env = manifest.recipe.compile.uses_max_autotune, manifest.recipe.env
    max_autotune = by_mode or env.get("TORCHINDUCTOR_MAX_AUTOTUNE") == "1"
    descent = by_mode or env.get("TORCHINDUCTOR_COORDINATE_DESCENT_TUNING") == "1"
    if max_autotune and descent:
        return (
            "This run already searched block sizes (max-autotune with coordinate-descent tuning): more tuning will "
            f"not close the gap. {_INSPECT[0].upper()}{_INSPECT[1:]}"
        )
    knobs = [
        *([] if max_autotune else ['`TORCHINDUCTOR_MAX_AUTOTUNE=1` (or `mode="max-autotune"`)']),
        *([] if descent else ["`TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1`"]),
    ]
    return f"Try {' and '.join(knobs)} to search more block sizes; then {_INSPECT}"


def autotune_compile(inputs: FindingInputs) -> Finding | None:
    """A long compilation that is mostly autotuning."""
    phases = inputs.capture.diagnostics.compile_phases_s
    phases_total = sum(phases.values())
    autotune_s = phases.get("autotune", 0.0)
    compile_s = inputs.manifest.metrics.compile_time_s or phases_total
    if phases_total <= 0 or autotune_s / phases_total <= AUTOTUNE_SHARE or compile_s <= AUTOTUNE_COMPILE_MIN_S:
        return None
    return Finding(
        rule="autotune-compile",
        severity="info",
        title=f"Compilation took {compile_s:.0f} s, {100 * autotune_s / phases_total:.0f} % of it autotuning",
        evidence=f"Autotuning {autotune_s:.1f} s of {phases_total:.1f} s of compile phases; first compiled call "
        f"{compile_s:.1f} s. Thresholds: autotune above {100 * AUTOTUNE_SHARE:.0f} % of the phases and compilation "
        f"over {AUTOTUNE_COMPILE_MIN_S:.0f} s.",
        suggestion="Keep the tuning results between runs: a persistent Inductor cache (`TORCHINDUCTOR_CACHE_DIR`; "
        "`reportgen run --inductor-cache DIR` here; FX graph and autotune caches are on by default) or "
        "`torch.compiler.save_cache_artifacts()` / `load_cache_artifacts()`. Or narrow max-autotune: only GEMMs "
        "(`TORCHINDUCTOR_MAX_AUTOTUNE_GEMM=1` instead "
        'of `mode="max-autotune"`), or only the hot submodule compiled with it.',
    )


def cpu_run(inputs: FindingInputs) -> Finding | None:
    """A note on CPU runs: the GPU-specific numbers do not apply."""
    environment = inputs.manifest.environment
    if environment is None or environment.device != "cpu":
        return None
    return Finding(
        rule="cpu-run",
        severity="info",
        title="CPU run",
        evidence=f"The run used the CPU ({environment.device_name}): kernel times are CPU ops' self times and "
        "busy % is CPU-op coverage. GPU-only numbers (bandwidth, CUDA graphs, launch overhead) do not apply.",
        suggestion="Run the recipe on a CUDA device for GPU kernels, busy % and bandwidth.",
    )


def layout_copies_rule(inputs: FindingInputs) -> Finding | None:
    """Copy/layout kernels above 5 % of a compiled graph, with the modules and lines they come from."""
    return layout_copies(inputs.analysis)


def time_left_rule(inputs: FindingInputs) -> Finding | None:
    """Kernels of known FLOPs far below the GPU's roof (`roof_finding`)."""
    return time_left(inputs.analysis)


RULES: tuple[Rule, ...] = (
    compiled_slower,
    no_significant_difference,
    noisy_host,
    graph_breaks,
    recompiles,
    launch_bound,
    low_bandwidth,
    layout_copies_rule,
    time_left_rule,
    autotune_compile,
    cpu_run,
)
"""The rules, in the order their findings are listed."""


# --- helpers -------------------------------------------------------------------------------------------


def _launches(graph: GraphAnalysis) -> int:
    return sum(k.count for k in graph.kernels)


def _is_launch_bound(graph: GraphAnalysis) -> bool:
    busy, _ = graph.in_step_busy
    launches = _launches(graph)
    if busy is None or busy >= LAUNCH_BOUND_BUSY_PERCENT or not launches or not graph.calls:
        return False
    mean_us = graph.kernel_time_us / launches
    return mean_us < LAUNCH_BOUND_MEAN_KERNEL_US or launches / graph.calls > LAUNCH_BOUND_LAUNCHES_PER_CALL


def _launch_evidence(graph: GraphAnalysis) -> str:
    busy, which = graph.in_step_busy
    launches = _launches(graph)
    other = f"; -p {graph.busy_seed_percent:.1f} %" if which == "union" and graph.busy_seed_percent is not None else ""
    return (
        f"{graph.label}: GPU busy {busy:.1f} % ({which}{other}), {launches / graph.calls:.0f} kernel launches "
        f"per call, mean kernel {graph.kernel_time_us / launches:.1f} µs, {graph.calls} calls."
    ) + short_kernel_modules(graph, LAUNCH_BOUND_MEAN_KERNEL_US)


def _peak(inputs: FindingInputs) -> tuple[float | None, str]:
    peak = inputs.analysis.peak
    if peak is None:
        return None, ""
    if peak.source == "theoretical":
        return peak.gbps, f"the GPU's theoretical peak of {peak.gbps:.0f} GB/s"
    return peak.gbps, f"a measured device-to-device copy of {peak.gbps:.0f} GB/s"


def _bandwidth_evidence(benchmark: KernelBenchmark, peak_gbps: float, share: float | None) -> str:
    gbps = benchmark.bandwidth_gbps or 0.0
    share_text = f", {100 * share:.1f} % of profiled device time" if share is not None else ""
    return (
        f"`{benchmark.name}` (graph {benchmark.graph}): {gbps:.0f} GB/s = {100 * gbps / peak_gbps:.0f} % of peak, "
        f"{benchmark.ms * 1000:.1f} µs per call{share_text}."
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _more(count: int) -> Sequence[str]:
    return [f"- and {count - LISTED_MAX} more"] if count > LISTED_MAX else []
