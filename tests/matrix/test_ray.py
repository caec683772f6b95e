"""The matrix on Ray, started locally with two fake GPUs: bundles come home, a lost worker's run is retried once
and then written as a failure."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from reportgen.bundle import RunStatus, iter_bundles, read_manifest
from reportgen.matrix import MatrixOptions
from reportgen.pipeline import run_recipes
from reportgen.run import RunOptions

__all__: list[str] = []


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_a_matrix_on_ray_brings_every_bundle_home_and_a_lost_worker_is_a_failure(
    work: Path, inductor_cache: Path, ray_cluster: None
) -> None:
    attempts = work / "attempts.txt"
    killer = work / "worker_killer.yaml"
    killer.write_text(
        killer.read_text().replace(
            '"tiny_models:WorkerKiller"}', f'"tiny_models:WorkerKiller", kwargs: {{attempts: "{attempts}"}}}}'
        )
    )
    recipes = [work / name for name in ("addmul_variants.yaml", "addmul.yaml", "worker_killer.yaml")]
    options = RunOptions(inductor_cache=inductor_cache, host_dir=work / "host")
    outcomes = run_recipes(recipes, work / "results", options, matrix=MatrixOptions(executor="ray"))
    manifests = {outcome.bundle.name: outcome.manifest for outcome in outcomes}
    assert sorted(manifests) == ["addmul", "addmul_variants--default", "addmul_variants--fullgraph", "worker_killer"]
    lost = manifests.pop("worker_killer")
    assert lost.status is RunStatus.killed
    assert (lost.error or "").startswith("the run's Ray worker was lost, and again when retried (WorkerCrashedError")
    assert attempts.read_text().splitlines() == ["attempt", "attempt"]  # retried once, then given up
    assert all(m.status is RunStatus.ok for m in manifests.values()), manifests
    isolations = [m.isolation for m in manifests.values()]
    assert all(i is not None and i.devices in ("0", "1") and i.timing_lock and i.measured_alone for i in isolations)
    home = {bundle.name: read_manifest(bundle) for bundle in iter_bundles(work / "results")}
    assert home == {**manifests, "worker_killer": lost}  # every bundle written into the driver's results dir
    assert not list((work / "results").glob(".tmp-*"))
    assert (work / "results" / "worker_killer" / "recipe.yaml").is_file()
