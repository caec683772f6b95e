"""Timing and profiling of a workload (child side: imports torch).

Warm-ups first; then eager and compiled are timed in alternating blocks of steps run back to back, as a
training loop runs them (the CPU queues the next step while the GPU works), with one synchronisation at
the end of each block; a sample is a block's time per step. Single synchronised steps would add the
GPU's tail and the CPU's launch time of every step (15-25 % on mixnet_l, H100). The profiler never runs
during timing.

Before each pair of blocks, outside them, a fixed pure-Python workload is timed (`host_probe`): the host
CPU's speed at that moment. Launch-bound steps are CPU time, so a host whose CPU speed wanders (a shared
H100 host: the same 1.5 ms loop varied with a CV of 20-33 %, with no steal reported) moves the step times with
it; the probe lets the analysis say so instead of leaving it to the reader.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch

from reportgen.bundle import StepTimes
from reportgen.formats import MEASUREMENT_SPAN
from reportgen.run.host import host_probe
from reportgen.run.window import STEPS_WINDOW, timed_window
from reportgen.run.workload import Workload

__all__ = [
    "graph_pool_bytes",
    "peak_memory",
    "profile_steps",
    "record_shapes",
    "step_times",
    "time_block",
    "time_call",
    "time_interleaved",
]


def time_call(workload: Workload, fn: Callable[..., object]) -> float:
    """Wall seconds of one synchronised step of `fn`."""
    workload.synchronize()
    start = time.perf_counter()
    workload.step(fn)
    workload.synchronize()
    return time.perf_counter() - start


def time_block(workload: Workload, fn: Callable[..., object], steps: int) -> float:
    """Wall seconds per step of `steps` steps of `fn` run back to back, synchronised once at the end."""
    workload.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        workload.step(fn)
    workload.synchronize()
    return (time.perf_counter() - start) / steps


def step_times(samples_s: list[float], block_steps: int = 1) -> StepTimes:
    """Summarise step durations (seconds in, milliseconds out)."""
    ms = [s * 1e3 for s in samples_s]
    if len(ms) >= 2:
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
    else:
        q1 = q3 = ms[0]
    return StepTimes(
        samples_ms=ms,
        block_steps=block_steps,
        median_ms=statistics.median(ms),
        q1_ms=q1,
        q3_ms=q3,
        min_ms=min(ms),
        max_ms=max(ms),
    )


def time_interleaved(
    workload: Workload,
    eager: Callable[..., object],
    compiled: Callable[..., object],
    samples: int,
    block_steps: int = 1,
) -> tuple[StepTimes, StepTimes, list[float]]:
    """`samples` blocks of `block_steps` steps each of eager and compiled, alternating, so that drift
    (clocks, thermals, other tenants) hits both alike and sample i of each is a pair.

    :returns: eager, compiled, and the host probe's milliseconds before each pair (outside the timed blocks)
    """
    eager_s: list[float] = []
    compiled_s: list[float] = []
    probe_ms: list[float] = []
    for _ in range(samples):
        with timed_window(STEPS_WINDOW):  # one pair and its probe: the host is ours (under a coordinator) meanwhile
            probe_ms.append(host_probe() * 1e3)
            eager_s.append(time_block(workload, eager, block_steps))
            compiled_s.append(time_block(workload, compiled, block_steps))
    return step_times(eager_s, block_steps), step_times(compiled_s, block_steps), probe_ms


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


def profile_steps(workload: Workload, fn: Callable[..., object], steps: int, trace_path: Path) -> Path:
    """Record `steps` steps of `fn` with torch.profiler and export a gzipped chrome trace.

    A schedule (one warm-up step, then `steps` active ones) makes the profiler emit
    `ProfilerStep#N` spans, which the analysis uses as step boundaries; without a schedule
    torch records no step markers.
    """
    activities = _activities(workload)
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1)

    def export(prof: torch.profiler.profile) -> None:
        prof.export_chrome_trace(str(trace_path))

    workload.synchronize()
    with (
        timed_window("profile"),
        torch.profiler.profile(activities=activities, schedule=schedule, on_trace_ready=export) as prof,
    ):
        for index in range(steps + 1):
            workload.step(fn)  # back to back, as timed: the GPU may still run a step when the next starts
            if index == steps:
                with torch.profiler.record_function(MEASUREMENT_SPAN):  # not the model's: counts leave it out
                    workload.synchronize()  # the last step's kernels end inside the recorded window
            prof.step()
    return trace_path


def record_shapes(workload: Workload, fn: Callable[..., object], trace_path: Path) -> Path:
    """Record one step of `fn` with its ops' input shapes, dtypes and scalar arguments (`record_shapes=True`) and
    export a gzipped chrome trace: what the FLOP counts read (`reportgen.analyze.flops`). Untimed, after the
    measurements: recording shapes costs CPU time per op, which the profiled steps must not pay."""
    workload.synchronize()
    with torch.profiler.profile(activities=_activities(workload), record_shapes=True) as prof:
        workload.step(fn)
        workload.synchronize()
    prof.export_chrome_trace(str(trace_path))
    return trace_path


def _activities(workload: Workload) -> list[torch.profiler.ProfilerActivity]:
    """What the profiler records: the CPU, and the GPU on a CUDA run."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if workload.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    return activities
