"""The matrix on a Ray cluster: one Ray task per run, one GPU each; the driver writes every bundle.

Ray (an optional extra: `pip install reportgen[ray]`) rather than Dask distributed: a Ray task asks for
`num_gpus=1` and Ray gives it its own GPU (it sets `CUDA_VISIBLE_DEVICES` per task), and `max_retries` is per
task, so "a run whose worker died is retried once" holds on any cluster; Dask's GPU resources are counters
without device ids, and its retry limit for lost workers (`allowed-failures`) is the scheduler's setting.

Each task runs its run into a temporary results directory on its node and returns the bundle packed; the
driver unpacks it into the results directory in one rename, under the bundle's lock. A task whose worker is
lost twice, or that fails inside Ray, becomes a `killed` bundle saying so.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reportgen.bundle import bundle_lock, pack_bundle, read_manifest, unpack_bundle
from reportgen.matrix.plan import MatrixRun
from reportgen.progress import Progress, RunOutcome
from reportgen.run import RunOptions, write_lost_run

__all__ = ["RETRIES", "RayExecutor", "run_packed"]

RETRIES = 1
"""How often Ray runs a task again whose worker died."""


@dataclass(frozen=True)
class _Packed:
    """What a task sends back: the bundle as bytes, and how its analysis went."""

    data: bytes
    analysis_error: str | None
    analysis_s: float | None


def run_packed(run_one: Any, run: MatrixRun, options: RunOptions) -> _Packed:
    """On a worker: run `run` into a temporary results directory and return its bundle packed."""
    results = Path(tempfile.mkdtemp(prefix="reportgen-ray-"))
    try:
        outcome: RunOutcome = run_one(run, results, options)
        return _Packed(pack_bundle(outcome.bundle), outcome.analysis_error, outcome.analysis_s)
    finally:
        shutil.rmtree(results, ignore_errors=True)


class RayExecutor:
    """Runs on a Ray cluster: `RAY_ADDRESS` (or one `ray.init` made before), else a local one on this host."""

    def __init__(self, isolation: str) -> None:
        self.isolation = isolation

    def run_all(
        self, runs: Sequence[MatrixRun], results_dir: Path, options: RunOptions, run_one: Any, progress: Progress
    ) -> list[RunOutcome]:
        """Submit every run (in order: Ray starts them as resources free up), then take each bundle home."""
        import ray

        if not ray.is_initialized():
            ray.init(log_to_driver=False)
        resources = {"num_gpus": 1} if ray.cluster_resources().get("GPU", 0) >= 1 else {"num_cpus": 1}
        task = ray.remote(run_packed).options(max_retries=RETRIES, retry_exceptions=False, **resources)
        # Ray gives each task its GPU; cores are Ray's to share, so only the timing lock isolates here
        remote_options = dataclasses.replace(options, devices=None, cpus=(), timing_lock="lock" in self.isolation)
        started = dt.datetime.now(dt.timezone.utc)
        pending = {}
        for index, run in enumerate(runs):
            run = dataclasses.replace(run, recipe_path=run.recipe_path.resolve())
            progress.run_started(run.name, run.recipe_path, index + 1, len(runs), "ray")
            pending[task.remote(run_one, run, remote_options)] = (index, run)
        outcomes: dict[int, RunOutcome] = {}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            index, run = pending.pop(ready[0])
            outcomes[index] = self._take_home(ray, ready[0], run, results_dir, started)
            progress.run_finished(outcomes[index])
        return [outcomes[index] for index in range(len(runs))]

    @staticmethod
    def _take_home(ray: Any, ref: Any, run: MatrixRun, results_dir: Path, started: dt.datetime) -> RunOutcome:
        """The run's bundle written into `results_dir`: the one it sent, or a `killed` one saying why not."""
        try:
            packed: _Packed = ray.get(ref)
        except ray.exceptions.RayError as exc:
            why = f"the run's Ray worker was lost, and again when retried ({type(exc).__name__}: {exc})"
            if not isinstance(exc, (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError)):
                why = f"the run failed in Ray ({type(exc).__name__}: {exc})"
            with bundle_lock(results_dir, run.name):
                bundle = write_lost_run(run.recipe, run.recipe_path, results_dir, run.variant, why, started)
            return RunOutcome(bundle, read_manifest(bundle))
        with bundle_lock(results_dir, run.name):
            bundle = unpack_bundle(packed.data, results_dir, run.name)
        return RunOutcome(bundle, read_manifest(bundle), packed.analysis_error, packed.analysis_s)
