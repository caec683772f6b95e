"""Each counted kernel row against the GPU's roof: the lower of its dtype's peak and its arithmetic intensity
times the memory peak (the roofline model), from the peak table (`gpu_peaks`).

float32 products are held to the TF32 peak where the run allowed TF32 (`Capture.tf32_matmul` for matrix
products and attention, `Capture.tf32_cudnn` for convolutions), else to FP32.
"""

from __future__ import annotations

from reportgen.analyze.gpu_peaks import gpu_peaks, peak_tflops, peaks_of_model
from reportgen.bundle import Capture, Environment, GraphAnalysis, GraphKernel, GraphRoof, Kernel, KernelTable, Roof

__all__ = ["roof", "with_bounds", "with_graph_costs"]

_CHART_DTYPES = ("float", "c10::BFloat16", "c10::Half", "c10::Float8_e4m3fn")
_CONVOLUTIONS = frozenset({"aten::convolution", "aten::convolution_backward"})


def roof(environment: Environment | None, capture: Capture | None) -> Roof | None:
    """The peaks of the run's GPU; None on a CPU run or a GPU the table does not know."""
    if environment is None or environment.device != "cuda":
        return None
    row = gpu_peaks(environment.device_name)
    if row is None:
        return None
    return Roof(
        model=row.model,
        memory_tbps=row.memory_tbps,
        source=row.source,
        tf32_matmul=capture.tf32_matmul if capture else None,
        tf32_cudnn=capture.tf32_cudnn if capture else None,
        compute_tflops={
            dtype: peak
            for dtype in _CHART_DTYPES
            if (peak := peak_tflops(row, dtype, tf32=bool(capture and capture.tf32_matmul))) is not None
        },
    )


def with_bounds(table: KernelTable, found: Roof | None) -> KernelTable:
    """The table with each counted row's `bound_tflops` and `bound` (rows as they were without a roof)."""
    peaks = peaks_of_model(found.model) if found is not None else None
    if found is None or peaks is None:
        return table
    rows: list[Kernel] = []
    for row in table.kernels:
        cost = row.cost
        if cost is None:
            rows.append(row)
            continue
        convolution = bool(cost.ops) and set(cost.ops) <= _CONVOLUTIONS
        tf32 = found.tf32_cudnn if convolution else found.tf32_matmul
        compute = peak_tflops(peaks, cost.dtype, tf32=bool(tf32))
        if compute is None:
            rows.append(row)
            continue
        memory = cost.flops / cost.bytes * found.memory_tbps if cost.bytes else None  # FLOP/B x TB/s = TFLOP/s
        bound, kind = (memory, "memory") if memory is not None and memory < compute else (compute, "compute")
        rows.append(row.model_copy(update={"cost": cost.model_copy(update={"bound_tflops": bound, "bound": kind})}))
    return table.model_copy(update={"kernels": rows})


def with_graph_costs(graphs: list[GraphAnalysis], table: KernelTable) -> list[GraphAnalysis]:
    """Each graph's kernels with their share of the table row's cost or byte estimate (by launches: the same kernel
    name does the same work per launch) and its roof."""
    rows = {
        row.name: row
        for row in table.kernels
        if (row.cost is not None or row.estimated_bytes is not None or row.recorded_bytes is not None) and row.count > 0
    }
    out = []
    for graph in graphs:
        kernels = []
        for kernel in graph.kernels:
            row = rows.get(kernel.name)
            if row is None:
                kernels.append(kernel)
                continue
            part = kernel.count / row.count
            if row.cost is None:
                shares = {
                    key: value * part
                    for key, value in (("estimated_bytes", row.estimated_bytes), ("recorded_bytes", row.recorded_bytes))
                    if value is not None
                }
                kernels.append(kernel.model_copy(update=shares))
                continue
            cost = row.cost.model_copy(
                update={
                    "flops": row.cost.flops * part,
                    "bytes": None if row.cost.bytes is None else row.cost.bytes * part,
                }
            )
            kernels.append(kernel.model_copy(update={"cost": cost}))
        out.append(graph.model_copy(update={"kernels": kernels, "roof": _graph_roof(kernels)}))
    return out


def _graph_roof(kernels: list[GraphKernel]) -> GraphRoof | None:
    """The time-weighted share of their roof and the time left of a graph's kernels of known FLOPs."""
    counted = [k for k in kernels if k.cost is not None]
    if not counted:
        return None
    held = [
        (k.device_time_us, achieved / k.cost.bound_tflops, k.cost.time_left_us(k.device_time_us))
        for k in counted
        if k.cost is not None and k.cost.bound_tflops
        and (achieved := k.cost.achieved_tflops(k.device_time_us)) is not None
    ]  # fmt: skip
    held_us = sum(t for t, _, _ in held)
    known = held and held_us > 0
    return GraphRoof(
        kernels=len(counted),
        time_us=sum(k.device_time_us for k in counted),
        share_of_roof=sum(t * part for t, part, _ in held) / held_us if known else None,
        time_left_us=sum(us for _, _, us in held) if known else None,
    )
