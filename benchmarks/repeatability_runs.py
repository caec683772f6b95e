"""Repeatability's runs: `reportgen run` in a fresh process, and the base runs a results directory holds
(`repeatability.py`)."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle import Bundle, Figures, StepFigures, history_runs, load_bundle
from reportgen.errors import RecipeError
from reportgen.pipeline import select_variant
from reportgen.recipe import load_recipe

__all__: list[str] = []

LOG_TAIL = 3000
"""Characters of a failed command's output shown on stderr: the traceback's end, not the whole progress log."""


@dataclass
class BaseRun:
    """One base run: its bundle and where it lies."""

    path: Path
    bundle: Bundle

    @property
    def figures(self) -> Figures | None:
        """The run's repeatable figures; None before the analysis stores them."""
        analysis = self.bundle.analysis
        return getattr(analysis, "figures", None) if analysis is not None else None

    def side(self, name: str) -> StepFigures | None:
        """Eager's or compiled's figures."""
        return getattr(self.figures, name, None) if self.figures is not None else None


def bundle_name(recipe_path: Path, variant: str | None) -> str:
    """The bundle a run of the recipe (and variant) writes: `<name>` or `<name>--<variant>`."""
    try:
        recipe = load_recipe(recipe_path)
        if variant is None and recipe.variants:
            names = ", ".join(v.name for v in recipe.variants)
            raise SystemExit(f"{recipe_path}: the recipe has variants ({names}); pass --variant")
        return recipe.bundle_name(select_variant(recipe, variant, recipe_path))
    except RecipeError as exc:
        raise SystemExit(str(exc)) from exc


def run_reportgen(recipe_path: Path, variant: str | None, results: Path, cache: Path, log: Path) -> float:
    """One `reportgen run` in a fresh process, its output kept in `log`; its wall time in seconds."""
    command = [sys.executable, "-m", "reportgen", "run", str(recipe_path), "-o", str(results)]
    command += ["--inductor-cache", str(cache)] + (["--variant", variant] if variant else [])
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    wall_s = time.perf_counter() - started
    if code != 0:
        print(log.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL:], file=sys.stderr)
        raise SystemExit(f"{' '.join(command)}: exit {code} (log: {log})")
    return wall_s


def base_runs(results: Path, name: str, runs: int) -> list[BaseRun]:
    """The newest `runs` runs of bundle `name` in `results`, oldest first."""
    paths = [*history_runs(results, name)]
    if (results / name / "manifest.json").is_file():
        paths.append(results / name)
    if len(paths) < runs:
        raise SystemExit(f"{results}: {len(paths)} run(s) of {name}, {runs} wanted")
    return [BaseRun(path, load_bundle(path)) for path in paths[-runs:]]
