"""FLOPs per kernel row (issue 31): a real CPU run's rows against a count made by hand from its recipe, and the
sharing of an op's cost among the GPU kernels it launched, on a trace written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.analyze import analyze
from reportgen.analyze.costs import name_costs, with_costs, with_template_estimates, with_triton_bytes
from reportgen.bundle import (
    SHAPES_TRACE_FILE,
    IndexedKernel,
    Kernel,
    KernelCost,
    KernelSource,
    KernelTable,
    ModuleIndex,
    RunStatus,
    read_capture,
    read_manifest,
)
from reportgen.formats import Trace
from reportgen.recipe import load_recipe
from reportgen.run import RunOptions, run_recipe

RECIPES = Path(__file__).resolve().parents[1] / "data" / "recipes"


@pytest.mark.slow
def test_a_cpu_training_runs_matrix_products_are_counted_as_its_recipe_says(tmp_path: Path) -> None:
    """tiny_train: Linear(16, 16) -> ReLU -> Linear(16, 16) on a (4, 16) batch, trained. Per step: forward two
    addmm of 4 x 16 x 16 multiply-adds (2,048 FLOPs each); backward the second layer's input and weight
    gradients and the first layer's weight gradient (its input needs none), three mm of 2,048 FLOPs:
    10,240 FLOPs a step, over the 2 profiled steps 20,480."""
    path = RECIPES / "tiny_train.yaml"
    bundle = run_recipe(load_recipe(path), path, tmp_path, RunOptions())
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.ok, manifest.error
    assert (bundle / SHAPES_TRACE_FILE).is_file()
    analysis = analyze(bundle, manifest, read_capture(bundle, manifest))
    counted = [row for row in analysis.kernels.kernels if row.cost is not None]
    assert sum(row.cost.flops for row in counted if row.cost) == pytest.approx(20_480)
    ops = {op for row in counted if row.cost for op in row.cost.ops}
    assert ops == {"aten::addmm", "aten::mm"}
    assert all(row.cost.dtype == "float" for row in counted if row.cost)
    assert not any(row.name.startswith("graph_") for row in counted)  # Inductor's own C++ kernels: no op of known cost


def _op(name: str, ts: float, dur: float, external: int, **args: object) -> dict[str, object]:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 7, "ts": ts, "dur": dur,
            "args": {"External id": external, **args}}  # fmt: skip


def _kernel(name: str, ts: float, dur: float, external: int | None) -> dict[str, object]:
    args = {"External id": external} if external is not None else {}
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur, "args": args}


def test_an_ops_cost_goes_to_its_arithmetic_kernels_by_time_and_scaled_to_the_tables_launches(tmp_path: Path) -> None:
    """aten::convolution (2, 3, 16, 16) * (8, 3, 3, 3), stride 2, padding 1: 2 x 8 x 64 outputs of 27 multiply-adds
    = 55,296 FLOPs, run by cudnn_convolution (nested in it) as an fprop and a wgrad-named kernel of 30 and 10 µs,
    beside a layout transform, a fill and an elementwise kernel, which do none of its arithmetic; an addmm whose
    only kernel is elementwise gives it the whole cost; a Triton kernel launched outside any counted op has no
    cost; an mm whose dims do not multiply is left uncounted."""
    conv = {
        "Input Dims": [[2, 3, 16, 16], [8, 3, 3, 3], [], [], [], [], [], [], []],
        "Input type": [
            "float",
            "float",
            "",
            "ScalarList",
            "ScalarList",
            "ScalarList",
            "Scalar",
            "ScalarList",
            "Scalar",
        ],
        "Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"],
    }
    events = [
        _op("aten::convolution", 0, 100, 1, **conv),
        _op("aten::cudnn_convolution", 10, 80, 2),
        _kernel("void tensorTransformGeneric<float>", 190, 8, 2),
        _kernel("xmma_fprop", 200, 30, 2),
        _kernel("sm90_xmma_wgrad_tiling", 240, 10, 2),
        _kernel("Memset (Device)", 250, 1, 2),
        _kernel("void at::native::elementwise_kernel<128, 4>", 252, 6, 2),
        _kernel("triton_poi_fused_relu_0", 260, 5, 9),
        _op("aten::addmm", 280, 10, 4, **{"Input Dims": [[3], [2, 4], [4, 3]], "Input type": ["float"] * 3}),
        _kernel("void at::native::reduce_kernel<512, 1>", 290, 2, 4),
        _op("aten::mm", 300, 10, 3, **{"Input Dims": [[4, 5], [4, 5]], "Input type": ["float", "float"]}),
        _kernel("gemm", 320, 4, 3),
    ]
    costs = name_costs(Trace(path=tmp_path / "t.json", events=events), "cuda")
    assert costs["xmma_fprop"].flops == pytest.approx(55_296 * 30 / 40)
    assert costs["sm90_xmma_wgrad_tiling"].flops == pytest.approx(55_296 * 10 / 40)
    for beside in (
        "void tensorTransformGeneric<float>",
        "Memset (Device)",
        "void at::native::elementwise_kernel<128, 4>",
    ):
        assert costs[beside].flops == 0 and costs[beside].launches == 1
    assert costs["void at::native::reduce_kernel<512, 1>"].flops == pytest.approx(2 * 2 * 4 * 3)  # 2 m n k
    assert costs["triton_poi_fused_relu_0"].flops == 0 and costs["gemm"].flops == 0
    table = KernelTable(
        device="cuda",
        profiled_steps=3,
        total_us=100.0,
        kernels=[
            Kernel(name="xmma_fprop", category="conv", device_time_us=90.0, count=3, share=0.9),
            Kernel(name="triton_poi_fused_relu_0", category="pointwise", device_time_us=10.0, count=3, share=0.1),
        ],
    )
    rows = with_costs(table, costs).kernels
    assert rows[0].cost is not None and rows[0].cost.flops == pytest.approx(3 * 55_296 * 0.75)  # 3 launches
    bytes_per_call = (2 * 3 * 256 + 8 * 27 + 2 * 8 * 64) * 4
    assert rows[0].cost.bytes == pytest.approx(3 * bytes_per_call * 0.75)
    assert rows[0].cost.ops == ["aten::convolution"] and rows[1].cost is None


def _indexed(name: str, flop: int | None, num_gb: float | None, dtype: str | None, graph: int = 0) -> IndexedKernel:
    source = KernelSource(name=name, backend="triton", kernel_path=None, source_nodes=[], aten_ops=[], line=1,
                          end_line=1)  # fmt: skip
    return IndexedKernel(graph=graph, source=source, module_path=None, num_gb=num_gb, flop=flop, dtype=dtype)


def test_a_triton_templates_row_takes_inductors_estimates_marked_estimated() -> None:
    """A template of 2^31 FLOPs and 0.0125 GB a call, 4 launches: 8.6e9 FLOPs, 5e7 bytes. A pointwise kernel
    with a FLOP count (Inductor gives the one fused after an extern convolution that convolution's FLOPs) and a
    template name defined twice with two sizes stay uncounted."""
    index = ModuleIndex(
        kernels=[
            _indexed("triton_tem_fused_mm_0", 2**31, 0.0125, "c10::BFloat16"),
            _indexed("triton_poi_fused__to_copy_convolution_3", 602112, 0.001, "c10::Half"),
            _indexed("triton_tem_fused_mm_1", 1000, None, "c10::Half"),
            _indexed("triton_tem_fused_mm_1", 2000, None, "c10::Half", graph=1),
        ]
    )

    def row(name: str, category: str) -> Kernel:
        return Kernel(name=name, category=category, device_time_us=10.0, count=4, share=0.25)

    table = KernelTable(
        device="cuda", profiled_steps=2, total_us=40.0,
        kernels=[row("triton_tem_fused_mm_0", "triton_template"),
                 row("triton_poi_fused__to_copy_convolution_3", "triton_pointwise"),
                 row("triton_tem_fused_mm_1", "triton_template")],
    )  # fmt: skip
    rows = with_template_estimates(table, index).kernels
    cost = rows[0].cost
    assert cost is not None and cost.estimated and cost.ops == [] and cost.dtype == "c10::BFloat16"
    assert cost.flops == 4 * 2**31 and cost.bytes == pytest.approx(4 * 0.0125e9)
    assert rows[1].cost is None and rows[2].cost is None
    assert with_template_estimates(table, None) == table


def test_a_triton_rows_bytes_are_inductors_estimate_times_its_launches() -> None:
    """0.002 GB a call, 3 launches: 6e6 bytes; a counted row keeps its own bytes; a name defined twice with two
    sizes, or never, gets none."""
    index = ModuleIndex(
        kernels=[
            _indexed("triton_poi_fused_add_0", 0, 0.002, "float"),
            _indexed("triton_red_fused_sum_1", 0, 0.001, "float"),
            _indexed("triton_red_fused_sum_1", 0, 0.003, "float", graph=1),
        ]
    )
    counted = KernelCost(flops=1.0, bytes=5.0, dtype="float", ops=["aten::mm"])
    table = KernelTable(
        device="cuda", profiled_steps=1, total_us=4.0,
        kernels=[Kernel(name="triton_poi_fused_add_0", category="triton_pointwise", device_time_us=1.0, count=3, share=0.25),
                 Kernel(name="triton_red_fused_sum_1", category="triton_reduction", device_time_us=1.0, count=3, share=0.25),
                 Kernel(name="gemm", category="extern_gemm", device_time_us=1.0, count=1, share=0.25, cost=counted),
                 Kernel(name="Memset (Device)", category="memset", device_time_us=1.0, count=1, share=0.25)],
    )  # fmt: skip
    rows = with_triton_bytes(table, index).kernels
    assert rows[0].estimated_bytes == pytest.approx(6e6) and rows[0].bytes_moved == (pytest.approx(6e6), True)
    assert rows[1].estimated_bytes is None and rows[3].bytes_moved is None
    assert rows[2].estimated_bytes is None and rows[2].bytes_moved == (5.0, False)
