"""PNG charts of a bundle; the only module of reportgen that imports matplotlib.

Figures are drawn on an explicit Agg canvas (no pyplot, no global backend switch), so charts can
be drawn from any thread of a headless process. A value that is not a finite number (`plottable`) is left out
of every chart: matplotlib refuses an infinite axis limit, and a bundle may come from elsewhere.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TypeGuard

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reportgen.bundle import Kernel, KernelTable, Metrics, ProvenanceSummary, category_color, write_if_changed
from reportgen.escape import chart_text, one_line
from reportgen.render.kernel_names import short_kernel_name

__all__ = [
    "category_chart",
    "module_time_chart",
    "plottable",
    "speedup_chart",
    "step_time_chart",
    "top_kernels_chart",
]

_WIDTH_IN = 8.0
_DPI = 110
_NAME_CHARS = 48


def plottable(value: float | None) -> TypeGuard[float]:
    """Whether a chart may draw `value`: a finite number (an axis limit a third beyond it stays finite)."""
    return value is not None and math.isfinite(value) and abs(value) < _PLOT_MAX


_PLOT_MAX = 1e300


def _new_figure(height_in: float) -> Figure:
    figure = Figure(figsize=(_WIDTH_IN, height_in), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Figure, path: Path) -> Path:
    """Write the figure as PNG, leaving `path` untouched when it holds the same image (see `write_if_changed`)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
    write_if_changed(path, buffer.getvalue())
    return path


def _truncate(name: str, limit: int = _NAME_CHARS) -> str:
    """A label of at most `limit` characters (and its `$` escaped: `escape.chart_text`)."""
    name = one_line(name)
    return chart_text(name if len(name) <= limit else name[: limit - 1] + "…")


def _time_label(table: KernelTable) -> str:
    return "device time (ms)" if table.device == "cuda" else "self CPU time (ms)"


def _empty(figure: Figure, title: str, message: str) -> None:
    axes = figure.add_subplot()
    axes.set_title(title)
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes)
    axes.set_axis_off()


def top_kernels_chart(table: KernelTable, path: Path, n: int = 15) -> Path:
    """Horizontal bars of the `n` longest kernels, coloured by category; returns `path`."""
    shown = (k for k in table.kernels if plottable(k.device_time_us))
    kernels: list[Kernel] = sorted(shown, key=lambda k: k.device_time_us, reverse=True)[:n]
    title = f"Top {len(kernels)} kernels by {_time_label(table).split(' (')[0]}"
    figure = _new_figure(max(2.5, 0.32 * len(kernels) + 1.4))
    if not kernels:
        _empty(figure, title, "no kernels recorded")
        return _save(figure, path)
    axes = figure.add_subplot()
    labels = [_truncate(short_kernel_name(k.name)) for k in kernels]
    values_ms = [k.device_time_us / 1000 for k in kernels]
    colors = [category_color(k.category) for k in kernels]
    positions = list(range(len(kernels)))
    axes.barh(positions, values_ms, color=colors)
    axes.set_yticks(positions, labels, fontsize=7, fontfamily="monospace")
    axes.invert_yaxis()
    axes.set_xlabel(f"{_time_label(table)}, summed over {table.profiled_steps} profiled steps")
    axes.set_title(title)
    axes.grid(axis="x", alpha=0.3)
    categories = sorted({k.category for k in kernels})
    handles = [Patch(color=category_color(c), label=chart_text(c)) for c in categories]
    axes.legend(handles=handles, title="category", fontsize=7, loc="lower right")
    return _save(figure, path)


def category_chart(table: KernelTable, path: Path) -> Path:
    """Bars of the time spent per kernel category, labelled in ms and %; returns `path`."""
    totals = [(category, us) for category, us in table.category_totals_us() if plottable(us)]
    title = f"{_time_label(table).split(' (')[0].capitalize()} by kernel category"
    figure = _new_figure(max(2.5, 0.4 * len(totals) + 1.4))
    if not totals:
        _empty(figure, title, "no kernels recorded")
        return _save(figure, path)
    axes = figure.add_subplot()
    grand_us = sum(us for _, us in totals) or 1.0
    positions = list(range(len(totals)))
    values_ms = [us / 1000 for _, us in totals]
    bars = axes.barh(positions, values_ms, color=[category_color(c) for c, _ in totals])
    axes.set_yticks(positions, [_truncate(c) for c, _ in totals], fontsize=8)
    axes.invert_yaxis()
    labels = [f"{us / 1000:.2f} ms ({100 * us / grand_us:.1f} %)" for _, us in totals]
    axes.bar_label(bars, labels, padding=3, fontsize=8)
    axes.set_xlim(0, max(values_ms) * 1.35)
    axes.set_xlabel(f"{_time_label(table)}, summed over {table.profiled_steps} profiled steps")
    axes.set_title(title)
    axes.grid(axis="x", alpha=0.3)
    return _save(figure, path)


