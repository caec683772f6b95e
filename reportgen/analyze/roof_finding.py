"""The time-left finding: kernels of known FLOPs far below the GPU's roof, and the time they would save at
`ROOF_TARGET` of it (issue 31)."""

from __future__ import annotations

from reportgen.bundle import ROOF_TARGET, Analysis, Finding, Kernel, KernelCost

__all__ = ["TIME_LEFT_SHARE", "time_left", "time_left_us"]

TIME_LEFT_SHARE = 0.05
"""The finding fires when the time left is over this share of the kernel table's time."""
_LISTED = 5


def time_left_us(kernel: Kernel) -> float:
    """The row's time beyond what its FLOPs would take at `ROOF_TARGET` of its roof (0 when under, or not held
    to a roof)."""
    return kernel.cost.time_left_us(kernel.device_time_us) if kernel.cost is not None else 0.0


def _source(cost: KernelCost) -> str:
    """Where a row's FLOPs come from: its ops, or Inductor's estimate for a template."""
    return "Inductor's estimate" if cost.estimated or not cost.ops else ", ".join(f"`{op}`" for op in cost.ops)


def time_left(analysis: Analysis) -> Finding | None:
    """The kernels with the most time left, when together it is over `TIME_LEFT_SHARE` of the kernel time."""
    table, roof = analysis.kernels, analysis.roof
    if table is None or roof is None or table.total_us <= 0:
        return None
    ranked = sorted(((time_left_us(k), k) for k in table.kernels), key=lambda item: -item[0])
    left = [(us, k) for us, k in ranked if us > 0]
    total = sum(us for us, _ in left)
    if total <= TIME_LEFT_SHARE * table.total_us:
        return None
    lines = []
    for us, kernel in left[:_LISTED]:
        cost = kernel.cost
        assert cost is not None and cost.bound_tflops is not None
        achieved = cost.achieved_tflops(kernel.device_time_us) or 0.0
        lines.append(
            f"- `{kernel.name}` ({_source(cost)}, `{cost.dtype}`): {achieved:.3g} TFLOP/s, "
            f"{100 * achieved / cost.bound_tflops:.0f} % of its {cost.bound} roof ({cost.bound_tflops:.3g} TFLOP/s); "
            f"{us / 1000:.2f} ms left"
        )
    if len(left) > _LISTED:
        lines.append(f"- and {len(left) - _LISTED} more")
    evidence = (
        f"At {100 * ROOF_TARGET:.0f} % of their roof on an {roof.model}, the kernels of known FLOPs would take "
        f"{total / 1000:.2f} ms less over the {table.profiled_steps} profiled steps: "
        f"{100 * total / table.total_us:.1f} % of the kernel time.\n" + "\n".join(lines)
    )
    return Finding(
        rule="time-left",
        severity="info",
        title="Matrix kernels below the GPU's roof",
        evidence=evidence,
        suggestion=(
            "Compare `max-autotune` (Triton GEMM and convolution templates tuned per shape); run float32 products "
            "in bf16 under AMP, or in TF32 (`torch.set_float32_matmul_precision('high')`) where a row is held to "
            "FP32; use `channels_last` for convolutions; small or skinny shapes stay far from the roof whatever "
            "the library: batching them is the remedy."
        ),
    )
