"""The FLOP columns of a kernel table: achieved TFLOP/s and the share of the roof that applies (issue 31)."""

from __future__ import annotations

from reportgen.bundle import ROOF_TARGET, GraphAnalysis, GraphKernel, Kernel, KernelTable, Roof
from reportgen.escape import external_link, html_attribute
from reportgen.render.markup import escape_md, plural

__all__ = ["COST_HEADER", "cost_cells", "costs_note", "graph_roof_sentence", "has_costs", "why_not_counted"]

COST_HEADER = ["TFLOP/s", "% of roof", "GB/s"]
_NONE = "—"
_INDUCTOR = "Inductor's own kernel: no op of known cost launched it (Inductor estimates its bytes, not its FLOPs)"
_WHY_NOT = {
    "memcpy": "a copy: it moves bytes, no arithmetic",
    "memset": "a fill: it writes bytes, no arithmetic",
    "aten_native": "an ATen kernel of an op whose FLOPs are not counted (elementwise, normalisation, reduction, "
    "or a copy beside a matrix product or convolution)",
    "collective": "a collective: it moves bytes between GPUs",
    "extern_gemm": "the op that launched it was not found with its shapes in the shapes step",
    "conv": "a layout transform beside a convolution, or its op was not found with its shapes in the shapes step",
    "attention": "the op that launched it was not found with its shapes in the shapes step",
}
"""Why a row of a category has no FLOPs (the hover text of its — cell); Inductor's categories: `_INDUCTOR`."""


def why_not_counted(kernel: Kernel | GraphKernel) -> str:
    """Why the row has no FLOPs, by its category."""
    if kernel.category.startswith(("triton_", "cpp_")):
        return _INDUCTOR
    return _WHY_NOT.get(kernel.category, "no op of known cost (matrix product, convolution, attention) launched it")


def has_costs(table: KernelTable) -> bool:
    """Whether any row has FLOPs or bytes (then the table shows the columns)."""
    return any(row.cost is not None or row.bytes_moved is not None for row in table.kernels)


def cost_cells(kernel: Kernel | GraphKernel) -> list[str]:
    """The row's achieved TFLOP/s, its share of its roof (— where not counted or no roof is known) and its GB/s
    (≈: Inductor's estimate of the bytes)."""
    cost = kernel.cost
    achieved = cost.achieved_tflops(kernel.device_time_us) if cost is not None else None
    if cost is None or achieved is None:
        why = f'<span title="{html_attribute(f"not counted: {why_not_counted(kernel)}")}">{_NONE}</span>'
        return [why, _NONE, _gbps(kernel)]
    share = f"{100 * achieved / cost.bound_tflops:.0f} ({cost.bound})" if cost.bound_tflops else _NONE
    return [f"{'≈' if cost.estimated else ''}{achieved:.3g}", share, _gbps(kernel)]


def _gbps(kernel: Kernel | GraphKernel) -> str:
    moved = kernel.bytes_moved
    if moved is None or kernel.device_time_us <= 0:
        return _NONE
    return f"{'≈' if moved[1] else ''}{moved[0] / (kernel.device_time_us * 1e3):.3g}"  # bytes / µs / 1e3 = GB/s


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
        f"shapes, shared by time among the kernels that do the op's arithmetic, not the layout transforms, fills "
        f"and elementwise kernels beside them) over its time; {plural(len(counted), 'kernel')}, {share:.1f} % of "
        f"the time, {'is' if len(counted) == 1 else 'are'} counted (≈: a Triton template's FLOPs and bytes as "
        f"Inductor estimates them); the others (Inductor's own kernels, copies) are not: hover a — for why. "
        f"% of roof: {where}. GB/s: the bytes moved over the time: a counted op's least bytes, a copy's or fill's "
        f"bytes as the profiler recorded them, or (≈) Inductor's estimate for its Triton kernels (`kernel_num_gb`)."
    )


def graph_roof_sentence(graph: GraphAnalysis) -> str:
    """How near its roof a graph's kernels of known FLOPs run, time-weighted, and the time left at `ROOF_TARGET`
    ("" without such kernels)."""
    roof = graph.roof
    if roof is None:
        return ""
    share = 100 * roof.time_us / graph.kernel_time_us if graph.kernel_time_us > 0 else 0.0
    text = f"Kernels of known FLOPs: {roof.kernels}, {roof.time_us / 1000:.2f} ms ({share:.1f} % of the graph's time)"
    if roof.share_of_roof is None or roof.time_left_us is None:
        return f"{text}; no roof known."
    return (
        f"{text}, at {100 * roof.share_of_roof:.0f} % of their roof (time-weighted); at {100 * ROOF_TARGET:.0f} % "
        f"of it they would take {roof.time_left_us / 1000:.2f} ms less."
    )
