"""Which kernel modules the child benchmarks: the hot kernels the wrappers name, with their graph."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

from reportgen.analyze.modules import parse_wrapper
from reportgen.bundle.model import ModuleFile
from reportgen.run.capture import _hot_kernel_files

FIXTURE = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "h100-mixnet_l-train-amp"


def _bundle(root: Path) -> list[ModuleFile]:
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        tar.extractall(root / "raw", filter="data")
    files = sorted((root / "raw").rglob("*.py"))
    wrappers = sorted((p for p in files if "compiled_module_main" in p.read_text()),
                      key=lambda p: parse_wrapper(p.read_text()).kind != "forward")  # fmt: skip
    modules = []
    for kind, group in (("wrapper", wrappers), ("kernel", [p for p in files if p not in wrappers])):
        (root / "modules" / f"{kind}s").mkdir(parents=True)
        for order, src in enumerate(group):
            dest = root / "modules" / f"{kind}s" / src.name
            shutil.copyfile(src, dest)
            rel = dest.relative_to(root).as_posix()
            modules.append(ModuleFile(path=rel, kind=kind, order=order, size_bytes=dest.stat().st_size))
    return modules


def test_hot_kernels_are_found_in_every_graph_that_defines_them(tmp_path: Path) -> None:
    assert FIXTURE.is_dir(), f"missing fixture {FIXTURE}"
    files = _bundle(tmp_path)
    found = _hot_kernel_files(files, tmp_path, {"triton_poi_fused__to_copy_201", "not_a_kernel"})
    assert [(graph, name) for graph, name, _ in found] == [
        (0, "triton_poi_fused__to_copy_201"),
        (1, "triton_poi_fused__to_copy_201"),
    ]
    assert all(path.is_file() and path.parent.name == "kernels" for _, _, path in found)
    assert found[0][2] != found[1][2]
