"""Runs take turns: two `reportgen run` processes of one recipe into one results directory.

Before runs took a lock, the second run's start cleared the first one's temporary bundle and the
first died with `FileNotFoundError: .../.tmp-raising-.../.manifest.json-....tmp`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from reportgen.bundle import RunStatus, read_manifest

__all__: list[str] = []

RECIPES = Path(__file__).resolve().parent / "data" / "recipes"


def _start(work: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "reportgen", "run", "raising.yaml", "-o", "results"]
    return subprocess.Popen(command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_runs_of_one_recipe_take_turns(tmp_path: Path) -> None:
    for name in ("raising.yaml", "tiny_models.py"):
        shutil.copy(RECIPES / name, tmp_path / name)
    first = _start(tmp_path)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "results").glob(".tmp-raising-*")) and time.monotonic() < deadline:
        time.sleep(0.02)  # the first run is writing its bundle
    second = _start(tmp_path)
    outputs = [proc.communicate(timeout=300) for proc in (first, second)]
    for proc, (_, stderr) in zip((first, second), outputs, strict=True):
        assert "Traceback" not in stderr, stderr
        assert proc.returncode == 1, stderr  # the recipe fails on purpose: a failed run is data, not a crash
    assert "waiting for another run of raising (pid " in outputs[1][1]
    manifest = read_manifest(tmp_path / "results" / "raising")
    assert manifest.status is RunStatus.failed and "planted failure" in (manifest.error or "")
    assert not list((tmp_path / "results").glob(".tmp-*")) and not list((tmp_path / "results").glob(".old-*"))
