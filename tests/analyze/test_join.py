"""Joining the H100 fixture's trace with its compiled modules: wrappers per graph, fused ATen ops per kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.analyze import attribute_graphs
from reportgen.analyze.join import kernel_lookup_name, with_sources
from reportgen.bundle import ModuleFile
from reportgen.formats.module_index import module_index
from reportgen.formats.trace import load_trace
from tests.data import H100_FIXTURE

FIXTURE = H100_FIXTURE


@pytest.fixture(scope="module")
def bundle(h100_modules: tuple[Path, list[ModuleFile]]) -> tuple[Path, list[ModuleFile]]:
    return h100_modules


def test_every_compiled_graph_gets_its_wrapper_and_triton_kernels_their_sources(
    bundle: tuple[Path, list[ModuleFile]],
) -> None:
    root, modules = bundle
    graphs = with_sources(
        attribute_graphs(load_trace(FIXTURE / "trace.json.gz"), "cuda").graphs, module_index(root, modules)
    )
    compiled = [g for g in graphs if g.graph is not None]
    assert [g.kind for g in compiled] == ["forward", "backward"]
    wrappers = {m.path: m for m in modules if m.kind == "wrapper"}
    assert [wrappers[g.wrapper].order for g in compiled if g.wrapper] == [0, 1]
    for graph in compiled:
        triton = [k for k in graph.kernels if k.name.startswith("triton_")]
        assert triton and all(k.source and k.source.startswith("modules/kernels/") for k in triton)
        assert all(k.aten_ops for k in triton)
        assert all(k.source is None for k in graph.kernels if not k.name.startswith("triton_"))
    forward = compiled[0]
    first = next(k for k in forward.kernels if k.name == "triton_poi_fused__to_copy_0")
    assert first.aten_ops == ["aten._to_copy"]


def test_profiled_cpp_kernel_names_drop_their_graph_prefix() -> None:
    assert kernel_lookup_name("graph_0_cpp_fused_add_mul_0") == "cpp_fused_add_mul_0"
    assert kernel_lookup_name("triton_poi_fused_add_0") == "triton_poi_fused_add_0"
