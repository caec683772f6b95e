"""The FLOP columns of a kernel table: achieved TFLOP/s and the share of the roof that applies (issue 31)."""

from __future__ import annotations

from reportgen.bundle import Kernel, KernelTable, Roof
from reportgen.escape import external_link
from reportgen.render.markup import escape_md, plural

__all__ = ["COST_HEADER", "cost_cells", "costs_note", "has_costs"]

COST_HEADER = ["TFLOP/s", "% of roof"]
_NONE = "—"


def has_costs(table: KernelTable) -> bool:
    """Whether any row has FLOPs (then the table shows the columns)."""
    return any(row.cost is not None for row in table.kernels)


def cost_cells(kernel: Kernel) -> list[str]:
    """The row's achieved TFLOP/s and its share of its roof (— where not counted or no roof is known)."""
    cost = kernel.cost
    achieved = cost.achieved_tflops(kernel.device_time_us) if cost is not None else None
    if cost is None or achieved is None:
        return [_NONE, _NONE]
    share = f"{100 * achieved / cost.bound_tflops:.0f} ({cost.bound})" if cost.bound_tflops else _NONE
    return [f"{achieved:.3g}", share]


def costs_note(table: KernelTable, roof: Roof | None) -> str:
    """What the FLOP columns count and which roof they are held to."""
    counted = [row for row in table.kernels if row.cost is not None]
    flops_time = sum(row.device_time_us for row in counted)
    share = 100 * flops_time / table.total_us if table.total_us else 0.0
    where = (
        f"held to the roof of an {escape_md(roof.model)} at each kernel's arithmetic intensity: the lower of its "
        f"dtype's dense peak and intensity × {roof.memory_tbps:g} TB/s ({external_link('datasheet', roof.source)})"
        if roof is not None
        else "no roof: the peak table does not know this device"
    )
    return (
        f"TFLOP/s: the FLOPs of the matrix products, convolutions and attention that launched a kernel (from their "
        f"shapes, shared among the op's kernels by time) over its time; {plural(len(counted), 'kernel')}, {share:.1f} % of "
        f"the time, {'is' if len(counted) == 1 else 'are'} counted; the others (Inductor's own kernels, copies) are not. % of roof: {where}."
    )
