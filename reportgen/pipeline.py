"""The whole pipeline, one line per stage: recipe → run → bundle → analyze → render → site."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reportgen.analyze import analyze
from reportgen.bundle.model import Manifest, RunStatus
from reportgen.bundle.store import read_capture, read_manifest, write_analysis
from reportgen.errors import ReportgenError
from reportgen.recipe import load_recipes
from reportgen.run import RunOptions, run_recipe
from reportgen.site import build_site

__all__ = ["RunOutcome", "build", "report", "run_recipes"]

Notify = Callable[[str], None]


@dataclass(frozen=True)
class RunOutcome:
    """One recipe's bundle, its manifest, and a note if analysis failed."""

    bundle: Path
    manifest: Manifest
    analysis_error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the run succeeded and was analysed."""
        return self.manifest.status is RunStatus.ok and self.analysis_error is None


def _analyze(bundle: Path, manifest: Manifest) -> str | None:
    if manifest.status is not RunStatus.ok:
        return None
    try:
        write_analysis(bundle, analyze(bundle, manifest, read_capture(bundle, manifest)))
    except ReportgenError as exc:
        return str(exc)
    return None


def run_recipes(
    paths: Sequence[Path], results_dir: Path, options: RunOptions | None = None, notify: Notify = print
) -> list[RunOutcome]:
    """Validate every recipe first (so a typo fails in seconds, not after an hour), then run each."""
    recipes = load_recipes(paths)
    outcomes = []
    for path, recipe in zip(paths, recipes, strict=True):
        for variant in recipe.variants or [None]:
            name = recipe.bundle_name(variant)
            notify(f"running {name} ({path})")
            bundle = run_recipe(recipe, Path(path), results_dir, options, variant)
            manifest = read_manifest(bundle)
            outcome = RunOutcome(bundle, manifest, _analyze(bundle, manifest))
            notify(f"{name}: {manifest.status.value} in {manifest.wall_time_s:.1f} s -> {bundle}")
            if outcome.analysis_error:
                notify(f"{name}: analysis failed: {outcome.analysis_error}")
            outcomes.append(outcome)
    return outcomes


def build(results_dir: Path, source_dir: Path, html_dir: Path | None = None) -> Path:
    """Render every bundle into `source_dir` and build the HTML site; returns the HTML dir."""
    return build_site(results_dir, source_dir, html_dir)


def report(
    paths: Sequence[Path],
    results_dir: Path,
    source_dir: Path,
    options: RunOptions | None = None,
    notify: Notify = print,
) -> int:
    """Run recipes then build the site. Exit code 0 only if every run succeeded."""
    outcomes = run_recipes(paths, results_dir, options, notify)
    html = build(results_dir, source_dir)
    notify(f"site: {html / 'index.html'}")
    return 0 if all(o.ok for o in outcomes) else 1
