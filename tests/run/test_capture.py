"""Which kernel modules the child benchmarks: the hot kernels the wrappers name, with their graph."""

from __future__ import annotations

from pathlib import Path

from reportgen.bundle import ModuleFile
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


def test_steady_gc_freezes_the_heap_and_counts_the_pauses_left() -> None:
    import gc

    from reportgen.run.capture import steady_gc

    before = gc.get_freeze_count()
    with steady_gc() as pauses:
        assert gc.get_freeze_count() > before  # what was alive is out of the collector's reach
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        gc.collect()
    assert pauses.count >= 1 and pauses.seconds > 0
    assert gc.get_freeze_count() == before
    assert pauses not in gc.callbacks
