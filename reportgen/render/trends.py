"""A bundle's history: its trend page (charts over its kept runs, a row per run linked to its report), the
short History section of its report, and the sparkline on the index.

Input is the history index's `RunRecord`s of one bundle, oldest first (the pipeline queries the index;
render only draws and formats). Each torch version change is marked on the charts' axis.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from reportgen.bundle import Comparison, RunRecord, format_ms
from reportgen.escape import chart_text
from reportgen.render.charts import plottable
from reportgen.render.comparison import COMPARE_PAGE, verdict_text
from reportgen.render.markup import (
    HISTORY_PAGE,
    MISSING,
    ORPHAN,
    SORTABLE,
    code_span,
    escape_md,
    figure,
    list_table,
    page_link,
    page_name,
)

__all__ = ["HISTORY_PAGE", "history_page", "history_section", "run_page", "sparkline", "trend_chart"]

RUN_PAGE_SEPARATOR = "~"
"""Between a bundle's page name and a kept run's id in the run's page directory: no `page_name` holds it, and
URLs keep it as is."""
_DPI = 110
_GiB = float(1 << 30)


def run_page(run: RunRecord) -> str:
    """The page directory of a run's report under `reports/`: `<name>` for the latest, `<name>~<run id>` for a
    kept one."""
    latest = page_name(run.name)
    return latest if run.path == run.name else f"{latest}{RUN_PAGE_SEPARATOR}{page_name(PurePosixPath(run.path).name)}"


def _steps(axes: Axes, xs: list[int], runs: Sequence[RunRecord]) -> None:
    for label, median, iqr, colour in (
        ("eager", [r.eager_ms for r in runs], [r.eager_iqr_ms for r in runs], "#888888"),
        ("compiled", [r.compiled_ms for r in runs], [r.compiled_iqr_ms for r in runs], "#1f77b4"),
    ):
        points = [
            (x, m, q if q is None or all(map(plottable, q)) else None)
            for x, m, q in zip(xs, median, iqr, strict=True)
            if plottable(m)
        ]
        if points:
            lower = [max(m - (q[0] if q else m), 0.0) for _, m, q in points]  # a bundle from elsewhere may
            upper = [max((q[1] if q else m) - m, 0.0) for _, m, q in points]  # hold an IQR that misses its median
            axes.errorbar(
                [p[0] for p in points], [p[1] for p in points], yerr=[lower, upper], label=label, marker="o",
                color=colour, capsize=3,
            )  # fmt: skip
    axes.set_ylabel("wall step (ms)\nhost-dependent\nbars: IQR")
    axes.legend(loc="best", fontsize=8)


def _line(axes: Axes, xs: list[int], values: Sequence[float | None], label: str, name: str | None = None) -> None:
    points = [(x, v) for x, v in zip(xs, values, strict=True) if plottable(v)]
    axes.plot(
        [p[0] for p in points], [p[1] for p in points], marker="o", label=None if name is None else chart_text(name)
    )
    axes.set_ylabel(label)
    axes.ticklabel_format(axis="y", style="plain", useOffset=False)  # 10.5, not "+1.068e1" over the axis


def _mark_versions(panels: Sequence[Axes], runs: Sequence[RunRecord]) -> None:
    for x, (before, after) in enumerate(itertools.pairwise(runs), start=1):
        if before.torch == after.torch:
            continue
        for axes in panels:
            axes.axvline(x - 0.5, color="#d62728", linestyle="--", linewidth=0.8)
        panels[0].annotate(
            chart_text(f"torch {after.torch}"), (x - 0.5, 1.0), xycoords=("data", "axes fraction"), rotation=90, va="top",
            ha="right", fontsize=8, color="#d62728",
        )  # fmt: skip


def trend_chart(runs: Sequence[RunRecord], path: Path) -> Path:
    """Wall step times (with inter-quartile bars; host-dependent), device time per step (what repeats), speedup,
    compile time, peak memory, busy % per graph and kernel count, run by run (a panel without a value in any run is
    left out); a dashed line where the torch version changed."""
    peak = [r.peak_memory_compiled_bytes / _GiB if r.peak_memory_compiled_bytes else None for r in runs]
    graphs = sorted({g for r in runs for g in r.busy_percent})
    device: list[tuple[str | None, Sequence[float | None]]] = [
        ("eager", [r.device_eager_ms for r in runs]),
        ("compiled", [r.device_compiled_ms for r in runs]),
    ]
    lines: list[tuple[str, list[tuple[str | None, Sequence[float | None]]]]] = [
        ("device per step\n(ms), repeats", device),
        ("speedup (x)", [(None, [r.speedup for r in runs])]),
        ("compile (s)", [(None, [r.compile_s for r in runs])]),
        ("peak memory,\ncompiled (GiB)", [(None, peak)]),
        ("busy (%)", [(g, [r.busy_percent.get(g) for r in runs]) for g in graphs]),
        ("kernels", [(None, [r.kernel_count for r in runs])]),
    ]
    lines = [(label, series) for label, series in lines if any(plottable(v) for _, s in series for v in s)]
    fig = Figure(figsize=(8.0, 3.0 + 1.6 * len(lines)), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    panels = list(
        fig.subplots(1 + len(lines), 1, sharex=True, height_ratios=[2] + [1] * len(lines), squeeze=False)[:, 0]
    )
    xs = list(range(len(runs)))
    _steps(panels[0], xs, runs)
    for axes, (label, series) in zip(panels[1:], lines, strict=True):
        for name, values in series:
            _line(axes, xs, values, label, name)
        if label.startswith("speedup"):
            axes.axhline(1.0, color="#bbbbbb", linewidth=0.8)
        if any(name for name, _ in series):
            axes.legend(loc="best", fontsize=7)
    _mark_versions(panels, runs)
    panels[-1].set_xticks(xs, [chart_text(r.started_at[5:16].replace("T", " ")) for r in runs], rotation=30, ha="right")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=_DPI, metadata={"Software": None})
    return path


def sparkline(runs: Sequence[RunRecord], path: Path) -> Path:
    """The index's small chart of the compiled median over the runs (the latest point marked)."""
    fig = Figure(figsize=(1.6, 0.45), dpi=_DPI)
    FigureCanvasAgg(fig)
    axes = fig.add_axes((0.02, 0.08, 0.96, 0.84))
    points = [(x, r.compiled_ms) for x, r in enumerate(runs) if plottable(r.compiled_ms)]
    if points:
        axes.plot([p[0] for p in points], [p[1] for p in points], color="#1f77b4", linewidth=1.2)
        axes.plot([points[-1][0]], [points[-1][1]], marker="o", markersize=3, color="#d62728")
    axes.set_axis_off()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=_DPI, metadata={"Software": None}, transparent=True)
    return path


