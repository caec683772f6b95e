"""The run stage on the CPU: real child processes, real torch.compile, failures as data."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen.bundle import HISTORY_DIR, RunStatus, read_capture, read_manifest
from reportgen.recipe import HOST_KEPT, RUN_OWNED, load_recipe
from reportgen.run import RunOptions, run_recipe, sweep_work_dirs
from reportgen.run.launcher import child_env

RECIPES = Path(__file__).resolve().parents[1] / "data" / "recipes"


def _run(name: str, results: Path, **options: object) -> Path:
    path = RECIPES / f"{name}.yaml"
    return run_recipe(load_recipe(path), path, results, RunOptions(**options))  # type: ignore[arg-type]


@pytest.mark.slow
def test_ok_run_writes_a_complete_bundle(tmp_path: Path) -> None:
    bundle = _run("addmul", tmp_path)
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.ok, manifest.error
    assert manifest.environment is not None and manifest.environment.device == "cpu"
    assert manifest.inductor_cache == "fresh"
    assert manifest.environment.versions.torch
    m = manifest.metrics
    assert m.eager is not None and m.compiled is not None and len(m.compiled.samples_ms) == 3
    assert m.compile_time_s is not None and m.compile_time_s > m.compiled.median_ms / 1e3
    assert m.speedup is not None and m.speedup > 0
    trace = json.loads(gzip.decompress((bundle / "trace.json.gz").read_bytes()))
    names = {e.get("name", "") for e in trace["traceEvents"]}
    assert any(n.endswith("cpp_fused_add_mul_0") for n in names)
    wrappers = [f for f in manifest.modules if f.kind == "wrapper"]
    assert len(wrappers) == 1 and "cpp_fused_add_mul_0" in (bundle / wrappers[0].path).read_text()
    assert manifest.environment.env["TORCHINDUCTOR_UNIQUE_KERNEL_NAMES"] == "1"
    assert (bundle / "recipe.yaml").read_text() == (RECIPES / "addmul.yaml").read_text()
    log = (bundle / "run.log").read_text()
    assert "compiling" in log
    assert f"compiled {m.compiled.median_ms:.3f} ms" in log  # the child's last line, flushed before it exits
    assert list(m.stages_s)[-3:] == ["done", "child exit", "scrub"]  # the launcher's own stages after the child's
    assert not list(tmp_path.glob(".tmp-*"))
    capture = read_capture(bundle, manifest)
    (timed,) = capture.graph_benchmarks  # the one graph, timed alone in rounds; the median round counts
    assert len(timed.rounds_ms) == 3 and timed.wall_ms_per_call == sorted(timed.rounds_ms)[1] > 0
    assert timed.profiled_calls > 0 and timed.trace_file and (bundle / timed.trace_file).is_file()


@pytest.mark.slow
def test_a_kept_inductor_cache_makes_the_second_compile_warm(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = read_manifest(_run("addmul", tmp_path / "a", inductor_cache=cache))
    second_bundle = _run("addmul", tmp_path / "b", inductor_cache=cache)
    second = read_manifest(second_bundle)
    assert (first.status, second.status) == (RunStatus.ok, RunStatus.ok), second.error
    assert (first.inductor_cache, second.inductor_cache) == ("kept-empty", "kept-warm")
    assert (cache / "addmul").is_dir()  # one kept cache per bundle name
    hits = read_capture(second_bundle, second).diagnostics.cache
    assert hits.get("fxgraph_cache_hit", 0) >= 1, hits
    wrappers = [f for f in second.modules if f.kind == "wrapper"]  # a cache hit still gives the wrapper
    assert len(wrappers) == 1 and "cpp_fused_add_mul_0" in (second_bundle / wrappers[0].path).read_text()


def test_model_code_that_raises_is_a_failed_bundle(tmp_path: Path) -> None:
    bundle = _run("raising", tmp_path)
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.failed
    assert manifest.exit_code == 1
    assert manifest.error is not None and "ValueError: planted failure in model code" in manifest.error
    # the recipe's own module travels with the bundle, its credentials redacted and counted
    copy = (bundle / "recipe_modules" / "tiny_models.py").read_text()
    assert 'MIRROR = "https://reportgen:[redacted]@models.example/v1"' in copy and "class Leaky" in copy
    found = {(r.kind, r.where): r.count for r in manifest.redactions}
    assert found == {("password in a URL", "recipe_modules/"): 1, ("Hugging Face token", "recipe_modules/"): 1}


def test_a_hung_run_times_out(tmp_path: Path) -> None:
    manifest = read_manifest(_run("sleeper", tmp_path, timeout_s=8))
    assert manifest.status is RunStatus.timeout
    assert manifest.wall_time_s < 60
    assert manifest.error is not None and "timeout" in manifest.error


def test_an_aborted_process_is_reported_as_killed(tmp_path: Path) -> None:
    manifest = read_manifest(_run("aborter", tmp_path))
    assert manifest.status is RunStatus.killed
    assert manifest.error is not None and "SIGABRT" in manifest.error


def test_a_failed_rerun_replaces_the_bundle_atomically(tmp_path: Path) -> None:
    first = _run("raising", tmp_path)
    stamp = read_manifest(first).started_at
    second = _run("raising", tmp_path)
    assert first == second and read_manifest(second).started_at >= stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_DIR, "raising"]  # no leftover temporaries
    [kept] = (tmp_path / HISTORY_DIR / "raising").iterdir()  # the first run is kept, whole
    assert read_manifest(kept).started_at == stamp


def test_sweep_removes_only_work_dirs_whose_owner_died(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(done.stdout)
    dirs = {}
    for name, owner in (("dead", str(dead_pid)), ("live", str(os.getpid())), ("garbled", "x"), ("unowned", None)):
        work = dirs[name] = tmp_path / f"reportgen-r-{name}"
        (work / "inductor").mkdir(parents=True)
        if owner is not None:
            (work / "owner.pid").write_text(owner)
    (tmp_path / "other-dead").mkdir()
    (tmp_path / "other-dead" / "owner.pid").write_text(str(dead_pid))
    assert sweep_work_dirs(tmp_path) == [dirs["dead"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "other-dead",
        "reportgen-r-garbled",
        "reportgen-r-live",
        "reportgen-r-unowned",
    ]


def test_the_launcher_sets_only_what_the_recipe_policy_reserves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every variable `child_env` sets for the run is one a recipe may not set (`recipe.RUN_OWNED`)."""
    for name in list(os.environ):
        monkeypatch.delenv(name)
    recipe = load_recipe(RECIPES / "addmul.yaml")
    env = child_env(recipe, tmp_path)
    owned = set(env) - set(recipe.env) - {"TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"}  # a default a recipe may change
    assert owned and owned <= set(RUN_OWNED)


def test_the_hosts_safety_settings_reach_the_child_whatever_the_recipe_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the lent GPU hosts NVLink multicast must stay off in every process (issue 32): the host's value wins over
    a recipe's; where the host sets none, the recipe's stands."""
    recipe = load_recipe(RECIPES / "addmul.yaml")
    asks = recipe.model_copy(update={"env": {**recipe.env, "NCCL_NVLS_ENABLE": "1", "NVSHMEM_DISABLE_NVLS": "0"}})
    for name in HOST_KEPT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    monkeypatch.setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    env = child_env(asks, tmp_path)
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert env["NVSHMEM_DISABLE_NVLS"] == "0"  # the host sets none: the recipe's
    assert set(HOST_KEPT) == {"NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"}
