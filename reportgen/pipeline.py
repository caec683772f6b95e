"""The whole pipeline, one line per stage: recipe → run → bundle → analyze → render → site."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reportgen.analyze import analyze
from reportgen.bundle.model import Manifest, RunStatus
from reportgen.bundle.store import (
    ANALYSIS_FILE,
    iter_bundles,
    read_capture,
    read_manifest,
    write_analysis,
    write_analysis_error,
)
from reportgen.console import PrintProgress
from reportgen.errors import RecipeError, ReportgenError
from reportgen.recipe import Recipe, load_recipes
from reportgen.recipe.model import Variant
from reportgen.run import RunOptions, run_recipe

__all__ = ["Progress", "RunOutcome", "analyze_bundle", "analyze_missing", "build", "report", "run_recipes"]


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


class Progress(Protocol):
    """What the pipeline reports while it works (`reportgen.console`: plain lines or a live display)."""

    def run_started(self, name: str, recipe_path: Path, index: int, total: int) -> None: ...
    def run_finished(self, outcome: RunOutcome) -> None: ...
    def runs_done(self, outcomes: Sequence[RunOutcome]) -> None: ...
    def build_stage(self, stage: str) -> None: ...
    def site_built(self, html_dir: Path) -> None: ...


def analyze_bundle(bundle: Path, manifest: Manifest) -> str | None:
    """Analyse a finished run's bundle and write analysis.json; the error text if analysis failed."""
    if manifest.status is not RunStatus.ok:
        return None
    try:
        write_analysis(bundle, analyze(bundle, manifest, read_capture(bundle, manifest)))
    except ReportgenError as exc:
        write_analysis_error(bundle, str(exc))  # the page says why it has no analysis
        return str(exc)
    return None


def _selected(recipe: Recipe, path: Path, only: Collection[str] | None) -> list[Variant | None]:
    """The recipe's variants to run: all, or those named in `only` (a recipe without variants runs as is)."""
    if not recipe.variants:
        return [None]
    if not only:
        return list(recipe.variants)
    names = [v.name for v in recipe.variants]
    unknown = sorted(set(only) - set(names))
    chosen = [v for v in recipe.variants if v.name in only]
    if unknown and not chosen:
        raise RecipeError(
            f"recipe {recipe.name!r} has no variant {', '.join(map(repr, unknown))}; expected one of {', '.join(names)}",
            path=path,
        )
    return list(chosen)


def analyze_missing(results_dir: Path) -> list[Path]:
    """Analyse the successful bundles that have no analysis.json yet (e.g. a run analysed elsewhere
    failed, or only its trace was copied in); returns them. A failure stays on the bundle's page."""
    done = []
    for bundle in iter_bundles(results_dir) if results_dir.is_dir() else []:
        if (bundle / ANALYSIS_FILE).is_file():
            continue
        try:
            manifest = read_manifest(bundle)
        except ReportgenError:
            continue  # the site shows an unreadable bundle as such
        if manifest.status is RunStatus.ok and manifest.trace_file is not None:
            error = analyze_bundle(bundle, manifest)
            if error is not None:  # the page says why, too
                print(f"reportgen: warning: {bundle.name} not analysed: {error}", file=sys.stderr, flush=True)
            done.append(bundle)
    return done


def run_recipes(
    paths: Sequence[Path],
    results_dir: Path,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    variants: Collection[str] | None = None,
) -> list[RunOutcome]:
    """Validate every recipe first (so a typo fails in seconds, not after an hour), then run each.

    `variants` limits recipes that have variants to the named ones.
    """
    progress = progress or PrintProgress()
    recipes = load_recipes(paths)
    runs = [
        (Path(path), recipe, variant)
        for path, recipe in zip(paths, recipes, strict=True)
        for variant in _selected(recipe, Path(path), variants)
    ]
    outcomes = []
    for index, (path, recipe, variant) in enumerate(runs, start=1):
        progress.run_started(recipe.bundle_name(variant), path, index, len(runs))
        bundle = run_recipe(recipe, path, results_dir, options, variant)
        manifest = read_manifest(bundle)
        outcome = RunOutcome(bundle, manifest, analyze_bundle(bundle, manifest))
        progress.run_finished(outcome)
        outcomes.append(outcome)
    progress.runs_done(outcomes)
    return outcomes


def build(results_dir: Path, source_dir: Path, html_dir: Path | None = None, progress: Progress | None = None) -> Path:
    """Render every bundle into `source_dir` and build the HTML site; returns the HTML dir."""
    from reportgen.site import build_site  # rendering needs Sphinx, nbformat, matplotlib; running does not

    progress = progress or PrintProgress()
    analyze_missing(results_dir)
    html = build_site(results_dir, source_dir, html_dir, on_stage=progress.build_stage)
    progress.site_built(html)
    return html


def report(
    paths: Sequence[Path],
    results_dir: Path,
    source_dir: Path,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    variants: Collection[str] | None = None,
) -> int:
    """Run recipes then build the site. Exit code 0 only if every run succeeded."""
    outcomes = run_recipes(paths, results_dir, options, progress, variants)
    build(results_dir, source_dir, progress=progress)
    return 0 if all(o.ok for o in outcomes) else 1
