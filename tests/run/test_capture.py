"""Which kernel modules the child benchmarks: the hot kernels the wrappers name, with their graph."""

from __future__ import annotations

from pathlib import Path

from reportgen.bundle.model import ModuleFile
from reportgen.run.capture import _hot_kernel_files


def test_hot_kernels_are_found_in_every_graph_that_defines_them(h100_modules: tuple[Path, list[ModuleFile]]) -> None:
    root, files = h100_modules
    found = _hot_kernel_files(files, root, {"triton_poi_fused__to_copy_201", "not_a_kernel"})
    assert [(graph, name) for graph, name, _ in found] == [
        (0, "triton_poi_fused__to_copy_201"),
        (1, "triton_poi_fused__to_copy_201"),
    ]
    assert all(path.is_file() and path.parent.name == "kernels" for _, _, path in found)
    assert found[0][2] != found[1][2]
