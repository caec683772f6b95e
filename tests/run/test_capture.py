"""Captures in the child and the graph-timing process: the hot kernels the wrappers name, with their graph; the heap kept
steady while timing; graph by graph timing."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from reportgen.bundle import ModuleFile
from reportgen.run import window
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


_FAKE_WRAPPER = """\
import os


def _note(what):
    with open(os.environ["ORDER_LOG"], "a", encoding="utf-8") as log:
        log.write(what + "\\n")


_note("load {name}")


def call(args):
    pass


def benchmark_compiled_module(times=10, repeat=10):
    _note(f"time {name} {{times}}x{{repeat}}")
    return 0.001 * {number}
"""


def test_each_graph_is_timed_before_the_next_is_loaded_or_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a fresh `-p` process, which has loaded and run its one graph only: the forward's first calls and timings
    come before the backward is imported or called (timed after the backward's first calls, mixnet_l's forward
    took 3-10 % longer per call on an H200)."""
    from reportgen.run import graph_process
    from reportgen.run.capture import time_graphs

    for name in (window.LOCK_VARIABLE, window.SOCKET_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    log = tmp_path / "order.log"
    monkeypatch.setenv("ORDER_LOG", str(log))
    files = []
    for number, name in enumerate(("fwd", "bwd")):
        path = tmp_path / f"wrapper_{name}.py"
        path.write_text(_FAKE_WRAPPER.format(name=name, number=number + 1), encoding="utf-8")
        files.append(ModuleFile(path=path.name, kind="wrapper", order=number, size_bytes=path.stat().st_size))
    loaded: list[ModuleType] = []
    timed = time_graphs(graph_process._import_wrappers(files[::-1], tmp_path, loaded), files, tmp_path, rounds=2)
    expected = []
    for name in ("fwd", "bwd"):
        expected += [f"load {name}", f"time {name} 10x10"] + [f"time {name} 10x1"] * 20  # 2 rounds of 10 timings
    assert log.read_text(encoding="utf-8").splitlines() == expected
    assert [(b.graph, b.wrapper, len(b.rounds_ms)) for b in timed] == [(0, files[0].path, 2), (1, files[1].path, 2)]
    assert [b.wall_ms_per_call for b in timed] == [pytest.approx(1.0), pytest.approx(2.0)]  # the harness: s per call
    assert [m.__file__ for m in loaded] == [str(tmp_path / f.path) for f in files]
