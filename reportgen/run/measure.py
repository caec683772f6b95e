"""Timing and profiling of a workload (child side: imports torch).

Conventions follow PyTorch's benchmarks/dynamo: warm-ups first, eager and compiled timed
interleaved, each step synchronised, medians reported; the profiler never runs during timing.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch

from reportgen.bundle import StepTimes
from reportgen.run.workload import Workload

__all__ = ["graph_pool_bytes", "peak_memory", "profile_steps", "step_times", "time_call", "time_interleaved"]


def time_call(workload: Workload, fn: Callable[..., object]) -> float:
    """Wall seconds of one synchronised step of `fn`."""
    workload.synchronize()
    start = time.perf_counter()
    workload.step(fn)
    workload.synchronize()
    return time.perf_counter() - start


def step_times(samples_s: list[float]) -> StepTimes:
    """Summarise step durations (seconds in, milliseconds out)."""
    ms = [s * 1e3 for s in samples_s]
    if len(ms) >= 2:
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
    else:
        q1 = q3 = ms[0]
    return StepTimes(samples_ms=ms, median_ms=statistics.median(ms), q1_ms=q1, q3_ms=q3, min_ms=min(ms), max_ms=max(ms))


def time_interleaved(
    workload: Workload, eager: Callable[..., object], compiled: Callable[..., object], steps: int
) -> tuple[StepTimes, StepTimes]:
    """Alternate eager and compiled steps so drift (clocks, thermals) hits both alike."""
    eager_s: list[float] = []
    compiled_s: list[float] = []
    for _ in range(steps):
        eager_s.append(time_call(workload, eager))
        compiled_s.append(time_call(workload, compiled))
    return step_times(eager_s), step_times(compiled_s)


def graph_pool_bytes() -> int:
    """Bytes the caching allocator holds in private pools (CUDA-graph trees), from `memory_snapshot()`."""
    total = 0
    for segment in torch.cuda.memory_snapshot():
        pool = segment.get("segment_pool_id")
        if pool is not None and tuple(pool) != (0, 0):
            total += int(segment.get("total_size", 0))
    return total


def peak_memory(workload: Workload, fn: Callable[..., object], cudagraphs: bool = False) -> int | None:
    """Peak bytes allocated during one step (CUDA only).

    A CUDA-graph replay allocates nothing: its activations live in the graph pool recorded at
    warm-up (on an H100, mixnet_l's replayed step peaked at 0.15 GiB without it). With `cudagraphs`
    the pool's bytes are added, so that the figure compares with eager's.
    """
    if workload.device != "cuda":
        return None
    workload.synchronize()
    torch.cuda.reset_peak_memory_stats()
    workload.step(fn)
    workload.synchronize()
    peak = int(torch.cuda.max_memory_allocated())
    if cudagraphs:
        with contextlib.suppress(RuntimeError, KeyError, TypeError):  # another snapshot format: plain peak
            peak += graph_pool_bytes()
    return peak


def profile_steps(workload: Workload, fn: Callable[..., object], steps: int, trace_path: Path) -> None:
    """Record `steps` steps of `fn` with torch.profiler and export a gzipped chrome trace.

    A schedule (one warm-up step, then `steps` active ones) makes the profiler emit
    `ProfilerStep#N` spans, which the analysis uses as step boundaries; without a schedule
    torch records no step markers.
    """
    activities = [torch.profiler.ProfilerActivity.CPU]
    if workload.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1)

    def export(prof: torch.profiler.profile) -> None:
        prof.export_chrome_trace(str(trace_path))

    workload.synchronize()
    with torch.profiler.profile(activities=activities, schedule=schedule, on_trace_ready=export) as prof:
        for _ in range(steps + 1):
            workload.step(fn)
            workload.synchronize()
            prof.step()
