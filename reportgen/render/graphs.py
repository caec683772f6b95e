"""MyST text of the Inductor-aware sections: GPU busy per graph and step, kernels per graph, kernel benchmarks.

Pure functions of the bundle model; the page assembler (`render.pages`) places them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reportgen.bundle import (
    SEED_BUCKETS,
    Analysis,
    Capture,
    GraphAnalysis,
    KernelBenchmark,
    Manifest,
    PeakBandwidth,
    StepAnalysis,
)
from reportgen.render.costs import COST_HEADER, cost_cells, graph_roof_sentence
from reportgen.render.kernel_names import short_kernel_name
from reportgen.render.markup import MISSING, SORTABLE, code_span, escape_md, list_table
from reportgen.render.provenance import origin_cells
from reportgen.render.sources import SourcePages, source_link

__all__ = [
    "BUSY_EXPLAINED",
    "GRAPH_KERNEL_HEADERS",
    "STEP_WINDOWS",
    "WHOLE_TRACE_WINDOW",
    "busy_section",
    "graph_kernels_section",
    "graph_kernels_text",
    "kernel_benchmarks_section",
]

_MAX_OPS = 6

BUSY_EXPLAINED = """\
Two definitions of "GPU busy" are shown, because they answer different questions:

- **busy (-p)** is PyTorch's own number, from `python <wrapper>.py -p`: each graph is run on its own,
  its kernels' device time per call is summed and divided by the graph's *unprofiled* wall time per call.
  Overlapping kernels count twice and profiling stretches kernels a little, so it can exceed 100 %.
  reportgen reproduces it in a fresh process of its own with the wrapper's harness, on the run's compiled
  modules (no second compilation), and leaves GPU-side user annotations (`## Call CompiledFxGraph ##` spans)
  out of the device time. The device time per call matches a fresh `python <wrapper>.py -p`. The wall time of
  a launch-bound graph is CPU time, which any load on the host lengthens: `-p` takes one median, reportgen
  takes `-p`'s median in three rounds that take turns timing by timing (listed in brackets) and divides by
  their median, so that a burst of load does not move the number. The spread of the rounds shows how steady
  the host was.
