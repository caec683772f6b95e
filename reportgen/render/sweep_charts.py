"""The sweep page's charts: one figure per swept axis, each metric against it, a line per combination of the other
axes; failed points marked where they would lie."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from matplotlib.axes import Axes

from reportgen.bundle import Interval, PointFigures, RunStatus, Series
from reportgen.escape import chart_text
from reportgen.render.charts import _new_figure, _save, _truncate, plottable

__all__ = ["sweep_chart"]

_GiB = float(1 << 30)
Value = Callable[[PointFigures], float | None]


def _panel(axes: Axes, lines: Sequence[Series], value: Value, low_high: Callable[[PointFigures], Interval | None] | None,
           title: str, style: str = "-o") -> None:  # fmt: skip
    """One metric: a line per series over the axis' values (positions: the values in order), error bars from
    `low_high`; a failed point is an `x` on the axis."""
    ticks: list[str] = []
    for line in lines:
        for v in line.values:
            if v not in ticks:
                ticks.append(v)
    for index, line in enumerate(lines):
        xs: list[int] = []
        ys: list[float] = []
        failed: list[int] = []
        errors: list[list[float]] = [[], []]
        for point, at in zip(line.points, line.values, strict=True):
            x = ticks.index(at)
            y = value(point)
            if point.status is not RunStatus.ok:
                failed.append(x)
            if not plottable(y):
                continue
            xs.append(x)
            ys.append(y)
            band = low_high(point) if low_high is not None else None
            errors[0].append(max(y - band.low, 0.0) if band is not None and plottable(band.low) else 0.0)
            errors[1].append(max(band.high - y, 0.0) if band is not None and plottable(band.high) else 0.0)
        color = f"C{index % 10}"  # one colour per line, whichever metric of the panel
        label = chart_text(_truncate(line.label))
        if xs:
            axes.errorbar(xs, ys, yerr=errors if low_high else None, fmt=style, capsize=3, color=color, label=label)
        if failed:
            axes.plot(failed, [0.0] * len(failed), "x", color=color, markersize=9, clip_on=False)
    if not axes.has_data():
        axes.text(0.5, 0.5, "not measured", ha="center", va="center", transform=axes.transAxes, fontsize=8)
    axes.set_xticks(range(len(ticks)), [chart_text(t) for t in ticks], fontsize=8)
    axes.set_title(title, fontsize=9)
    axes.grid(alpha=0.3)


def sweep_chart(lines: Sequence[Series], axis: str, path: Path, recompiles: bool = False) -> Path:
    """Step times (eager dashed, compiled solid, 95 % intervals), speedup (wall; device dotted), throughput,
    peak memory, compile time and, with `recompiles`, recompiles per point, against `axis`."""
    panels = 6 if recompiles else 5
    figure = _new_figure(6.2)
    grid = figure.subplots(2, 3).flatten()
    _panel(grid[0], lines, lambda p: p.compiled_ms, lambda p: p.compiled_ci, "compiled step (ms); eager dashed")
    _panel(grid[0], lines, lambda p: p.eager_ms, lambda p: p.eager_ci, "compiled step (ms); eager dashed", "--s")
    _panel(grid[1], lines, lambda p: p.speedup, lambda p: p.speedup_ci, "speedup (wall); device dotted")
    _panel(grid[1], lines, lambda p: p.device_speedup, None, "speedup (wall); device dotted", ":^")
    _panel(grid[2], lines, lambda p: p.throughput[1], None, "compiled samples/s; eager dashed")
    _panel(grid[2], lines, lambda p: p.throughput[0], None, "compiled samples/s; eager dashed", "--s")
    _panel(grid[3], lines, lambda p: p.peak_compiled_bytes / _GiB if p.peak_compiled_bytes else None, None,
           "peak memory, compiled (GiB)")  # fmt: skip
    _panel(grid[4], lines, lambda p: p.compile_s, None, "first compiled call (s)")
    if recompiles:
        _panel(grid[5], lines, lambda p: float(p.recompiles) if p.recompiles is not None else None, None, "recompiles")
    for unused in grid[panels:]:
        unused.set_visible(False)
    for one in grid[:panels]:
        one.set_xlabel(chart_text(axis), fontsize=8)
        one.set_ylim(bottom=0)  # after every line of the panel: an earlier call would freeze the top at the first's
    handles, labels = grid[0].get_legend_handles_labels()
    count = len(lines)
    figure.legend(handles[:count], labels[:count], fontsize=7, loc="outside lower center", ncol=min(3, count or 1))
    figure.suptitle(f"The sweep against {chart_text(axis)} (x: a point that did not finish)", fontsize=10)
    return _save(figure, path)
