"""Kernel rows joined with the provenance table: shares, extern kinds, the roll-up, and runs without provenance."""

from __future__ import annotations

import pytest

from reportgen.analyze import attribute_kernels
from reportgen.bundle import CallSite, GraphAnalysis, GraphKernel, GraphProvenance, Provenance, SourceFrame

WRAPPER = "modules/wrappers/cbw.py"


def _site(kernel: str, module: str, line: int) -> CallSite:
    return CallSite(kernel=kernel, module_path=module, frame=SourceFrame(file="/m.py", line=line, function="forward"))


def _kernel(name: str, category: str, time_us: float) -> GraphKernel:
    return GraphKernel(graph=0, name=name, category=category, device_time_us=time_us, count=1, share=0.0)


def _graph(*kernels: GraphKernel) -> GraphAnalysis:
    total = sum(k.device_time_us for k in kernels)
    return GraphAnalysis(
        graph=0, label="backward (graph 0)", key=None, kind="backward", wrapper=WRAPPER, calls=1, wall_us=total,
        kernel_time_us=total, kernels=list(kernels),
    )  # fmt: skip


PROVENANCE = Provenance(
    method="debug-handles",
    graphs=[
        GraphProvenance(
            wrapper=WRAPPER,
            kind="backward",
            sites=[
                _site("triton_poi_fused_add_0", "blocks.0.act", 10),
                _site("triton_poi_fused_add_0", "blocks.1.act", 20),
                _site("extern_kernels.mm", "blocks.0.fc", 11),
                _site("torch.ops.aten.convolution_backward.default", "blocks.1.conv", 21),
            ],
        )
    ],
)


def test_rows_share_their_time_among_their_call_sites_and_roll_up_the_module_tree() -> None:
    graphs = [
        _graph(
            _kernel("triton_poi_fused_add_0", "triton_pointwise", 100.0),
            _kernel("nvjet_sm90_tst_128x64", "extern_gemm", 40.0),
            _kernel("dgrad2d_c1_k1_nhwc", "conv", 30.0),
            _kernel("void at::native::elementwise_kernel<128>", "aten_native", 20.0),
            _kernel("triton_poi_fused_mul_1", "triton_pointwise", 10.0),
        )
    ]
    out, summary = attribute_kernels(graphs, PROVENANCE, "cuda")
    origins = {k.name: [(o.module_path, o.line, o.share, o.match) for o in k.origins] for k in out[0].kernels}
    assert origins == {
        "triton_poi_fused_add_0": [("blocks.0.act", 10, 0.5, "kernel"), ("blocks.1.act", 20, 0.5, "kernel")],
        "nvjet_sm90_tst_128x64": [("blocks.0.fc", 11, 1.0, "op")],
        "dgrad2d_c1_k1_nhwc": [("blocks.1.conv", 21, 1.0, "op")],
        # no extern call of its own kind: it ran inside one of the graph's extern calls
        "void at::native::elementwise_kernel<128>": [("blocks.0.fc", 11, 0.5, "op"), ("blocks.1.conv", 21, 0.5, "op")],
        "triton_poi_fused_mul_1": [],
    }
    assert summary is not None
    assert summary.compiled_us == 200.0 and summary.module_us == 190.0 and summary.line_us == 190.0
    modules = {m.path: (m.backward_us, m.self_us) for m in summary.modules}
    assert modules["blocks.1"] == (50.0 + 30.0 + 10.0, 0.0)
    assert modules["blocks.0.fc"] == (50.0, 50.0)
    assert modules[""] == (190.0, 0.0)
    assert [(line.line, line.total_us) for line in summary.lines] == [(10, 50.0), (11, 50.0), (20, 50.0), (21, 40.0)]


def test_without_provenance_the_graphs_are_unchanged_and_the_summary_is_none() -> None:
    graphs = [_graph(_kernel("triton_poi_fused_add_0", "triton_pointwise", 100.0))]
    out, summary = attribute_kernels(graphs, None, "cuda")
    assert out == graphs and summary is None


def test_cpu_bookkeeping_ops_are_not_kernel_time() -> None:
    graphs = [_graph(_kernel("graph_0_cpp_fused_add_0", "cpp_fused", 5.0), _kernel("aten::copy_", "aten_native", 5.0))]
    provenance = PROVENANCE.model_copy(
        update={"graphs": [GraphProvenance(wrapper=WRAPPER, kind="backward", sites=[_site("cpp_fused_add_0", "a", 1)])]}
    )
    out, summary = attribute_kernels(graphs, provenance, "cpu")
    assert summary is not None and summary.compiled_us == 5.0 and summary.module_share == pytest.approx(1.0)
    assert [len(k.origins) for k in out[0].kernels] == [1, 0]
