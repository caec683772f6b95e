"""The time-left finding (issue 31), on rows whose time at 80 % of their roof is worked out by hand."""

from __future__ import annotations

import pytest

from reportgen.analyze.roof_finding import time_left, time_left_us
from reportgen.bundle import Analysis, Kernel, KernelCost, KernelTable, Roof

ROOF = Roof(model="H100 SXM", memory_tbps=3.35, source="https://example.com")


def _row(name: str, time_us: float, flops: float | None, bound: float | None = None) -> Kernel:
    cost = (
        None
        if flops is None
        else KernelCost(flops=flops, dtype="c10::BFloat16", ops=["aten::mm"], bound_tflops=bound, bound="compute")
    )
    return Kernel(name=name, category="extern GEMM", device_time_us=time_us, count=1, share=0.0, cost=cost)


def _analysis(rows: list[Kernel], roof: Roof | None = ROOF) -> Analysis:
    total = sum(r.device_time_us for r in rows)
    return Analysis(kernels=KernelTable(device="cuda", profiled_steps=2, total_us=total, kernels=rows), roof=roof)


def test_the_time_left_is_the_rows_time_beyond_its_flops_at_80_percent_of_its_roof() -> None:
    # 8e12 FLOPs at 0.8 x 1000 TFLOP/s take 10,000 µs; the row took 25,000: 15,000 µs left
    assert time_left_us(_row("slow", 25_000.0, 8e12, 1000.0)) == pytest.approx(15_000.0)
    assert time_left_us(_row("fast", 9_000.0, 8e12, 1000.0)) == 0.0  # (already past 80 %)
    assert time_left_us(_row("triton", 9_000.0, None)) == 0.0
    assert time_left_us(_row("no roof", 9_000.0, 8e12, None)) == 0.0


def test_the_finding_names_the_kernels_with_most_time_left() -> None:
    rows = [
        _row("gemm_a", 25_000.0, 8e12, 1000.0),  # 15 ms left, 8e12 / 25 ms = 320 TFLOP/s, 32 %
        _row("gemm_b", 12_000.0, 8e12, 1000.0),  # 2 ms left
        _row("triton_poi_fused_0", 63_000.0, None),
    ]
    finding = time_left(_analysis(rows))
    assert finding is not None and finding.rule == "time-left"
    assert "17.00 ms less over the 2 profiled steps: 17.0 % of the kernel time" in finding.evidence
    lines = [line for line in finding.evidence.splitlines() if line.startswith("- ")]
    assert lines[0].startswith("- `gemm_a`") and "320 TFLOP/s, 32 % of its compute roof" in lines[0]
    assert "15.00 ms left" in lines[0] and lines[1].startswith("- `gemm_b`") and len(lines) == 2


def test_no_finding_under_5_percent_or_without_a_roof() -> None:
    rows = [_row("gemm", 10_400.0, 8e12, 1000.0), _row("other", 89_600.0, None)]  # 0.4 ms of 100 ms
    assert time_left(_analysis(rows)) is None
    assert time_left(_analysis([_row("gemm_a", 25_000.0, 8e12, 1000.0)], roof=None)) is None
