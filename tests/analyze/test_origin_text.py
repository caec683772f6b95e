"""What findings say about where their kernels come from."""

from __future__ import annotations

from reportgen.analyze.origin_text import benchmark_place, short_kernel_modules
from reportgen.bundle import Analysis, GraphAnalysis, GraphKernel, KernelOrigin, KernelTable, ModuleFile, RunStatus
from tests.conftest import make_manifest

WRAPPER = "modules/wrappers/cbw.py"


def _origin(module: str | None, line: int | None, share: float) -> KernelOrigin:
    return KernelOrigin(module_path=module, file="/m.py" if line else None, line=line, share=share, match="kernel")


def _graph() -> GraphAnalysis:
    kernels = [
        GraphKernel(graph=0, name="triton_poi_a_0", category="triton_pointwise", device_time_us=40.0, count=20,
                    share=0.4, origins=[_origin("blocks.2.1.bn", 7, 0.5), _origin("blocks.3.0.bn", 7, 0.5)]),
        GraphKernel(graph=0, name="triton_poi_b_1", category="triton_pointwise", device_time_us=60.0, count=10,
                    share=0.6, origins=[_origin("", 9, 1.0)]),
        GraphKernel(graph=0, name="long", category="conv", device_time_us=900.0, count=1, share=0.9,
                    origins=[_origin("stem", 3, 1.0)]),
    ]  # fmt: skip
    return GraphAnalysis(graph=0, label="forward (graph 0)", key=None, kind="forward", wrapper=WRAPPER, calls=2,
                         wall_us=2000.0, kernel_time_us=1000.0, kernels=kernels)  # fmt: skip


def test_short_kernels_are_counted_per_block_and_call() -> None:
    assert short_kernel_modules(_graph(), 50.0) == (
        " Short kernels are launched most from: `(model)` (5 per call), `blocks.2` (5 per call), "
        "`blocks.3` (5 per call)."
    )
    assert short_kernel_modules(_graph(), 1.0) == ""


def test_a_benchmarked_kernel_names_its_module_and_line() -> None:
    manifest = make_manifest("m", RunStatus.ok, None).model_copy(
        update={"modules": [ModuleFile(path=WRAPPER, kind="wrapper", order=0, size_bytes=1)]}
    )
    analysis = Analysis(kernels=KernelTable(device="cuda", profiled_steps=1, total_us=0.0, kernels=[]),
                        graphs=[_graph()])  # fmt: skip
    assert (
        benchmark_place(analysis, manifest, 0, "triton_poi_a_0") == " From `blocks.2.1.bn` at `/m.py:7` (and 1 more)."
    )
    assert benchmark_place(analysis, manifest, 0, "triton_poi_b_1") == " From `(model)` at `/m.py:9`."
    assert benchmark_place(analysis, manifest, 1, "triton_poi_a_0") == ""