def step_time_chart(metrics: Metrics, path: Path) -> Path:
    """Median step time of eager and compiled, with inter-quartile error bars; returns `path`."""
    pairs = (("eager", metrics.eager), ("compiled", metrics.compiled))
    series = [(label, t) for label, t in pairs if t and all(map(plottable, (t.median_ms, t.q1_ms, t.q3_ms)))]
    title = "Step time (median, IQR)"
    speedup = metrics.speedup
    if plottable(speedup):
        title += f": {speedup:.2f}× speedup"
    figure = _new_figure(3.2)
    if not series:
        _empty(figure, title, "no step times recorded")
        return _save(figure, path)
    axes = figure.add_subplot()
    labels = [label for label, _ in series]
    medians = [t.median_ms for _, t in series]
    errors = [
        [max(0.0, t.median_ms - t.q1_ms) for _, t in series],
        [max(0.0, t.q3_ms - t.median_ms) for _, t in series],
    ]
    colors = ["#8c8c8c" if label == "eager" else "#4c72b0" for label in labels]
    bars = axes.bar(labels, medians, yerr=errors, capsize=8, color=colors, width=0.5)
    axes.bar_label(bars, [f"{m:.2f} ms" for m in medians], label_type="center", color="white")
    axes.set_ylabel("step time (ms)")
    axes.set_title(title)
    axes.grid(axis="y", alpha=0.3)
    return _save(figure, path)


MAX_SPEEDUP_BARS = 40
"""Runs the index's speedup chart shows at most: past that, the half with the lowest speedups and the half with the
highest (the table lists every run). 500 bars made a chart 150 inches tall that took 4.8 s to draw on each build."""


def speedup_chart(speedups: Sequence[tuple[str, float]], path: Path) -> Path:
    """Horizontal bars of the speedup of each run (label, eager ÷ compiled), a line at 1×; past `MAX_SPEEDUP_BARS`
    runs, the lowest and highest speedups, in that order; returns `path`."""
    title = "torch.compile speedup per run"
    speedups = [(label, value) for label, value in speedups if plottable(value)]
    if len(speedups) > MAX_SPEEDUP_BARS:
        ranked = sorted(speedups, key=lambda item: (item[1], item[0]))
        half = MAX_SPEEDUP_BARS // 2
        title = f"torch.compile speedup: the {half} lowest and {half} highest of {len(speedups)} runs"
        speedups = ranked[:half] + ranked[-half:]
    figure = _new_figure(max(2.0, 0.3 * len(speedups) + 1.2))
    if not speedups:
        _empty(figure, title, "no run with step times")
        return _save(figure, path)
    axes = figure.add_subplot()
    positions = list(range(len(speedups)))
    values = [value for _, value in speedups]
    colors = ["#55a868" if value >= 1.0 else "#c44e52" for value in values]
    bars = axes.barh(positions, values, color=colors, height=0.6)
    axes.set_yticks(positions, [_truncate(label, 40) for label, _ in speedups], fontsize=8)
    axes.invert_yaxis()
    axes.bar_label(bars, [f"{value:.2f}×" for value in values], padding=3, fontsize=8)
    axes.axvline(1.0, color="#333333", linewidth=1, linestyle="--")
    axes.set_xlim(0, max(1.0, *values) * 1.18)
    axes.set_xlabel("speedup: eager ÷ compiled median step time (×)")
    axes.set_title(title, fontsize=10)
    axes.grid(axis="x", alpha=0.3)
    return _save(figure, path)


def module_time_chart(summary: ProvenanceSummary, path: Path, n: int = 15) -> Path:
    """Bars of the `n` modules with the most device time of their own (not counting submodules); returns `path`."""
    rows = sorted((m for m in summary.modules if plottable(m.self_us) and m.self_us > 0), key=lambda m: -m.self_us)[:n]
    title = f"Top {len(rows)} modules by device time of their own"
    figure = _new_figure(max(2.5, 0.32 * len(rows) + 1.4))
    if not rows:
        _empty(figure, title, "no kernel time attributed to a module")
        return _save(figure, path)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    axes.barh(positions, [m.self_us / 1000 for m in rows], color="#4c72b0")
    axes.set_yticks(positions, [_truncate(m.path or "(model)") for m in rows], fontsize=7, fontfamily="monospace")
    axes.invert_yaxis()
    axes.set_xlabel("device time (ms), summed over the profiled steps")
    axes.set_title(title)
    axes.grid(axis="x", alpha=0.3)
    return _save(figure, path)
