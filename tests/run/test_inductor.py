"""The private Inductor hooks reportgen relies on, and their fallbacks (`reportgen.run.inductor`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch
import torch._inductor.utils as inductor_utils

from reportgen.run import inductor

__all__: list[str] = []


def test_each_timing_of_print_performance_runs_inside_its_own_context_and_is_kept() -> None:
    entered: list[tuple[str, int]] = []

    @contextlib.contextmanager
    def around(k: int) -> Iterator[None]:
        entered.append(("in", k))
        yield
        entered.append(("out", k))

    calls: list[int] = []
    original = inductor_utils.timed
    with inductor.each_timing(around) as each:
        took = inductor_utils.print_performance(lambda: calls.append(1) or torch.zeros(1), (), 3, 4, device="cpu")
    assert inductor_utils.timed is original  # put back
    assert each is not None and len(each) == 4 and len(calls) == 12  # 4 timings of 3 calls each
    assert entered == [(side, k) for k in range(4) for side in ("in", "out")]
    # print_performance returns torch.median of the timings / times: the lower middle of an even count
    assert took == pytest.approx(sorted(each)[1] / 3, rel=1e-6)


def test_without_the_private_timed_nothing_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(inductor_utils, "timed")
    with inductor.each_timing(lambda k: contextlib.nullcontext()) as each:
        assert each is None
    assert not hasattr(inductor_utils, "timed")


def _window_counter() -> tuple[list[str], object]:
    entered: list[str] = []

    @contextlib.contextmanager
    def window() -> Iterator[None]:
        entered.append("in")
        yield
        entered.append("out")

    return entered, window


def test_inductors_benchmarks_go_through_torchs_lock_hook_once_however_nested() -> None:
    import torch._inductor.runtime.benchmarking as bench

    if not hasattr(bench, "set_gpu_benchmark_lock_context"):
        pytest.skip("this torch has no benchmark lock hook (the fallback is tested below)")
    entered, window = _window_counter()
    with inductor.benchmarks_in(window) as hooked:  # type: ignore[arg-type]
        assert hooked
        # what every benchmark_gpu enters (torch >= 2.13), and benchmark() delegating to benchmark_gpu()
        with bench.maybe_gpu_benchmark_lock(), bench.maybe_gpu_benchmark_lock():
            pass
        with bench.maybe_gpu_benchmark_lock():
            pass
    assert entered == ["in", "out", "in", "out"]
    with bench.maybe_gpu_benchmark_lock():
        pass
    assert len(entered) == 4  # the hook is put back


def test_without_the_hook_the_benchmarkers_benchmark_gpu_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch._inductor.runtime.benchmarking as bench

    monkeypatch.delattr(bench, "set_gpu_benchmark_lock_context", raising=False)
    calls: list[str] = []

    def fake_benchmark_gpu(self: object, fn: object, *args: object, **kwargs: object) -> float:
        calls.append("bench")
        if kwargs.get("nested"):
            bench.benchmarker.benchmark_gpu(fn)  # a helper that delegates to another benchmark
        return 1.0

    monkeypatch.setattr(type(bench.benchmarker), "benchmark_gpu", fake_benchmark_gpu)
    entered, window = _window_counter()
    with inductor.benchmarks_in(window) as hooked:  # type: ignore[arg-type]
        assert hooked
        assert bench.benchmarker.benchmark_gpu(print, nested=True) == 1.0
    assert calls == ["bench", "bench"] and entered == ["in", "out"]  # one window for the two
    assert "benchmark_gpu" not in vars(bench.benchmarker)  # the class's method again


class _Launcher:
    def __init__(self, config: str) -> None:
        self.config = config  # Triton's `Config`, whose str() lists block sizes, warps and stages


class _Raising:
    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"no op named {name}")


class _Autotuner:
    """The attributes `kernel_launches` reads of Inductor's `CachingAutotuner` (torch 2.6-2.14)."""

    def __init__(self, state: str | None, configs: list[str], launched: list[str], tuning_ns: int = 0) -> None:
        self.autotune_cache_info = None if state is None else {"autotune_cache_state": state}
        self.configs = configs
        self.launchers = [_Launcher(c) for c in launched]
        self.autotune_time_taken_ns = tuning_ns
        self.filename = "/tmp/inductor/ab/cabq4.py"


def test_kernel_launches_read_each_kernels_config_and_how_it_was_chosen() -> None:
    import types

    wrapper, own = types.ModuleType("wrapper"), types.ModuleType("kernel")
    wrapper.triton_red_fused_0 = _Autotuner("miss", ["a", "b", "c"], ["b"], tuning_ns=1_250_000)
    wrapper.triton_poi_fused_1 = _Autotuner("hit", ["a", "b"], ["a"])
    wrapper.triton_poi_fused_2 = _Autotuner("only 1 config", ["a"], ["a"])
    wrapper.triton_poi_fused_3 = _Autotuner(None, ["a"], ["a"])  # a torch that keeps no cache state
    wrapper.triton_poi_fused_5 = _Autotuner(None, ["a", "b"], ["b"])
    del wrapper.triton_poi_fused_5.autotune_cache_info  # nor the attribute: still a kernel, chosen how unknown
    wrapper.triton_poi_fused_4 = _Autotuner("miss", ["a", "b"], [])  # never launched: no choice yet
    wrapper.buf0 = _Launcher("x")  # not a kernel
    wrapper.ops = _Raising()  # a namespace that raises whatever is asked of it: not a kernel, and no failure
    own.triton_red_fused_0 = _Autotuner("miss", ["a", "b", "c"], ["a", "b", "c"])  # its own module's copy, untuned
    launches = inductor.kernel_launches([own, wrapper])
    assert [(k.kernel, k.tuning, k.config, k.configs) for k in launches] == [
        ("triton_poi_fused_1", "cached", "a", 2),
        ("triton_poi_fused_2", "single", "a", 1),
        ("triton_poi_fused_3", "unknown", "a", 1),
        ("triton_poi_fused_5", "unknown", "b", 2),
        ("triton_red_fused_0", "tuned", "b", 3),  # the copy that ran (one launcher), not its module's
    ]
    assert launches[-1].tuning_ms == 1.25 and launches[-1].source == "cabq4.py"
    assert inductor.kernel_launches([types.ModuleType("empty")]) == []
