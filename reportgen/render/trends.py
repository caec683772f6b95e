"""A bundle's history on its report page: step times, speedup and compile time over its kept runs.

Input is the history index's `RunRecord`s of one bundle, oldest first (the pipeline queries the index;
render only draws and formats). Each torch version change is marked on the chart's axis.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from reportgen.bundle import RunRecord, format_ms
from reportgen.render.markup import MISSING, code_span, escape_md, figure, list_table

__all__ = ["history_section", "trend_chart"]

_DPI = 110


def trend_chart(runs: Sequence[RunRecord], path: Path) -> Path:
    """Eager and compiled medians (with inter-quartile bars), speedup and compile time, run by run."""
    fig = Figure(figsize=(8.0, 6.0), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    steps, speedup, compile_ = fig.subplots(3, 1, sharex=True, height_ratios=[2, 1, 1])
    xs = list(range(len(runs)))
    for label, median, iqr, colour in (
        ("eager", [r.eager_ms for r in runs], [r.eager_iqr_ms for r in runs], "#888888"),
        ("compiled", [r.compiled_ms for r in runs], [r.compiled_iqr_ms for r in runs], "#1f77b4"),
    ):
        points = [(x, m, q) for x, m, q in zip(xs, median, iqr, strict=True) if m is not None]
        if points:
            lower = [max(m - (q[0] if q else m), 0.0) for _, m, q in points]  # a bundle from elsewhere may
            upper = [max((q[1] if q else m) - m, 0.0) for _, m, q in points]  # hold an IQR that misses its median
            steps.errorbar(
                [p[0] for p in points],
                [p[1] for p in points],
                yerr=[lower, upper],
                label=label,
                marker="o",
                color=colour,
                capsize=3,
            )
    steps.set_ylabel("median step (ms)\nbars: IQR")
    steps.legend(loc="best")
    _line(speedup, xs, [r.speedup for r in runs], "speedup (x)")
    speedup.axhline(1.0, color="#bbbbbb", linewidth=0.8)
    _line(compile_, xs, [r.compile_s for r in runs], "compile (s)")
    for x, (before, after) in enumerate(itertools.pairwise(runs), start=1):
        if before.torch != after.torch:
            for axes in (steps, speedup, compile_):
                axes.axvline(x - 0.5, color="#d62728", linestyle="--", linewidth=0.8)
            steps.annotate(
                f"torch {after.torch}",
                (x - 0.5, 1.0),
                xycoords=("data", "axes fraction"),
                rotation=90,
                va="top",
                ha="right",
                fontsize=8,
                color="#d62728",
            )
    compile_.set_xticks(xs, [r.started_at[5:16].replace("T", " ") for r in runs], rotation=30, ha="right")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=_DPI, metadata={"Software": None})
    return path


def _line(axes: Axes, xs: list[int], values: list[float | None], label: str) -> None:
    points = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
    axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", color="#2ca02c")
    axes.set_ylabel(label)


def history_section(runs: Sequence[RunRecord], chart: str | None) -> str:
    """The page's History section (empty with fewer than two runs): the chart and one row per run."""
    if len(runs) < 2:
        return ""

    def num(value: float | None, spec: str, unit: str = "") -> str:
        return MISSING if value is None else f"{value:{spec}}{unit}"

    rows = [
        [
            escape_md(r.started_at[:16].replace("T", " ")),
            "latest" if i == len(runs) - 1 else code_span(r.path),
            escape_md(r.status),
            escape_md(r.torch or MISSING),
            escape_md(r.device_name or MISSING),
            MISSING if r.eager_ms is None else format_ms(r.eager_ms),
            MISSING if r.compiled_ms is None else format_ms(r.compiled_ms),
            num(r.speedup, ".2f", "×"),
            num(r.compile_s, ".1f"),
        ]
        for i, r in enumerate(runs)
    ]
    headers = ["started", "run", "status", "torch", "device", "eager ms", "compiled ms", "speedup", "compile s"]
    parts = [
        "## History",
        f"{len(runs)} runs of this bundle are kept (`reportgen history`; compare two with `reportgen compare`). "
        "A dashed line marks a change of torch version.",
    ]
    if chart:
        parts.append(
            figure(
                chart,
                "Step times, speedup and compile time of each kept run",
                "Median step times with their inter-quartile range, speedup and compile time, oldest run first.",
            )
        )
    parts.append(list_table(headers, rows))
    return "\n\n".join(parts)
