"""Matrix: many runs (recipe × variant) at once: over this host's GPUs, a shard of them per host, or on Ray.

`run_matrix` takes the planned runs and a way to run one (the pipeline's); it shards them, orders them
longest first and hands them to an executor. See docs/matrix.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reportgen.errors import RunError
from reportgen.matrix.devices import ISOLATIONS, Slot, discover_gpus, make_slots, resolve_gpus
from reportgen.matrix.executor import EXECUTORS, Executor, LocalExecutor, MatrixOptions, RunFn, slot_options
from reportgen.matrix.plan import MatrixRun, Shard, expected_durations, longest_first, parse_shard, shard_runs
from reportgen.progress import Progress, RunOutcome
from reportgen.run import RunOptions

__all__ = [
    "EXECUTORS",
    "ISOLATIONS",
    "Executor",
    "LocalExecutor",
    "MatrixOptions",
    "MatrixRun",
    "RunFn",
    "Shard",
    "Slot",
    "discover_gpus",
    "expected_durations",
    "longest_first",
    "make_executor",
    "make_slots",
    "parse_shard",
    "plan_matrix",
    "resolve_gpus",
    "run_matrix",
    "shard_runs",
    "slot_options",
]


def make_executor(matrix: MatrixOptions) -> Executor:
    """The executor `matrix` asks for.

    :raises RunError: for an unknown executor or isolation, or GPUs the host does not have
    """
    if matrix.isolation not in ISOLATIONS:
        raise RunError(f"--isolation expects one of {', '.join(ISOLATIONS)}; got {matrix.isolation!r}")
    if matrix.executor == "ray":
        if matrix.gpus is not None or matrix.runs_per_gpu != 1:
            raise RunError(
                "--gpus and --runs-per-gpu are for the local executor: on Ray, each run gets one GPU of the cluster"
            )
        from reportgen.matrix.ray_engine import RayExecutor

        return RayExecutor(matrix.isolation)
    if matrix.executor != "local":
        raise RunError(f"--executor expects one of {', '.join(EXECUTORS)}; got {matrix.executor!r}")
    if matrix.runs_per_gpu < 1:
        raise RunError(f"--runs-per-gpu expects a count of at least 1; got {matrix.runs_per_gpu}")
    if matrix.runs_per_gpu > 1 and "lock" not in matrix.isolation:
        raise RunError(
            f"--runs-per-gpu {matrix.runs_per_gpu} needs timed windows (--isolation lock or cores+lock): without "
            "them one run would time while another's work shares its GPU"
        )
    devices = resolve_gpus(matrix.gpus)
    shared = [device for _ in range(matrix.runs_per_gpu) for device in devices]  # gpu 0, gpu 1, gpu 0, gpu 1
    return LocalExecutor(make_slots(shared, matrix.isolation), matrix.isolation)


def plan_matrix(runs: Sequence[MatrixRun], results_dir: Path, matrix: MatrixOptions) -> list[MatrixRun]:
    """The runs of `matrix.shard` (all without one), longest expected first (`results_dir`'s history)."""
    shard = parse_shard(matrix.shard) if matrix.shard else None
    return longest_first(shard_runs(runs, shard), expected_durations(results_dir))


def run_matrix(
    runs: Sequence[MatrixRun],
    results_dir: Path,
    options: RunOptions,
    matrix: MatrixOptions,
    run_one: RunFn,
    progress: Progress,
) -> list[RunOutcome]:
    """Plan the runs (`plan_matrix`) and run them with the executor `matrix` asks for."""
    executor = make_executor(matrix)  # a bad --gpus fails before anything runs
    return executor.run_all(plan_matrix(runs, results_dir, matrix), results_dir, options, run_one, progress)
