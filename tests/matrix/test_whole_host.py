"""A distributed run in a matrix of GPU slots takes the whole host: alone, first, with every GPU the process sees."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from reportgen.matrix import MatrixRun
from reportgen.matrix.devices import Slot
from reportgen.matrix.executor import LocalExecutor
from reportgen.progress import RunOutcome, SilentProgress
from reportgen.recipe import Recipe
from reportgen.run import RunOptions

__all__: list[str] = []


def _run(name: str, distributed: bool) -> MatrixRun:
    data: dict[str, Any] = {"name": name, "model": {"ref": "m:f"}, "inputs": {"tensors": [{"shape": [2]}]}}
    if distributed:
        data["distributed"] = {"nproc_per_node": "all"}
    return MatrixRun(Path(f"{name}.yaml"), Recipe.model_validate(data), None)


def test_distributed_runs_go_first_and_alone_with_all_gpus_the_others_share_the_slots() -> None:
    seen: list[tuple[str, str | None, int]] = []
    running, lock = [0], threading.Lock()

    def run_one(run: MatrixRun, results: Path, options: RunOptions) -> RunOutcome:
        with lock:
            running[0] += 1
            seen.append((run.name, options.devices, running[0]))
        time.sleep(0.3)  # long enough for the other slot's thread to take the next run
        with lock:
            running[0] -= 1
        return RunOutcome.__new__(RunOutcome)  # the executor passes outcomes through untouched

    runs = [_run("a", False), _run("ddp", True), _run("b", False), _run("fsdp", True)]
    slots = [Slot("0"), Slot("1")]
    outcomes = LocalExecutor(slots, "none").run_all(runs, Path("results"), RunOptions(), run_one, SilentProgress())
    assert len(outcomes) == 4
    assert [(name, devices) for name, devices, _ in seen[:2]] == [("ddp", None), ("fsdp", None)]
    assert all(alone == 1 for _, _, alone in seen[:2])
    assert sorted((name, devices) for name, devices, _ in seen[2:]) in (
        [("a", "0"), ("b", "1")],
        [("a", "1"), ("b", "0")],
    )
