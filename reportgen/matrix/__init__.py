"""Matrix: many runs (recipe × variant) at once: over this host's GPUs, a shard of them per host, or on Ray.

`run_matrix` takes the planned runs and a way to run one (the pipeline's); it shards them, orders them
longest first, chooses how many share each GPU (`sharing`) and hands them to an executor. See docs/matrix.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from reportgen.errors import RunError
from reportgen.matrix.devices import ISOLATIONS, Slot, discover_gpus, make_slots, resolve_gpus
from reportgen.matrix.executor import EXECUTORS, Executor, LocalExecutor, MatrixOptions, RunFn, slot_options
from reportgen.matrix.plan import (
    MatrixRun,
    PastRun,
    Shard,
    expected_durations,
    longest_first,
    parse_shard,
    past_runs,
    shard_runs,
)
from reportgen.matrix.sharing import Sharing, choose_sharing, gpu_memory_bytes
from reportgen.progress import Progress, RunOutcome
from reportgen.run import RunOptions

__all__ = [
    "EXECUTORS",
    "ISOLATIONS",
    "Executor",
    "LocalExecutor",
    "MatrixOptions",
    "MatrixRun",
    "PastRun",
    "RunFn",
    "Shard",
    "Sharing",
    "Slot",
    "discover_gpus",
    "expected_durations",
    "longest_first",
    "make_executor",
    "make_slots",
    "parse_shard",
    "past_runs",
    "plan_matrix",
    "resolve_gpus",
    "run_matrix",
    "shard_runs",
    "sharing",
    "slot_options",
]


def make_executor(matrix: MatrixOptions) -> Executor:
    """The executor `matrix` asks for.

    :raises RunError: for an unknown executor or isolation, or GPUs the host does not have
    """
    if matrix.isolation not in ISOLATIONS:
        raise RunError(f"--isolation expects one of {', '.join(ISOLATIONS)}; got {matrix.isolation!r}")
    if matrix.executor == "ray":
        if matrix.gpus is not None or matrix.runs_per_gpu not in (None, 1):
            raise RunError(
                "--gpus and --runs-per-gpu are for the local executor: on Ray, each run gets one GPU of the cluster"
            )
        from reportgen.matrix.ray_engine import RayExecutor

        return RayExecutor(matrix.isolation)
    if matrix.executor != "local":
        raise RunError(f"--executor expects one of {', '.join(EXECUTORS)}; got {matrix.executor!r}")
    per_gpu = 1 if matrix.runs_per_gpu is None else matrix.runs_per_gpu
    if per_gpu < 1:
        raise RunError(f"--runs-per-gpu expects a count of at least 1; got {matrix.runs_per_gpu}")
    if per_gpu > 1 and "lock" not in matrix.isolation:
        raise RunError(
            f"--runs-per-gpu {per_gpu} needs timed windows (--isolation lock or cores+lock): without "
            "them one run would time while another's work shares its GPU"
        )
    devices = resolve_gpus(matrix.gpus)
    shared = [device for _ in range(per_gpu) for device in devices]  # gpu 0, gpu 1, gpu 0, gpu 1
    return LocalExecutor(make_slots(shared, matrix.isolation), matrix.isolation)


def plan_matrix(
    runs: Sequence[MatrixRun], results_dir: Path, matrix: MatrixOptions, past: Mapping[str, PastRun] | None = None
) -> list[MatrixRun]:
    """The runs of `matrix.shard` (all without one), longest expected first (`results_dir`'s history, or `past`)."""
    shard = parse_shard(matrix.shard) if matrix.shard else None
    durations = expected_durations(results_dir) if past is None else {n: p.wall_time_s for n, p in past.items()}
    return longest_first(shard_runs(runs, shard), durations)


def sharing(
    planned: Sequence[MatrixRun],
    past: Mapping[str, PastRun],
    matrix: MatrixOptions,
    memory: Callable[[Sequence[str | None]], int | None] = gpu_memory_bytes,
) -> Sharing:
    """Runs per GPU: `--runs-per-gpu` as given, else `choose_sharing`'s choice for the local executor."""
    if matrix.runs_per_gpu is not None:
        return Sharing(matrix.runs_per_gpu, "--runs-per-gpu")
    if matrix.executor != "local":
        return Sharing(1, f"--executor {matrix.executor} gives each run a GPU")
    devices = resolve_gpus(matrix.gpus)
    peaks = {run.name: past[run.name].peak_memory_bytes if run.name in past else None for run in planned}
    return choose_sharing(devices, matrix.isolation, peaks, memory(devices), len(os.sched_getaffinity(0)))


def run_matrix(
    runs: Sequence[MatrixRun],
    results_dir: Path,
    options: RunOptions,
    matrix: MatrixOptions,
    run_one: RunFn,
    progress: Progress,
) -> list[RunOutcome]:
    """Plan the runs (`plan_matrix`), choose how many share a GPU (`sharing`) and run them with the executor
    `matrix` asks for."""
    make_executor(matrix)  # a bad --gpus fails before anything runs
    past = past_runs(results_dir)
    planned = plan_matrix(runs, results_dir, matrix, past)
    chosen = sharing(planned, past, matrix) if len(planned) > 1 else Sharing(1, "one run")
    if matrix.runs_per_gpu is None and chosen.runs_per_gpu > 1:
        progress.note(chosen.reason)
    executor = make_executor(dataclasses.replace(matrix, runs_per_gpu=chosen.runs_per_gpu))
    return executor.run_all(planned, results_dir, options, run_one, progress)
