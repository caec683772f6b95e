"""Joining the H100 fixture's trace with its compiled modules: wrappers per graph, fused ATen ops per kernel."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

from reportgen.analyze import attribute_graphs, load_trace
from reportgen.analyze.join import kernel_lookup_name, with_sources
from reportgen.analyze.modules import parse_wrapper
from reportgen.analyze.sources import module_index
from reportgen.bundle.model import ModuleFile

FIXTURE = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "h100-mixnet_l-train-amp"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[ModuleFile]]:
    assert FIXTURE.is_dir(), f"missing fixture {FIXTURE}"
    root = tmp_path_factory.mktemp("fixture")
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        tar.extractall(root / "raw", filter="data")
    files = sorted((root / "raw").rglob("*.py"))
    wrappers = [p for p in files if "compiled_module_main" in p.read_text()]
    wrappers.sort(key=lambda p: parse_wrapper(p.read_text()).kind != "forward")  # compile order: forward first
    modules: list[ModuleFile] = []
    for kind, group in (("wrapper", wrappers), ("kernel", [p for p in files if p not in wrappers])):
        (root / "modules" / f"{kind}s").mkdir(parents=True)
        for order, src in enumerate(group):
            dest = root / "modules" / f"{kind}s" / src.name
            shutil.copyfile(src, dest)
            rel = dest.relative_to(root).as_posix()
            modules.append(ModuleFile(path=rel, kind=kind, order=order, size_bytes=dest.stat().st_size))
    return root, modules


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
