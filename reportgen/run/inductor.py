"""Inductor internals the child relies on, isolated here with fallbacks across torch versions.

Everything private (`torch._inductor.*`) that reportgen touches goes through this module, so a
change in a new torch release is fixed in one place; each accessor degrades to "nothing found"
instead of failing the run.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType

from reportgen.bundle import TUNING, KernelLaunch

__all__ = [
    "benchmarks_in",
    "each_timing",
    "import_kernel_module",
    "is_wrapper",
    "kernel_benchmark",
    "kernel_launches",
    "kernel_names",
    "kernel_num_gb",
    "loaded_modules",
    "module_files",
    "wrapper_benchmark",
]


def loaded_modules() -> list[ModuleType]:
    """Modules Inductor has loaded in this process (wrappers and kernels), in load order.

    torch ≥ 2.6 keeps them in `PyCodeCache.modules` (a list); 2.5 in `PyCodeCache.cache` (a dict).
    """
    try:
        from torch._inductor.codecache import PyCodeCache
    except ImportError:
        return []
    modules = getattr(PyCodeCache, "modules", None)
    if isinstance(modules, list):
        return [m for m in modules if isinstance(m, ModuleType)]
    cache = getattr(PyCodeCache, "cache", None)
    if isinstance(cache, dict):
        return [m for m in cache.values() if isinstance(m, ModuleType)]
    return []


def module_files(modules: list[ModuleType]) -> list[Path]:
    """Existing source files of `modules`, de-duplicated, in order."""
    seen: dict[Path, None] = {}
    for module in modules:
        file = getattr(module, "__file__", None)
        if file and Path(file).is_file():
            seen.setdefault(Path(file), None)
    return list(seen)


def is_wrapper(module: ModuleType) -> bool:
    """A compiled graph's wrapper ("compiled module"): it has `call` and a benchmark harness."""
    return callable(getattr(module, "call", None)) and callable(getattr(module, "benchmark_compiled_module", None))


def wrapper_benchmark(module: ModuleType) -> Callable[[int, int], float]:
    """`f(times, repeat) -> seconds per call` from a wrapper's own harness.

    torch ≥ 2.11 generates `get_args()` + `benchmark_compiled_module(args, times, repeat)`; earlier
    versions `benchmark_compiled_module(times, repeat)`, building the args inside.
    """
    harness = module.benchmark_compiled_module
    params = inspect.signature(harness).parameters
    if "args" in params and callable(getattr(module, "get_args", None)):
        args = module.get_args()
        return lambda times, repeat: float(harness(args, times=times, repeat=repeat))
    return lambda times, repeat: float(harness(times=times, repeat=repeat))


@contextlib.contextmanager
def each_timing(around: Callable[[int], AbstractContextManager[object]]) -> Iterator[list[float] | None]:
    """Inside: each `times`-call timing that a wrapper's harness makes (`print_performance` calls
    `torch._inductor.utils.timed` `repeat` times) runs within `around(k)`, k = 0, 1, …, and its seconds are
    appended to the yielded list. None when that function is not there: nothing is wrapped. (The fidelity
    benchmark times a fresh `-p` through it, timing by timing.)"""
    try:
        utils = importlib.import_module("torch._inductor.utils")
    except ImportError:
        utils = None
    original = getattr(utils, "timed", None)
    if utils is None or not callable(original):
        yield None
        return
    seconds: list[float] = []

    def timed(*args: object, **kwargs: object) -> float:
        with around(len(seconds)):
            taken = float(original(*args, **kwargs))
        seconds.append(taken)
        return taken

    setattr(utils, "timed", timed)  # noqa: B010 (a private function, not typed)
    try:
        yield seconds
    finally:
        setattr(utils, "timed", original)  # noqa: B010


@contextlib.contextmanager
def benchmarks_in(window: Callable[[], AbstractContextManager[object]]) -> Iterator[bool]:
    """Inside: each of Inductor's own GPU benchmarks (a Triton kernel's configs tuned on its first call, pad_mm's
    padded-or-not, max-autotune's choices) runs within `window()`, so that what it decides is measured as a timed
    window is; one at a time, a benchmark nested in another within the outer one's. torch ≥ 2.13: its hook for a
    harness's lock (`set_gpu_benchmark_lock_context`); earlier: the benchmarker's `benchmark_gpu`, wrapped.
    Yields whether either was there."""
    try:
        bench = importlib.import_module("torch._inductor.runtime.benchmarking")
    except ImportError:
        yield False
        return
    depth, lock = [0], threading.RLock()  # one benchmark's window at a time; re-entered by the same thread

    @contextlib.contextmanager
    def outermost() -> Iterator[None]:
        with lock:
            depth[0] += 1
            try:
                with window() if depth[0] == 1 else contextlib.nullcontext():
                    yield
            finally:
                depth[0] -= 1

    setter = getattr(bench, "set_gpu_benchmark_lock_context", None)
    if callable(setter):
        previous = setter(outermost)
        try:
            yield True
        finally:
            setter(previous)
        return
    benchmarker = getattr(bench, "benchmarker", None)
    original = getattr(benchmarker, "benchmark_gpu", None)
    if benchmarker is None or not callable(original) or "benchmark_gpu" in getattr(benchmarker, "__dict__", {}):
        yield False
        return

    def benchmark_gpu(*args: object, **kwargs: object) -> object:
        with outermost():
            return original(*args, **kwargs)

    benchmarker.benchmark_gpu = benchmark_gpu  # the instance's, over its class's method
    try:
        yield True
    finally:
        del benchmarker.benchmark_gpu


