"""A 4-run matrix of tiny CPU recipes, and one Inductor cache for all its runs (warm compiles after the first)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["MATRIX", "MATRIX_RUNS", "RECIPES", "cli"]

RECIPES = Path(__file__).resolve().parents[1] / "data" / "recipes"
MATRIX = ("addmul_variants.yaml", "addmul.yaml", "aborter.yaml")
MATRIX_RUNS = ("aborter", "addmul", "addmul_variants--default", "addmul_variants--fullgraph")
"""The runs of MATRIX: a recipe with two variants, one without, one whose child is killed (SIGABRT)."""


@pytest.fixture(scope="session")
def inductor_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kept between the matrix tests' runs (`--inductor-cache`): scheduling is tested, not cold compiles."""
    return tmp_path_factory.mktemp("inductor-cache")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A directory holding the matrix's recipes, the test recipes' models, and the runs' host directory."""
    for name in (*MATRIX, "worker_killer.yaml", "tiny_models.py"):
        shutil.copy(RECIPES / name, tmp_path / name)
    return tmp_path


def cli(*args: str | Path, cwd: Path) -> subprocess.Popen[str]:
    """Start `reportgen ARGS` in `cwd`; the runs meet in `cwd/host` (timing lock, activity)."""
    env = {**os.environ, "REPORTGEN_HOST_DIR": str(cwd / "host")}
    command = [sys.executable, "-m", "reportgen", *map(str, args)]
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C reaches it as in a terminal, even when the suite itself runs in the background (a shell without
        # job control starts background jobs with SIGINT ignored, and Python then keeps ignoring it).
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
