"""Tests of benchmarks/step_calls.py: Python function entries per step, counted in reportgen's real run child and in a
bare process on the same cache."""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import step_calls

RECIPES = Path(__file__).resolve().parents[1] / "data" / "recipes"


def _extra() -> int:
    return 1


class _Work:
    """A workload whose step calls `fn` once; `fn` may call `_extra` (a planted extra function per step)."""

    def step(self, fn) -> None:  # type: ignore[no-untyped-def]
        fn()

    def synchronize(self) -> None:
        pass


def _plain() -> None:
    pass


def _planted() -> None:
    _extra()
    _extra()
    math.sqrt(4.0)  # a planted call into C


def test_a_planted_call_shows_as_a_difference_per_step() -> None:
    work = _Work()
    sides = {
        "reportgen": step_calls.measure_side(work, _plain, _planted, steps=4),
        "bare": step_calls.measure_side(work, _plain, _plain, steps=4),
    }
    assert step_calls.differences(sides, "eager") == []
    rows = step_calls.differences(sides, "compiled")
    by_name = {key.rsplit("::", 1)[1]: (ours, bare) for key, ours, bare in rows}
    assert by_name["_extra"] == (2.0, 0.0)  # _planted calls it twice a step, _plain never
    assert by_name["_planted"] == (1.0, 0.0) and by_name["_plain"] == (0.0, 1.0)
    assert (step_calls.C_CALL + "math.sqrt", 1.0, 0.0) in rows
    assert sides["reportgen"]["compiled"]["c_calls_per_step"] >= 1.0  # (`_planted` may call more C: not counted here)
    assert sides["bare"]["eager"]["calls_per_step"] == sides["reportgen"]["eager"]["calls_per_step"]
    assert "compiled: differs:" in step_calls.report(sides)
    sides["reportgen"]["threads"] = ["evil\n\x1b[2Jthread"]  # names from a process reach the terminal escaped
    sides["reportgen"]["compiled"]["usage"]["thread_cpu_ms"] = {"evil\x1b[2J": 1.0}
    text = step_calls.report(sides)
    assert "\x1b" not in text and "evil\n" not in text


def test_compiled_modules_fold_to_one_name_across_caches() -> None:
    calls = {
        "/tmp/a/inductor/77/c77tdjgrqvzhzjg7kb5myjjuksbzpccihntspagza55vr6yy4bii.py::call": 3,
        "/root/.cache/torchinductor_root/p4/cp4jfiidbrtttmgsyj7xhbedyety5uuleujt2i3swi7jol5fmnay.py::call": 2,
        "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py::_call_impl": 5,
    }
    assert step_calls.folded(step_calls.collections.Counter(calls)) == {
        "<compiled module>::call": 5,  # the two caches' wrappers: one name
        "torch/nn/modules/module.py::_call_impl": 5,
    }


def test_reportgen_child_and_bare_process_count_the_same_steps(tmp_path: Path) -> None:
    """The real run: the hook reaches the run's child (only it), both sides count the tiny training step."""
    sides = step_calls.run_both(RECIPES / "tiny_train.yaml", None, 3, tmp_path)
    for figure in ("eager", "compiled"):
        assert sides["reportgen"][figure]["calls_per_step"] > 10  # a forward and backward of a module: many calls
        assert step_calls.differences(sides, figure) == []
    assert "reportgen-parent-watch" in sides["reportgen"]["threads"]  # the run child's own thread: it counted
    assert "reportgen-parent-watch" not in sides["bare"]["threads"]


def test_a_thread_busy_beside_the_steps_shows_under_its_name() -> None:
    import threading
    import time

    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    busy = threading.Thread(target=spin, name="busy-beside")
    busy.start()
    try:
        usage = step_calls.usage_per_step(lambda: time.sleep(0.005), 40)  # 0.2 s of steps that use no CPU
    finally:
        stop.set()
        busy.join()
    per_thread = usage["thread_cpu_ms"]
    assert isinstance(per_thread, dict)
    assert per_thread.get("busy-beside", 0.0) > 1.0  # the spinner's CPU per step (it had the GIL most of 5 ms)
    assert per_thread.get("MainThread", 0.0) < per_thread["busy-beside"]


def _kernels(config: str) -> dict:
    """A side's kernels as `tuned_kernels` keeps them (`KernelLaunch` dumps by `kernel@source`)."""
    return {
        "triton_red_fused_0@cabc123.py": {
            "kernel": "triton_red_fused_0",
            "source": "cabc123.py",
            "config": config,
            "tuning": "tuned",
            "configs": 4,
            "tuning_ms": 2.5,
        },
        "triton_poi_fused_1@cd.py": {
            "kernel": "triton_poi_fused_1",
            "source": "cd.py",
            "config": "XBLOCK: 1024",
            "tuning": "cached",
            "configs": 2,
            "tuning_ms": 0.0,
        },
    }


def test_kernels_tuned_in_each_process_show_their_launched_configs() -> None:
    sides = {"reportgen": {"kernels": _kernels("XBLOCK: 64, R0_BLOCK: 8")}, "bare": {"kernels": _kernels("XBLOCK: 8")}}
    assert step_calls.kernel_choices(sides) == (2, ["triton_red_fused_0@cabc123.py"])
    full = {name: step_calls.measure_side(_Work(), _plain, _plain, steps=2) | sides[name] for name in sides}
    text = step_calls.report(full)
    assert "reportgen's Triton kernels: 2 (cached 1, tuned 1), tuned in this process for 2.5 ms" in text
    assert "configs launched: the same in 1 of the 2 kernels both sides ran" in text
    assert "triton_red_fused_0@cabc123.py: reportgen XBLOCK: 64, R0_BLOCK: 8, bare XBLOCK: 8" in text
    sides["bare"]["kernels"]["triton_red_fused_0@cabc123.py"]["config"] = "XBLOCK: 64, R0_BLOCK: 8"
    assert step_calls.kernel_choices(sides) == (2, [])
    assert step_calls.tuned_kernels() == {}  # this CPU process has no Triton kernel