def _num(value: float | None, spec: str) -> str:
    return f"{value:{spec}}" if plottable(value) else MISSING


def _ms(value: float | None) -> str:
    return format_ms(value) if plottable(value) else MISSING


def _row(run: RunRecord, latest: bool) -> list[str]:
    started = escape_md(run.started_at[:16].replace("T", " "))
    busy = ", ".join(f"{escape_md(g)}\u00a0{_num(v, '.0f')}" for g, v in run.busy_percent.items()) or MISSING
    return [
        f"[{started}](<index.md>) (this report)" if latest else page_link(started, f"../{run_page(run)}/index"),
        escape_md(run.status),
        escape_md(run.torch or MISSING),
        escape_md(run.device_name or MISSING),
        code_span(run.git_commit[:12] + ("+dirty" if run.git_commit.endswith("+dirty") else ""))
        if run.git_commit
        else MISSING,
        _ms(run.device_eager_ms),
        _ms(run.device_compiled_ms),
        _num(run.launches_compiled, ",.0f"),
        _ms(run.eager_ms),
        _ms(run.compiled_ms),
        _num(run.speedup, ".2f") + ("×" if plottable(run.speedup) else ""),
        _num(run.compile_s, ".1f"),
        _num(run.peak_memory_compiled_bytes / _GiB if run.peak_memory_compiled_bytes else None, ".2f"),
        _num(run.kernel_count, "d"),
        busy,
    ]


def history_page(title: str, runs: Sequence[RunRecord], chart: str | None) -> str:
    """The trend page: the charts, then one row per run (newest first), each linked to its report."""
    headers = ["run", "status", "torch", "device", "commit", "device eager ms", "device compiled ms"]
    headers += [
        "launches",
        "wall eager ms",
        "wall compiled ms",
        "speedup",
        "compile s",
        "peak GiB",
        "kernels",
        "busy %",
    ]
    rows = [_row(r, i == len(runs) - 1) for i, r in reversed(list(enumerate(runs)))]
    parts = [
        ORPHAN,
        f"# {escape_md(title)}: history",
        f"{len(runs)} runs of this bundle are kept, oldest first on the charts, newest first in the table; each "
        "row links to that run's report. A dashed line marks a change of torch version. Device time per step (the "
        "GPU's clock over the profiled steps) and launches per compiled step repeat from run to run of the same "
        "code; wall step times and the speedup depend on the host's CPU speed and vary between processes. "
        "[Latest report](index.md)",
    ]
    if chart:
        parts.append(
            figure(
                chart,
                "Wall step times, device time per step, speedup, compile time, peak memory, busy % and kernel count "
                "of each kept run",
                "Median wall step times with their inter-quartile range (host-dependent), median device time per "
                "profiled step (repeats), speedup, first-call compile time, peak memory of the compiled steps, busy % "
                "per compiled graph and distinct kernels, oldest run first.",
            )
        )
    parts.append(list_table(headers, rows, classes=SORTABLE))
    return "\n\n".join(parts) + "\n"


def history_section(runs: Sequence[RunRecord], comparison: Comparison | None) -> str:
    """The report's short History section: links to the trend page and to the comparison with the run before."""
    if len(runs) < 2 and comparison is None:
        return ""
    parts = ["## History"]
    if len(runs) >= 2:
        parts.append(
            f"{len(runs)} runs of this bundle are kept: [their trend]({HISTORY_PAGE}.md) (`reportgen history`)."
        )
    if comparison is not None:
        parts.append(f"[Compared with the run before]({COMPARE_PAGE}.md): {verdict_text(comparison)}")
    return "\n\n".join(parts)
