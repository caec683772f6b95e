"""The local scheduler end to end on the CPU: two fake GPUs, shards as two hosts, one site from the shards."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from reportgen.bundle import Manifest, RunStatus, iter_bundles, read_manifest
from tests.matrix.conftest import MATRIX, MATRIX_RUNS, RECIPES, cli

__all__: list[str] = []


def _manifests(results: Path) -> dict[str, Manifest]:
    return {bundle.name: read_manifest(bundle) for bundle in iter_bundles(results)}


@pytest.mark.slow
def test_a_matrix_fills_two_fake_gpus_and_a_killed_child_is_a_failure(work: Path, inductor_cache: Path) -> None:
    started = time.monotonic()
    proc = cli("run", *MATRIX, "--gpus", "0,1", "-o", "results", "--inductor-cache", inductor_cache, cwd=work)
    stdout, stderr = proc.communicate(timeout=900)
    wall_s = time.monotonic() - started
    assert proc.returncode == 1, stdout + stderr  # the aborter's run failed; the others finished
    assert "on gpu 0" in stdout and "on gpu 1" in stdout
    manifests = _manifests(work / "results")
    assert sorted(manifests) == sorted(MATRIX_RUNS)
    assert manifests.pop("aborter").status is RunStatus.killed
    assert all(m.status is RunStatus.ok for m in manifests.values()), stdout
    isolations = {name: m.isolation for name, m in manifests.items()}
    assert all(i is not None and i.timing_lock and i.measured_alone for i in isolations.values()), isolations
    cores = {i.devices: i.cpus for i in isolations.values() if i is not None}
    assert sorted(cores) == ["0", "1"]  # both GPUs used, each run pinned to its GPU's cores
    assert not set(cores["0"]) & set(cores["1"])
    assert any(i is not None and i.concurrent for i in isolations.values())  # runs did overlap (compiling)
    # Every timed part was a window the matrix's coordinator granted alone, the other runs paused meanwhile:
    # a run that was compiling (or measuring) beside one was stopped during its windows and still finished.
    # (at least 3 step-block pairs, 2 profiles, 3 timing rounds and 1 profile of a graph)
    assert all(i is not None and i.coordinated and i.windows >= 9 for i in isolations.values()), isolations
    paused = {other for i in isolations.values() if i is not None for other in i.paused}
    assert paused and paused <= set(MATRIX_RUNS), isolations
    assert wall_s < sum(m.wall_time_s for m in manifests.values()) + 30


@pytest.mark.slow
def test_shards_run_each_run_once_and_build_one_site(work: Path, inductor_cache: Path) -> None:
    hosts = [  # two hosts at once; on one machine they share its timing lock
        cli("run", *MATRIX, "--shard", f"{i}/2", "-o", f"host{i}", "--inductor-cache", inductor_cache, cwd=work)
        for i in (1, 2)
    ]
    for proc in hosts:
        stdout, stderr = proc.communicate(timeout=900)
        assert "Traceback" not in stderr, stderr
    shards = [sorted(_manifests(work / f"host{i}")) for i in (1, 2)]
    assert sorted(shards[0] + shards[1]) == sorted(MATRIX_RUNS)
    assert [len(shard) for shard in shards] == [2, 2]
    build = cli("build", "host1", "host2", "--out", "site", cwd=work)
    stdout, stderr = build.communicate(timeout=900)
    assert build.returncode == 0, stdout + stderr
    index = (work / "site" / "_build" / "html" / "reports" / "index.html").read_text(encoding="utf-8")
    for name in MATRIX_RUNS:
        assert (work / "site" / "_build" / "html" / "reports" / name / "index.html").is_file(), name
        assert f"{name}/index.html" in index, name


@pytest.mark.slow
def test_an_interrupted_matrix_kills_the_runs_under_way_and_keeps_their_bundles(work: Path) -> None:
    sleeper = (RECIPES / "sleeper.yaml").read_text()
    for name in ("sleeper_a", "sleeper_b"):  # hang in forward, for up to their 15 s timeout
        (work / f"{name}.yaml").write_text(sleeper.replace("name: sleeper", f"name: {name}"))
    proc = cli("run", "sleeper_a.yaml", "sleeper_b.yaml", "--gpus", "0,1", "-o", "results", cwd=work)
    deadline = time.monotonic() + 60
    while len(list((work / "results").glob(".tmp-sleeper_*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # both runs under way
    time.sleep(2)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert time.monotonic() - started < 10  # not waiting for the runs' timeouts
    manifests = _manifests(work / "results")
    assert {name: m.status for name, m in manifests.items()} == {
        "sleeper_a": RunStatus.killed,
        "sleeper_b": RunStatus.killed,
    }


@pytest.mark.slow
def test_two_runs_share_one_fake_gpu_each_timing_alone(
    work: Path, inductor_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--runs-per-gpu 2` on one (fake) GPU: two slots on it, so a run compiles while another times; every timed
    part is still a window of the coordinator with the other paused, and a CPU run has no GPU work to drain."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")  # the host's one GPU, as --gpus 1 finds it
    runs = ("addmul.yaml", "addmul_variants.yaml")
    args = ("--gpus", "1", "--runs-per-gpu", "2", "-o", "results", "--inductor-cache", inductor_cache)
    proc = cli("run", *runs, *args, cwd=work)
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stdout + stderr
    manifests = _manifests(work / "results")
    assert sorted(manifests) == ["addmul", "addmul_variants--default", "addmul_variants--fullgraph"]
    assert all(m.status is RunStatus.ok for m in manifests.values()), stdout
    isolations = [m.isolation for m in manifests.values()]
    assert all(i is not None and i.devices == "7" and i.coordinated and i.windows >= 9 for i in isolations)
    assert any(i is not None and i.paused for i in isolations), isolations  # two ran at once, one paused
    assert all(i is not None and i.drain_s == 0.0 for i in isolations)
