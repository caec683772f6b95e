"""Kernel rows against the GPU's roof (issue 31): bounds worked out by hand from the H100 SXM datasheet's
peaks (989.4 TFLOP/s BF16 dense, 494.7 TF32, 66.9 FP32, 3.35 TB/s)."""

from __future__ import annotations

import pytest

from reportgen.analyze.roofline import roof, with_bounds
from reportgen.bundle import Capture, Kernel, KernelCost, KernelTable, RunStatus
from tests.conftest import make_manifest


def _row(name: str, flops: float, nbytes: float, dtype: str, op: str, time_us: float) -> Kernel:
    cost = KernelCost(flops=flops, bytes=nbytes, dtype=dtype, ops=[op])
    return Kernel(name=name, category="extern", device_time_us=time_us, count=1, share=0.25, cost=cost)


def test_each_row_gets_the_roof_at_its_arithmetic_intensity() -> None:
    environment = make_manifest("r", RunStatus.ok, None).environment
    assert environment is not None and environment.device_name == "NVIDIA H100 80GB HBM3"
    found = roof(environment, Capture(tf32_matmul=False, tf32_cudnn=True))
    assert found is not None and (found.model, found.memory_tbps) == ("H100 SXM", 3.35)
    assert found.compute_tflops == {
        "float": 66.9,
        "c10::BFloat16": 989.4,
        "c10::Half": 989.4,
        "c10::Float8_e4m3fn": 1978.9,
    }
    gemm = 2 * 4096**3  # a bf16 4096^3 product: 3 x 4096^2 x 2 bytes, 1,365 FLOP/B: 4,574 TFLOP/s of memory roof
    table = KernelTable(
        device="cuda",
        profiled_steps=1,
        total_us=4000.0,
        kernels=[
            _row("bf16 gemm", gemm, 3 * 4096**2 * 2, "c10::BFloat16", "aten::mm", 1000.0),
            _row("fp32 conv", 1e9, 1e9, "float", "aten::convolution", 1000.0),  # 1 FLOP/B: 3.35 TFLOP/s
            _row("fp32 mm", 1e12, 1e9, "float", "aten::mm", 1000.0),  # 1,000 FLOP/B, TF32 not allowed: FP32
            Kernel(name="triton", category="pointwise", device_time_us=1000.0, count=1, share=0.25),
        ],
    )
    rows = with_bounds(table, found).kernels
    assert [(r.cost.bound, r.cost.bound_tflops) for r in rows[:3] if r.cost] == [
        ("compute", 989.4),
        ("memory", pytest.approx(3.35)),
        ("compute", 66.9),
    ]
    assert rows[0].cost is not None and rows[0].cost.achieved_tflops(1000.0) == pytest.approx(gemm / 1e9)  # 137.4
    assert rows[3].cost is None


def test_a_gpu_the_table_does_not_know_and_a_cpu_run_have_no_roof() -> None:
    environment = make_manifest("r", RunStatus.ok, None).environment
    assert environment is not None
    assert roof(environment.model_copy(update={"device_name": "NVIDIA GeForce RTX 4090"}), None) is None
    assert roof(environment.model_copy(update={"device": "cpu", "device_name": "AMD EPYC"}), None) is None
    table = KernelTable(
        device="cuda", profiled_steps=1, total_us=1.0, kernels=[_row("k", 1.0, 1.0, "float", "aten::mm", 1.0)]
    )
    assert with_bounds(table, None) == table


@pytest.mark.parametrize("device_name", ["NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB", "NVIDIA H100 PCIe"])
def test_every_gpu_the_table_knows_bounds_its_rows(device_name: str) -> None:
    """The roof is found again by the model name it keeps, whatever the CUDA name looked like (an A100's rows
    had no bound: its model name is not its CUDA name)."""
    environment = make_manifest("r", RunStatus.ok, None).environment
    assert environment is not None
    found = roof(environment.model_copy(update={"device_name": device_name}), Capture(tf32_matmul=False))
    table = KernelTable(
        device="cuda", profiled_steps=1, total_us=1.0, kernels=[_row("k", 1e9, 1e9, "c10::Half", "aten::mm", 1.0)]
    )
    (row,) = with_bounds(table, found).kernels
    assert found is not None and row.cost is not None and row.cost.bound == "memory"
    assert row.cost.bound_tflops == pytest.approx(found.memory_tbps)  # 1 FLOP/B
