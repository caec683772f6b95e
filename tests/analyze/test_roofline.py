"""Kernel rows against the GPU's roof (issue 31): bounds worked out by hand from the H100 SXM datasheet's
peaks (989.4 TFLOP/s BF16 dense, 494.7 TF32, 66.9 FP32, 3.35 TB/s)."""

from __future__ import annotations

import pytest

from reportgen.analyze.roofline import _graph_roof, roof, with_bounds, with_graph_costs
from reportgen.bundle import Capture, GraphAnalysis, GraphKernel, Kernel, KernelCost, KernelTable, RunStatus
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


def test_each_graph_gets_its_launches_share_of_a_rows_cost() -> None:
    """A row of 3 launches and 300 FLOPs (600 bytes), 2 launches in graph 0 and 1 in graph 1: 200 and 100 FLOPs,
    400 and 200 bytes, the row's roof kept; an uncounted kernel stays without a cost."""
    cost = KernelCost(flops=300.0, bytes=600.0, dtype="float", ops=["aten::mm"], bound_tflops=5.0, bound="memory")
    table = KernelTable(
        device="cuda", profiled_steps=1, total_us=3.0,
        kernels=[Kernel(name="gemm", category="extern_gemm", device_time_us=3.0, count=3, share=1.0, cost=cost)],
    )  # fmt: skip

    def graph(number: int, launches: int) -> GraphAnalysis:
        kernels = [
            GraphKernel(graph=number, name="gemm", category="extern_gemm", device_time_us=launches, count=launches,
                        share=0.5),
            GraphKernel(graph=number, name="triton_poi_0", category="triton_pointwise", device_time_us=1.0, count=1,
                        share=0.5),
        ]  # fmt: skip
        return GraphAnalysis(graph=number, label=f"g{number}", key=None, kind="forward", calls=1, wall_us=1.0,
                             kernel_time_us=launches + 1.0, kernels=kernels)  # fmt: skip

    poi = Kernel(name="triton_poi_0", category="triton_pointwise", device_time_us=2.0, count=2, share=0.5,
                 estimated_bytes=8e6)  # fmt: skip
    table = table.model_copy(update={"kernels": [*table.kernels, poi]})
    out = with_graph_costs([graph(0, 2), graph(1, 1)], table)
    assert [g.kernels[1].estimated_bytes for g in out] == [4e6, 4e6]  # one launch of 2 in each graph
    costs = [g.kernels[0].cost for g in out]
    assert [(c.flops, c.bytes, c.bound_tflops) for c in costs if c] == [(200.0, 400.0, 5.0), (100.0, 200.0, 5.0)]
    assert all(g.kernels[1].cost is None for g in out)
    assert out[0].kernels[0].estimated_bytes is None  # a counted kernel's bytes are its cost's
    copy = Kernel(name="triton_poi_0", category="memcpy", device_time_us=2.0, count=2, share=0.5, recorded_bytes=6e6)
    copied = with_graph_costs([graph(0, 2)], table.model_copy(update={"kernels": [*table.kernels[:1], copy]}))
    assert (copied[0].kernels[1].recorded_bytes, copied[0].kernels[1].bytes_moved) == (3e6, (3e6, False))


def test_a_graphs_roof_is_its_counted_kernels_share_weighted_by_time_and_their_time_left() -> None:
    """Two counted kernels: 2e9 FLOPs in 1 ms against a 4 TFLOP/s roof (50 %) and 1e9 FLOPs in 3 ms against 1
    TFLOP/s (33.3 %); time-weighted (1 x 50 + 3 x 33.3) / 4 = 37.5 %. At 80 % of the roof they would take
    2e9 / 3.2e12 = 0.625 ms and 1e9 / 0.8e12 = 1.25 ms: 0.375 + 1.75 = 2.125 ms less. An uncounted kernel of 4 ms
    counts in neither; without a roof the shares are unknown."""

    def kernel(name: str, time_us: float, flops: float | None, bound: float | None) -> GraphKernel:
        cost = None if flops is None else KernelCost(flops=flops, dtype="float", ops=["aten::mm"], bound_tflops=bound)
        return GraphKernel(graph=0, name=name, category="x", device_time_us=time_us, count=1, share=0.1, cost=cost)

    found = _graph_roof([kernel("a", 1000.0, 2e9, 4.0), kernel("b", 3000.0, 1e9, 1.0), kernel("c", 4000.0, None, None)])
    assert found is not None and (found.kernels, found.time_us) == (2, 4000.0)
    assert found.share_of_roof == pytest.approx(0.375) and found.time_left_us == pytest.approx(2125.0)
    unheld = _graph_roof([kernel("a", 1000.0, 2e9, None)])
    assert unheld is not None and unheld.share_of_roof is None and unheld.time_left_us is None
    assert _graph_roof([kernel("c", 4000.0, None, None)]) is None
