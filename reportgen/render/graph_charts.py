"""Charts of compiled graphs, GPU timelines and kernel bandwidth (matplotlib, via `render.charts` helpers)."""

from __future__ import annotations

import itertools
from pathlib import Path

from matplotlib.patches import Patch

from reportgen.bundle import CATEGORY_ORDER, GraphAnalysis, IdleHistogram, KernelBenchmark, RankOverlap, category_color
from reportgen.escape import chart_text
from reportgen.render.charts import _new_figure, _save, _truncate, plottable

__all__ = ["bandwidth_chart", "graph_categories_chart", "idle_histogram_chart", "ranks_chart", "timeline_chart"]


def graph_categories_chart(graphs: list[GraphAnalysis], path: Path) -> Path:
    """One stacked horizontal bar per graph: kernel time per category (ms, summed over profiled steps)."""
    figure = _new_figure(max(2.6, 0.6 * len(graphs) + 2.2))
    axes = figure.add_subplot()
    present = [c for c in CATEGORY_ORDER if any(g.categories_us.get(c) for g in graphs)]
    for row, graph in enumerate(graphs):
        left = 0.0
        for category in present:
            value = graph.categories_us.get(category, 0.0) / 1000
            if not plottable(value):
                continue
            axes.barh(row, value, left=left, color=category_color(category))
            left += value
    axes.set_yticks(range(len(graphs)), [_truncate(g.label) for g in graphs], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("kernel time (ms), summed over the profiled steps")
    axes.set_title("Kernel time per compiled graph, by category")
    axes.grid(axis="x", alpha=0.3)
    handles = [Patch(color=category_color(c), label=chart_text(c)) for c in present]
    figure.legend(handles=handles, fontsize=7, loc="outside lower center", ncol=min(4, len(handles) or 1))
    return _save(figure, path)


def timeline_chart(intervals: list[tuple[float, float]], wall_us: float, path: Path) -> Path:
    """A strip of one step: busy intervals of the device in colour, idle gaps blank."""
    figure = _new_figure(1.6)
    axes = figure.add_subplot()
    intervals = [(start, end) for start, end in intervals if plottable(start) and plottable(end) and end >= start]
    wall_us = wall_us if plottable(wall_us) else 0.0
    axes.broken_barh(
        [(start / 1000, (end - start) / 1000) for start, end in intervals], (0, 1), color="#4c72b0", linewidth=0
    )
    axes.set_xlim(0, max(wall_us, max((e for _, e in intervals), default=0.0)) / 1000)
    axes.set_yticks([])
    axes.set_xlabel("time since the step began (ms)")
    axes.set_title("Device busy (blue) vs idle (white) in one profiled step")
    return _save(figure, path)


_COMPUTE, _COMMUNICATION = "#4c72b0", "#dd8452"


def ranks_chart(ranks: list[RankOverlap], path: Path) -> Path:
    """The ranks one above the other over their first profiled step: compute and communication as two strips each."""
    figure = _new_figure(max(1.8, 0.7 * len(ranks) + 1.2))
    axes = figure.add_subplot()
    end = 0.0
    for row, rank in enumerate(ranks):
        for strip, color, offset in (
            (rank.compute_strip, _COMPUTE, 0.05),
            (rank.communication_strip, _COMMUNICATION, 0.5),
        ):
            bars = [(a / 1000, (b - a) / 1000) for a, b in strip if plottable(a) and plottable(b) and b >= a]
            axes.broken_barh(bars, (row + offset, 0.4), color=color, linewidth=0)
            end = max(end, max((a + w for a, w in bars), default=0.0))
    axes.set_xlim(0, end or 1.0)
    axes.set_yticks([row + 0.5 for row in range(len(ranks))], [f"rank {rank.rank}" for rank in ranks], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("time since the first profiled step began (ms)")
    axes.set_title("Each rank's compute (blue) and communication (orange) in one profiled step")
    handles = [Patch(color=_COMPUTE, label="compute"), Patch(color=_COMMUNICATION, label="communication")]
    figure.legend(handles=handles, fontsize=7, loc="outside lower center", ncol=2)
    return _save(figure, path)


def idle_histogram_chart(idle: IdleHistogram, path: Path) -> Path:
    """Count and total time of idle gaps per length bucket: many short gaps mean launch-bound."""
    figure = _new_figure(2.8)
    axes = figure.add_subplot()
    edges = idle.edges_us
    labels = [
        f"<{_fmt_us(hi)}" if i == 0 else (f"≥{_fmt_us(lo)}" if hi >= 1e11 else f"{_fmt_us(lo)}–{_fmt_us(hi)}")
        for i, (lo, hi) in enumerate(itertools.pairwise(edges))
    ]
    axes.bar(range(len(idle.counts)), idle.counts, color="#dd8452")
    axes.set_xticks(range(len(labels)), labels, fontsize=7, rotation=30)
    axes.set_xlabel("idle gap length (µs)")
    axes.set_ylabel("gaps")
    total = f"{idle.total_idle_us / 1000:.2f} ms" if plottable(idle.total_idle_us) else "—"
    axes.set_title(f"Idle gaps between device work ({total} idle in all)")
    return _save(figure, path)


def _fmt_us(value: float) -> str:
    return f"{value / 1000:g} ms" if value >= 1000 else f"{value:g}"


def bandwidth_chart(benchmarks: list[KernelBenchmark], peak_gbps: float | None, path: Path) -> Path:
    """Achieved GB/s of the hot Triton kernels against the device's peak."""
    rows = sorted(
        (b for b in benchmarks if b.bandwidth_gbps and plottable(b.bandwidth_gbps)),
        key=lambda b: b.bandwidth_gbps or 0.0,
    )
    figure = _new_figure(max(2.5, 0.3 * len(rows) + 1.4))
    axes = figure.add_subplot()
    values = [b.bandwidth_gbps or 0.0 for b in rows]
    axes.barh(range(len(rows)), values, color="#4c72b0")
    axes.set_yticks(range(len(rows)), [_truncate(b.name, 44) for b in rows], fontsize=7, fontfamily="monospace")
    if peak_gbps and plottable(peak_gbps):
        axes.axvline(peak_gbps, color="#c44e52", linestyle="--", label=f"peak {peak_gbps:.0f} GB/s")
        axes.legend(fontsize=7, loc="lower right")
    axes.set_xlabel("achieved bandwidth (GB/s, Inductor's bytes estimate)")
    axes.set_title("Hot Triton kernels: achieved memory bandwidth")
    axes.grid(axis="x", alpha=0.3)
    return _save(figure, path)