def kernel_names(module: ModuleType) -> list[str]:
    """Names of the Triton kernels a kernel module defines (module-level `triton_*` objects)."""
    return [name for name, value in vars(module).items() if name.startswith("triton_") and hasattr(value, "run")]


def kernel_num_gb(module: ModuleType, name: str) -> float | None:
    """Inductor's estimate of GB a kernel moves per call (`inductor_meta["kernel_num_gb"]`)."""
    meta = getattr(getattr(module, name, None), "inductor_meta", None)
    value = meta.get("kernel_num_gb") if isinstance(meta, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def import_kernel_module(path: Path) -> ModuleType:
    """Import a Triton kernel module from its file (a copy of Inductor's `k.py`), under a private name."""
    name = f"reportgen_kernel_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_benchmark(module: ModuleType) -> Callable[[], float] | None:
    """`f() -> ms` timing a kernel module's `call(get_args())` the way its `__main__` harness does."""
    get_args, call = getattr(module, "get_args", None), getattr(module, "call", None)
    if not (callable(get_args) and callable(call)):
        return None
    args = get_args()

    def run() -> None:
        call(args)

    try:
        from torch._inductor.runtime.benchmarking import benchmarker
    except ImportError:
        benchmarker = None  # type: ignore[assignment]
    if benchmarker is not None and hasattr(benchmarker, "benchmark_gpu"):
        return lambda: float(benchmarker.benchmark_gpu(run, rep=40))
    if benchmarker is not None:
        return lambda: float(benchmarker.benchmark(run, device="cuda", rep=40))
    from triton.testing import do_bench

    return lambda: float(do_bench(run, rep=40))


def kernel_launches(modules: list[ModuleType]) -> list[KernelLaunch]:
    """Each Triton kernel (Inductor's `CachingAutotuner`) in `modules` with the config it launches with and how it
    was chosen (its `autotune_cache_info`), by kernel name. Read after the first calls, when each has chosen. A
    kernel seen twice (its own module and the wrapper's global) counts once, as the copy that ran: one launcher."""
    found: dict[tuple[str, str], tuple[int, KernelLaunch]] = {}
    for module in modules:
        for name, kernel in list(vars(module).items()):
            try:
                launch = _launch(name, kernel)
            except Exception:  # an object that fails being looked at (a lazy namespace, say) is not a kernel
                continue
            if launch is None:
                continue
            launchers, key, record = launch
            if key not in found or launchers < found[key][0]:  # the copy that ran: the fewest launchers
                found[key] = (launchers, record)
    return [launch for _, launch in sorted(found.values(), key=lambda found: found[1].kernel)]


def _launch(name: str, kernel: object) -> tuple[int, tuple[str, str], KernelLaunch] | None:
    """A launched Triton kernel's launchers, key and record (None: not one, or not launched yet;
    `autotune_cache_info` is not on every torch)."""
    launchers, info = getattr(kernel, "launchers", None), getattr(kernel, "autotune_cache_info", None)
    if not isinstance(launchers, list) or not launchers or not hasattr(kernel, "configs"):
        return None
    source = Path(str(getattr(kernel, "filename", None) or "?")).name
    state = info.get("autotune_cache_state") if isinstance(info, dict) else None
    tuning_ns = getattr(kernel, "autotune_time_taken_ns", 0)
    record = KernelLaunch(
        kernel=name,
        source=source,
        config="; ".join(sorted(str(getattr(launcher, "config", "?")) for launcher in launchers)),
        tuning=TUNING.get(str(state), "unknown"),
        configs=len(getattr(kernel, "configs", None) or []),
        tuning_ms=max(tuning_ns, 0) / 1e6 if isinstance(tuning_ns, int | float) else 0.0,
    )
    return len(launchers), (name, source), record
