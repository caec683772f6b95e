"""Inductor-specific captures made in the run's own process, after timing (child side: imports torch).

Everything here reuses the modules Inductor already compiled and loaded for the run: no second
compilation, no second loading of kernel modules (what `python wrapper.py -p` and `python k.py`
would cost when run by hand).
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from types import ModuleType

import torch

from reportgen.analyze.kernels import kernel_table
from reportgen.analyze.modules import parse_wrapper
from reportgen.analyze.trace import load_trace
from reportgen.bundle.model import GraphBenchmark, KernelBenchmark, ModuleFile
from reportgen.run import inductor

__all__ = ["GRAPHS_DIR", "benchmark_kernels", "copy_bandwidth_gbps", "profile_graphs", "time_graphs"]

GRAPHS_DIR = "graphs"


def _quiet() -> contextlib.AbstractContextManager[object]:
    """Inductor's harnesses print their timings; keep them out of the run log."""
    return contextlib.redirect_stdout(io.StringIO())


def _bundle_path(module: ModuleType, files: list[ModuleFile]) -> str | None:
    name = Path(getattr(module, "__file__", "") or "").name
    return next((f.path for f in files if Path(f.path).name == name), None)


def _wrappers(modules: list[ModuleType], files: list[ModuleFile]) -> list[tuple[int, ModuleType, str]]:
    found = []
    for index, module in enumerate(m for m in modules if inductor.is_wrapper(m)):
        path = _bundle_path(module, files)
        if path is not None:
            found.append((index, module, path))
    return found


def time_graphs(
    modules: list[ModuleType], files: list[ModuleFile], out_dir: Path, times: int = 10, repeat: int = 10
) -> list[GraphBenchmark]:
    """Time each compiled graph alone, unprofiled: median per call over `times` x `repeat` (as `-p` does).

    Runs before any profiler session and with no logging hooks installed, so that nothing adds CPU
    time to the calls. Launch-bound graphs are sensitive to the process's state: on an H200 (torch 2.11)
    mixnet_l's forward graph took 10.0 ms per call in a fresh `python wrapper.py -p` process and 15.6 to
    23.7 ms in the run's process; its device time per call agreed within 2 %.
    """
    results = []
    for index, module, path in _wrappers(modules, files):
        with _quiet():
            wall_s = inductor.wrapper_benchmark(module)(times, repeat)
        kind = parse_wrapper((out_dir / path).read_text(encoding="utf-8")).kind
        results.append(
            GraphBenchmark(
                graph=index,
                wrapper=path,
                kind=kind,
                wall_ms_per_call=wall_s * 1e3,
                times=times,
                repeat=repeat,
                profiled_calls=0,
            )
        )
    return results


def profile_graphs(
    modules: list[ModuleType],
    files: list[ModuleFile],
    timed: list[GraphBenchmark],
    out_dir: Path,
    device: str,
    calls: int = 10,
) -> list[GraphBenchmark]:
    """Record `calls` calls of each timed graph with torch.profiler into `graphs/graph-<n>.json.gz`."""
    (out_dir / GRAPHS_DIR).mkdir(exist_ok=True)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    by_index = {index: module for index, module, _ in _wrappers(modules, files)}
    results = []
    for benchmark in timed:
        bench = inductor.wrapper_benchmark(by_index[benchmark.graph])
        with _quiet(), torch.profiler.profile(activities=activities) as prof:
            bench(calls, 1)
        trace = f"{GRAPHS_DIR}/graph-{benchmark.graph}.json.gz"
        prof.export_chrome_trace(str(out_dir / trace))
        with _quiet():
            after_ms = bench(benchmark.times, benchmark.repeat) * 1e3
        print(
            f"graph {benchmark.graph} ({benchmark.kind}): {benchmark.wall_ms_per_call:.3f} ms per call unprofiled, "
            f"{after_ms:.3f} ms when timed again after profiling",
            flush=True,
        )
        results.append(benchmark.model_copy(update={"profiled_calls": calls, "trace_file": trace}))
    return results


def _kernel_graphs(files: list[ModuleFile], out_dir: Path) -> dict[str, int]:
    """Kernel module file name → index of the wrapper (graph) that names it."""
    owner: dict[str, int] = {}
    for wrapper in (f for f in files if f.kind == "wrapper"):
        for kernel in parse_wrapper((out_dir / wrapper.path).read_text(encoding="utf-8")).kernels:
            if kernel.kernel_path:
                owner.setdefault(kernel.kernel_path, wrapper.order)
    return owner


def benchmark_kernels(
    modules: list[ModuleType],
    files: list[ModuleFile],
    out_dir: Path,
    trace_file: Path,
    steps: int,
    min_share: float = 0.01,
    top: int = 20,
    limit: int = 60,
) -> list[KernelBenchmark]:
    """Time the hot Triton kernels with their own harness: the `top` longest, and all above `min_share`."""
    table = kernel_table(load_trace(trace_file), "cuda", steps)
    triton = [k for k in table.kernels if k.name.startswith("triton_")]
    hot = {k.name for rank, k in enumerate(triton) if rank < top or k.share >= min_share}
    owner = _kernel_graphs(files, out_dir)
    results: list[KernelBenchmark] = []
    for module in modules:
        names = [n for n in inductor.kernel_names(module) if n in hot]
        path = _bundle_path(module, files)
        if not names or path is None or len(results) >= limit:
            continue
        bench = inductor.kernel_benchmark(module)
        graph = owner.get(Path(path).name)
        if bench is None or graph is None:
            continue
        with _quiet():
            ms = bench()
        results.append(
            KernelBenchmark(
                graph=graph, name=names[0], module=path, ms=ms, num_gb=inductor.kernel_num_gb(module, names[0])
            )
        )
    return results


def copy_bandwidth_gbps(size_bytes: int = 1 << 30, repeat: int = 10) -> float:
    """Device-to-device copy bandwidth, counting bytes read and written (as Inductor's GB/s does)."""
    src = torch.empty(size_bytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        dst.copy_(src)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    del src, dst
    torch.cuda.empty_cache()
    return 2 * size_bytes * repeat / elapsed / 1e9
