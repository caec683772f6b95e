"""The roofline chart: each kernel of known FLOPs at its arithmetic intensity and achieved TFLOP/s, sized by its
time, under the roofs of the GPU (issue 31)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reportgen.bundle import GraphKernel, Kernel, Roof
from reportgen.escape import chart_text
from reportgen.render.charts import _new_figure, _save, plottable

__all__ = ["roofline_chart"]

_DTYPE_LABELS = {"c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32"}


def roofline_chart(
    kernels: Sequence[Kernel | GraphKernel], roof: Roof, path: Path, title: str = "kernels of known FLOPs"
) -> Path:
    """Log-log roofline of the counted kernels with a byte count (a run's table, or one graph's kernels); a roof
    per dtype among them; returns `path`."""
    rows = [
        (row.cost.flops / row.cost.bytes, achieved, row.device_time_us, row.cost.dtype)
        for row in kernels
        if row.cost is not None and row.cost.bytes
        if (achieved := row.cost.achieved_tflops(row.device_time_us)) is not None
        and plottable(achieved)
        and achieved > 0
    ]
    figure = _new_figure(4.2)
    axes = figure.add_subplot()
    axes.set_title(f"Roofline: {chart_text(title)} on an {chart_text(roof.model)}")
    if not rows:
        axes.text(0.5, 0.5, "no kernel of known FLOPs and bytes", ha="center", va="center", transform=axes.transAxes)
        axes.set_axis_off()
        return _save(figure, path)
    intensities = [r[0] for r in rows]
    low, high = min(intensities) / 4, max(intensities) * 4
    longest = max(r[2] for r in rows)
    for dtype in sorted({r[3] for r in rows}):
        compute = roof.compute_tflops.get(dtype)
        label = _DTYPE_LABELS.get(dtype, chart_text(dtype))
        mine = [r for r in rows if r[3] == dtype]
        axes.scatter(
            [r[0] for r in mine],
            [r[1] for r in mine],
            s=[20 + 400 * r[2] / longest for r in mine],
            alpha=0.6,
            label=f"{label} kernels",
        )
        if compute is not None:
            ridge = compute / roof.memory_tbps
            xs = [low, max(low, min(ridge, high)), high]
            axes.plot(xs, [min(compute, x * roof.memory_tbps) for x in xs], linestyle="--", label=f"{label} roof")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity (FLOP per byte, least traffic)")
    axes.set_ylabel("achieved TFLOP/s")
    axes.grid(alpha=0.3, which="both")
    axes.legend(fontsize=7, loc="lower right")
    return _save(figure, path)
