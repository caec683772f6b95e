"""How many runs share a GPU when `--runs-per-gpu` is not given: two only where cores, memory and windows allow."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from reportgen.bundle import RunStatus, write_bundle
from reportgen.history import HistoryIndex
from reportgen.matrix import MatrixOptions, MatrixRun, discover_gpus, past_runs, run_matrix, sharing
from reportgen.matrix.sharing import Sharing, choose_sharing, gpu_memory_bytes
from reportgen.progress import RunOutcome, SilentProgress
from reportgen.recipe import Recipe
from reportgen.run import RunOptions
from tests.conftest import make_manifest

__all__: list[str] = []

GIB = 1024**3


def test_two_runs_share_a_gpu_only_where_it_is_safe() -> None:
    peaks: dict[str, int | None] = {"a": 4 * GIB, "b": 2 * GIB, "c": 1 * GIB}
    two = ["0", "1"]
    assert choose_sharing(two, "cores+lock", peaks, 80 * GIB, 32) == Sharing(
        2, "two runs per GPU: the two largest runs (4.0 + 2.0 GiB at their peaks) fit 80 GiB"
    )
    # the two largest need (4 x 1.5 + 2) + (2 x 1.5 + 2) = 13 GiB together
    assert choose_sharing(two, "lock", peaks, 13 * GIB, 32).runs_per_gpu == 2
    assert choose_sharing(two, "lock", peaks, 13 * GIB - 1, 32) == Sharing(
        1, "the two largest runs (4.0 + 2.0 GiB at their peaks) may not fit one GPU together"
    )
    assert choose_sharing(["0"], "lock", peaks, 80 * GIB, 32) == Sharing(1, "one GPU: one run at a time")
    assert choose_sharing([None], "lock", peaks, 80 * GIB, 32).runs_per_gpu == 1
    assert choose_sharing(two, "cores", peaks, 80 * GIB, 32) == Sharing(
        1, "--isolation cores has no timed windows to keep two runs on a GPU apart"
    )
    assert choose_sharing(two, "lock", {"a": GIB, "b": GIB}, 80 * GIB, 32) == Sharing(1, "no more runs than GPUs")
    assert choose_sharing(two, "lock", peaks, 80 * GIB, 31) == Sharing(1, "31 cores: fewer than 8 for each of 4 slots")
    assert choose_sharing(two, "lock", peaks, None, 32) == Sharing(1, "the GPUs' memory is unknown (nvidia-smi)")
    assert choose_sharing(two, "lock", {**peaks, "new": None}, 80 * GIB, 32) == Sharing(
        1, "no earlier run of new recorded its GPU memory"
    )


def _fake_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text(
        '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: H100 (UUID: GPU-a)" && echo "GPU 1: A100 (UUID: GPU-b)" && exit 0\n'
        '[ "$1" = "--query-gpu=index,memory.total" ] || exit 9\necho "0, 81559"\necho "1, 40960"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_gpu_memory_is_the_smallest_of_the_gpus_or_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpu_memory_bytes(["0"]) is None
    assert discover_gpus() == []
    _fake_nvidia_smi(tmp_path, monkeypatch)
    assert discover_gpus() == ["0", "1"]
    assert gpu_memory_bytes(["0"]) == 81559 * 1024**2
    assert gpu_memory_bytes(["0", "1"]) == 40960 * 1024**2
    assert gpu_memory_bytes(["2"]) is None  # not listed
    assert gpu_memory_bytes(["GPU-5e3f"]) is None  # a UUID: not an index nvidia-smi printed


def _bundle(results: Path, name: str, eager: int | None, compiled: int | None) -> None:
    def populate(tmp: Path) -> Any:
        manifest = make_manifest(name, RunStatus.ok, None)
        metrics = manifest.metrics.model_copy(
            update={"peak_memory_eager_bytes": eager, "peak_memory_compiled_bytes": compiled}
        )
        return manifest.model_copy(update={"metrics": metrics})

    write_bundle(results, name, populate)


def test_past_runs_keep_the_larger_peak_from_the_bundles_or_the_history(tmp_path: Path) -> None:
    _bundle(tmp_path, "train", 3 * GIB, 2 * GIB)
    _bundle(tmp_path, "infer", None, GIB)
    _bundle(tmp_path, "old", None, None)
    expected = {"train": 3 * GIB, "infer": GIB, "old": None}
    assert {name: past.peak_memory_bytes for name, past in past_runs(tmp_path).items()} == expected
    with HistoryIndex(tmp_path) as index:
        index.update()
    assert {name: past.peak_memory_bytes for name, past in past_runs(tmp_path).items()} == expected


def _run(name: str) -> MatrixRun:
    data = {"name": name, "model": {"ref": "m:f"}, "inputs": {"tensors": [{"shape": [2]}]}}
    return MatrixRun(Path(f"{name}.yaml"), Recipe.model_validate(data), None)


class _Notes(SilentProgress):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


def test_a_matrix_with_recorded_peaks_puts_two_runs_on_each_gpu_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results"
    for name, peak in (("a", 4 * GIB), ("b", 2 * GIB), ("c", GIB)):
        _bundle(results, name, peak, peak)
    _fake_nvidia_smi(tmp_path, monkeypatch)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)))
    runs = [_run(name) for name in ("a", "b", "c")]
    matrix = MatrixOptions(gpus="0,1", isolation="lock")
    assert sharing(runs, past_runs(results), matrix).runs_per_gpu == 2
    assert sharing(runs, past_runs(results), MatrixOptions(gpus="0,1", isolation="lock", runs_per_gpu=1)) == Sharing(
        1, "--runs-per-gpu"
    )
    assert sharing(runs, past_runs(results), MatrixOptions(executor="ray")).runs_per_gpu == 1

    seen: list[str | None] = []
    lock = threading.Lock()

    def run_one(run: MatrixRun, results_dir: Path, options: RunOptions) -> RunOutcome:
        with lock:
            seen.append(options.devices)
        time.sleep(0.3)  # all three start before any ends: four slots
        return RunOutcome.__new__(RunOutcome)

    progress = _Notes()
    outcomes = run_matrix(runs, results, RunOptions(), matrix, run_one, progress)
    assert len(outcomes) == 3
    assert sorted(d or "" for d in seen) == ["0", "0", "1"]  # two GPUs, one of them twice at once
    assert progress.notes == ["two runs per GPU: the two largest runs (4.0 + 2.0 GiB at their peaks) fit 40 GiB"]