- **busy (union)** is measured inside the profiled training/inference steps: the union of the graph's kernel
  intervals (no double counting across streams) over the graph's calls' wall span (from the call's start to
  its last kernel's end). Idle gaps in that span are launch overhead, Python, or waiting on the CPU.

A graph with low busy % and many short kernels is launch-bound: CUDA graphs (`mode="reduce-overhead"`) help."""


def _pct(value: float | None) -> str:
    return MISSING if value is None else f"{value:.1f}"


def _per_call_ms(graph: GraphAnalysis, total_us: float) -> str:
    return f"{total_us / graph.calls / 1000:.3f}" if graph.calls else MISSING


def _unprofiled(graph: GraphAnalysis) -> str:
    """The median round, and every round when there were several."""
    if graph.unprofiled_wall_ms is None:
        return MISSING
    rounds = graph.unprofiled_rounds_ms
    spread = f" ({' / '.join(f'{ms:.2f}' for ms in rounds)})" if len(rounds) > 1 else ""
    return f"{graph.unprofiled_wall_ms:.3f}{spread}"


def _graph_row(graph: GraphAnalysis) -> list[str]:
    seeds = [
        _pct(graph.seed_categories_percent.get(b)) if graph.seed_categories_percent else MISSING for b in SEED_BUCKETS
    ]
    return [
        escape_md(graph.label),
        str(graph.calls),
        _per_call_ms(graph, graph.kernel_time_us),
        _per_call_ms(graph, graph.wall_us),
        _unprofiled(graph),
        _pct(graph.busy_union_percent),
        _pct(graph.busy_seed_percent),
        *seeds,
    ]


STEP_WINDOWS = (
    "Each step's window runs from its `ProfilerStep#N` span's start or the end of the previous step's window, "
    "whichever is later, to the end of its span or of the last kernel launched in it, whichever is later: windows "
    "never overlap and no time counts twice. Busy is all device work inside the window, whichever step launched "
    "it, so a GPU still running the previous step's kernels counts as busy; kernel time counts the kernels "
    "launched in the step."
)
WHOLE_TRACE_WINDOW = (
    "The trace has no `ProfilerStep#N` markers, so the whole trace is one window, from its first CPU event or "
    "kernel to its last end: CPU-only time before the first kernel (compilation, warm-up) counts as idle."
)


def _windows_text(steps: Sequence[StepAnalysis]) -> str:
    """The sentence naming the window the step table's numbers are taken over."""
    return WHOLE_TRACE_WINDOW if any(s.window == "whole trace" for s in steps) else STEP_WINDOWS


def _window_warning(steps: Sequence[StepAnalysis]) -> list[str]:
    """A warning listing the notes of doubtful windows, if any."""
    items = [
        f"- {'Whole trace' if s.window == 'whole trace' else f'Step {s.step}'}: {escape_md(s.note)}"
        for s in steps
        if s.note
    ]
    if not items:
        return []
    lead = "The busy and idle figures of these windows are doubtful:"
    return ["```{warning}\n" + "\n".join([lead, "", *items]) + "\n```"]


def busy_section(analysis: Analysis, timeline_png: str | None, idle_png: str | None, figure: object) -> str:
    """GPU busy per graph (both definitions, with the seed's category split) and per step."""
    parts = ["## GPU busy", BUSY_EXPLAINED]
    graphs = [g for g in analysis.graphs if g.graph is not None]
    if graphs:
        header = [
            "Graph",
            "Calls",
            "Kernel time / call (ms)",
            "Wall / call in steps (ms)",
            "Wall / call alone, unprofiled (ms)",
            "Busy union (%)",
            "Busy -p (%)",
            *[f"{b.replace('_', ' ')} -p (%)" for b in SEED_BUCKETS],
        ]
        parts.append(list_table(header, [_graph_row(g) for g in graphs], "Compiled graphs"))
    if analysis.steps:
        rows = [
            [
                ("whole trace" if s.step < 0 else str(s.step)),
                f"{s.wall_us / 1000:.3f}",
                f"{s.kernel_time_us / 1000:.3f}",
                f"{s.busy_union_us / 1000:.3f}",
                _pct(s.busy_percent),
                f"{s.idle_us / 1000:.3f}",
                str(s.gap_count),
            ]
            for s in analysis.steps
        ]
        header = ["Step", "Wall (ms)", "Kernel time (ms)", "Busy union (ms)", "Busy (%)", "Idle (ms)", "Gaps"]
        parts += [_windows_text(analysis.steps), list_table(header, rows, "Profiled steps")]
        parts += _window_warning(analysis.steps)
    for png, alt, caption in (
        (timeline_png, "Timeline of one step: busy vs idle", "Device activity in the median profiled step."),
        (idle_png, "Histogram of idle gaps", "Idle gaps by length; many short gaps point at launch overhead."),
    ):
        if png:
            parts.append(figure(png, alt, caption))  # type: ignore[operator]
    return "\n\n".join(parts)


def _kernel_cells(graph: GraphAnalysis, rank: int, pages: SourcePages | None, wrapper_order: int | None) -> list[str]:
    kernel = graph.kernels[rank]
    link = source_link(pages, wrapper_order, kernel.name) if pages is not None else None
    names = [op.removeprefix("aten.") for op in kernel.aten_ops]
    shown = names[:_MAX_OPS] + ([f"+{len(names) - _MAX_OPS} more"] if len(names) > _MAX_OPS else [])
    ops = " ".join(code_span(op) for op in shown)
    return [
        str(rank + 1),
        code_span(short_kernel_name(kernel.name)),
        escape_md(kernel.category),
        f"{kernel.device_time_us / 1000:.3f}",
        str(kernel.count),
        f"{100 * kernel.share:.1f}",
        ops or MISSING,
        *origin_cells(kernel.origins),
        link or MISSING,
    ]


GRAPH_KERNEL_HEADERS = (
    "#",
    "Kernel",
    "Category",
    "Total (ms)",
    "Count",
    "Share of graph (%)",
    "ATen ops fused",
    "Module",
    "Line",
    "Source",
)
"""The columns of a graph's kernel table."""


def graph_kernels_section(
    analysis: Analysis,
    manifest: Manifest,
    pages: SourcePages | None,
    per_graph: int = 15,
    chart: str | None = None,
    figure: object = None,
    rooflines: Mapping[str, str] | None = None,
) -> str:
    """Top kernels of each compiled graph, with the ATen ops each fused and a link to its source; the graph's
    roofline (`rooflines`: graph number as text -> chart) above its table."""
    if not analysis.graphs:
        return ""
    parts = ["## Kernels per compiled graph"]
    if chart and figure is not None:
        parts.append(figure(chart, "Kernel time per graph by category", "Where each graph's kernel time goes."))  # type: ignore[operator]
    for graph in analysis.graphs:
        parts.append(f"### {escape_md(graph.label)}")
        roofline = (rooflines or {}).get(str(graph.graph))
        if roofline and figure is not None:
            caption = "This graph's kernels of known FLOPs against the GPU's roofs, sized by time."
            # the alt text is a directive option: built from validated fields, not the bundle's free-text label
            alt = f"Roofline of {graph.kind} (graph {graph.graph})"
            parts.append(figure(roofline, alt, caption))  # type: ignore[operator]
        parts.append(graph_kernels_text(graph, manifest, pages, per_graph))
    return "\n\n".join(parts)


def graph_kernels_text(graph: GraphAnalysis, manifest: Manifest, pages: SourcePages | None, per_graph: int) -> str:
    """One graph's `per_graph` longest kernels: a sentence and a sortable table (no heading: embeddable alone)."""
    order = {m.path: m.order for m in manifest.modules if m.kind == "wrapper"}.get(graph.wrapper or "")
    shown = min(per_graph, len(graph.kernels))
    rows = [_kernel_cells(graph, i, pages, order) for i in range(shown)]
    total = f"{graph.kernel_time_us / 1000:.2f} ms"
    sentence = f"{shown} of {len(graph.kernels)} kernels; {total} of kernel time over {graph.calls} calls."
    if not any(kernel.cost is not None or kernel.bytes_moved is not None for kernel in graph.kernels):
        return "\n\n".join([sentence, list_table(GRAPH_KERNEL_HEADERS, rows, classes=SORTABLE)])
    rows = [[*row, *cost_cells(graph.kernels[i])] for i, row in enumerate(rows)]
    table = list_table([*GRAPH_KERNEL_HEADERS, *COST_HEADER], rows, classes=SORTABLE)
    if graph.roof is not None:
        sentence = f"{sentence} {graph_roof_sentence(graph)}"
    return "\n\n".join([sentence, table])


def _peak(peak: PeakBandwidth | None) -> tuple[float | None, str]:
    if peak is None:
        return None, "no peak known"
    if peak.source == "theoretical":
        return peak.gbps, f"the device's theoretical peak, {peak.gbps:.0f} GB/s"
    return peak.gbps, f"a measured device-to-device copy, {peak.gbps:.0f} GB/s"


def kernel_benchmarks_section(
    benchmarks: Sequence[KernelBenchmark],
    peak_bandwidth: PeakBandwidth | None,
    capture: Capture,
    chart: str | None,
    figure: object,
) -> str:
    """Hot Triton kernels timed with their own harness: ms, GB, GB/s and % of peak bandwidth."""
    if not benchmarks:
        return ""
    peak, peak_text = _peak(peak_bandwidth)
    rows = []
    for b in sorted(benchmarks, key=lambda b: b.ms, reverse=True):
        gbps = b.bandwidth_gbps
        rows.append(
            [
                code_span(b.name),
                str(b.graph),
                f"{b.ms:.4f}",
                MISSING if b.num_gb is None else f"{b.num_gb:.4f}",
                MISSING if gbps is None else f"{gbps:.0f}",
                MISSING if gbps is None or not peak else f"{100 * gbps / peak:.0f}",
            ]
        )
    parts = [
        "## Kernel benchmarks",
        f"Triton kernels above 1 % of the profiled device time, each timed alone with the harness Inductor generates "
        f"under `TORCHINDUCTOR_BENCHMARK_KERNEL=1` (what `python k.py` prints). Bytes are Inductor's estimate; "
        f"% of peak is against {peak_text}"
        + (
            f" (measured copy: {capture.copy_bandwidth_gbps:.0f} GB/s)."
            if capture.copy_bandwidth_gbps and peak_text.startswith("the device")
            else "."
        ),
        list_table(["Kernel", "Graph", "ms", "GB", "GB/s", "% of peak"], rows, classes=SORTABLE),
    ]
    if chart:
        parts.append(figure(chart, "Achieved bandwidth of hot kernels", "Achieved GB/s against the peak."))  # type: ignore[operator]
    return "\n\n".join(parts)
