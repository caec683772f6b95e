"""Executors: what runs a matrix's runs. The local one fills this host's GPUs; `ray_engine` hands runs to Ray.

An executor takes the planned runs, in the order they should start, and a `RunFn` (the pipeline's way to run
one into a results directory); it returns one outcome per run, in the order given. A run that fails is data
(its bundle says how); a run whose worker is lost is retried once by the engine, then written as a `killed`
bundle by the driver, never dropped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from reportgen.matrix.devices import ISOLATIONS, Slot
from reportgen.matrix.plan import MatrixRun
from reportgen.progress import Progress, RunOutcome
from reportgen.run import Coordinator, Fifo, RunOptions, stop_runs

__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "MatrixOptions", "RunFn", "slot_options"]

EXECUTORS = ("local", "ray")

RunFn = Callable[[MatrixRun, Path, RunOptions], RunOutcome]
"""Runs one matrix run into a results directory with the given options, and analyses it."""


def _flag(flag: str, help: str, metavar: str, choices: Sequence[str] | None = None) -> dict[str, object]:
    return {"flag": flag, "help": help, "metavar": metavar, "choices": choices}


@dataclass(frozen=True)
class MatrixOptions:
    """How `reportgen run|report` spreads its runs. Fields with a `flag` are the CLI's flags (`reportgen.cli`)."""

    gpus: str | None = field(
        default=None,
        metadata=_flag(
            "--gpus",
            "GPUs to fill, one run on each at a time: all, a count N, or ids 0,2 (default: all when the host "
            "has several)",
            "all|N|IDS",
        ),
    )
    runs_per_gpu: int = field(
        default=1,
        metadata=_flag(
            "--runs-per-gpu",
            "runs sharing each GPU at a time (2: one compiles while another times; each timed window still has "
            "the host and its GPU to itself); needs lock isolation",
            "N",
        ),
    )
    shard: str | None = field(
        default=None,
        metadata=_flag("--shard", "run only part i of N of the runs (the same part on every host)", "i/N"),
    )
    isolation: str = field(
        default="cores+lock",
        metadata=_flag(
            "--isolation",
            "keep concurrent runs apart: each on its own cores (cores), measurements one at a time on the host "
            "(lock), both (default), or neither",
            "KIND",
            ISOLATIONS,
        ),
    )
    executor: str = field(
        default="local",
        metadata=_flag(
            "--executor",
            "local: this host's GPUs; ray: a Ray cluster (RAY_ADDRESS, else a local one), one GPU per run",
            "NAME",
            EXECUTORS,
        ),
    )


class Executor(Protocol):
    """Runs a matrix (see the module's docstring)."""

    def run_all(
        self, runs: Sequence[MatrixRun], results_dir: Path, options: RunOptions, run_one: RunFn, progress: Progress
    ) -> list[RunOutcome]: ...


def slot_options(options: RunOptions, slot: Slot, isolation: str) -> RunOptions:
    """The options of a run in `slot`: its GPU, its cores, the timing lock as `isolation` says."""
    return dataclasses.replace(options, devices=slot.device, cpus=slot.cpus, timing_lock="lock" in isolation)


class LocalExecutor:
    """This host's slots, one thread each (`concurrent.futures`); each run's child is pinned to its slot's GPU and
    cores. The thread keeps to the slot's cores too, so a run's analysis never takes another slot's CPU."""

    def __init__(self, slots: Sequence[Slot], isolation: str) -> None:
        self.slots, self.isolation = list(slots), isolation

    def run_all(
        self, runs: Sequence[MatrixRun], results_dir: Path, options: RunOptions, run_one: RunFn, progress: Progress
    ) -> list[RunOutcome]:
        """Run `runs` in order, as many at once as there are slots; a failing run does not stop the others. A
        distributed run takes every GPU of the host: those run first, alone, with the GPUs this process sees."""
        whole = [run for run in runs if run.recipe.distributed is not None]
        if whole and len(self.slots) > 1:
            rest = [run for run in runs if run.recipe.distributed is None]
            host = Slot(None)
            done = [
                self._run(host, run, n, len(runs), results_dir, options, run_one, progress)
                for n, run in enumerate(whole, 1)
            ]
            return done + (self.run_all(rest, results_dir, options, run_one, progress) if rest else [])
        if len(self.slots) == 1 or len(runs) <= 1:
            slot = self.slots[0]
            return [
                self._run(slot, run, n, len(runs), results_dir, options, run_one, progress)
                for n, run in enumerate(runs, 1)
            ]
        with contextlib.ExitStack() as stack:
            if "lock" in self.isolation:
                # Each timed part of a run owns the host: the coordinator grants one window at a time and pauses
                # the other runs (compiles included) meanwhile. Their GPUs are others', so nothing needs to drain.
                coordinator = stack.enter_context(Coordinator(Fifo(), settle_s=0.0))
                options = dataclasses.replace(options, window_socket=coordinator.path)
            return self._run_slots(runs, results_dir, options, run_one, progress)

    def _run_slots(
        self, runs: Sequence[MatrixRun], results_dir: Path, options: RunOptions, run_one: RunFn, progress: Progress
    ) -> list[RunOutcome]:
        free, local, started = iter(self.slots), threading.local(), itertools.count(1)
        lock = threading.Lock()

        def take_slot() -> None:
            with lock:
                local.slot = next(free)
            if local.slot.cpus:
                os.sched_setaffinity(0, local.slot.cpus)  # this thread only (Linux); its children inherit it

        def task(run: MatrixRun) -> RunOutcome:
            with lock:
                index = next(started)
            return self._run(local.slot, run, index, len(runs), results_dir, options, run_one, progress)

        with ThreadPoolExecutor(len(self.slots), "reportgen-slot", initializer=take_slot) as pool:
            futures = [pool.submit(task, run) for run in runs]
            try:
                return _results(futures)
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                stop_runs()  # the runs under way end as killed; their threads then finish
                raise

    def _run(
        self,
        slot: Slot,
        run: MatrixRun,
        index: int,
        total: int,
        results_dir: Path,
        options: RunOptions,
        run_one: RunFn,
        progress: Progress,
    ) -> RunOutcome:
        progress.run_started(run.name, run.recipe_path, index, total, slot.label)
        outcome = run_one(run, results_dir, slot_options(options, slot, self.isolation))
        progress.run_finished(outcome)
        return outcome


def _results(futures: Sequence[Future[RunOutcome]]) -> list[RunOutcome]:
    """Every future's outcome, in order, after all have ended; then the first error any raised."""
    errors = [error for future in futures if (error := future.exception()) is not None]
    if errors:
        raise errors[0]
    return [future.result() for future in futures]
