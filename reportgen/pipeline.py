"""The whole pipeline, one line per stage: recipe → run → bundle → analyze → render → site."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from reportgen.analyze import analyze
from reportgen.bundle import (
    ANALYSIS_FILE,
    ANALYSIS_REVISION,
    Manifest,
    RunRecord,
    RunStatus,
    analysis_revision,
    bundle_lock,
    iter_bundles,
    merge_results,
    read_analysis,
    read_capture,
    read_manifest,
    write_analysis,
    write_analysis_error,
)
from reportgen.compare import refresh_comparison, refresh_comparisons
from reportgen.errors import RecipeError, ReportgenError
from reportgen.escape import terminal_text
from reportgen.matrix import MatrixOptions, MatrixRun, run_matrix
from reportgen.progress import Progress, RunOutcome, SilentProgress
from reportgen.recipe import Recipe, Variant, load_recipe, load_recipes
from reportgen.run import RunOptions, run_recipe

__all__ = [
    "analyze_bundle",
    "analyze_missing",
    "build",
    "matrix_runs",
    "report",
    "run_one",
    "run_recipe_file",
    "run_recipes",
    "run_variant",
    "select_variant",
    "variant_recipe",
]

logger = logging.getLogger(__name__)


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


def select_variant(recipe: Recipe, name: str | None, path: Path) -> Variant | None:
    """The recipe's variant called `name` (None: the recipe as written).

    :raises RecipeError: when the recipe has no such variant
    """
    if name is None:
        return None
    chosen = _selected(recipe, path, [name])
    return chosen[0]


def variant_recipe(path: Path, name: str | None) -> Recipe:
    """The recipe at `path` as its variant (or sweep point) `name` runs it; as written when `name` is None.

    :raises RecipeError: when the file is not a valid recipe, or has no such variant
    """
    recipe = load_recipe(path)
    chosen = select_variant(recipe, name, path)
    return recipe.for_variant(chosen) if chosen is not None else recipe


def _selected(recipe: Recipe, path: Path, only: Collection[str] | None) -> list[Variant | None]:
    """The recipe's variants (or sweep points) to run: all, or those named in `only` (a recipe without either runs
    as is)."""
    runs = recipe.runs
    if not runs:
        return [None]
    if not only:
        return list(runs)
    names = [v.name for v in runs]
    unknown = sorted(set(only) - set(names))
    chosen = [v for v in runs if v.name in only]
    if unknown and not chosen:
        raise RecipeError(
            f"recipe {recipe.name!r} has no variant {', '.join(map(repr, unknown))}; expected one of {', '.join(names)}",
            path=path,
        )
    return list(chosen)


def _analysed(bundle: Path) -> bool:
    """Whether the bundle holds an analysis of today's revision (an unreadable one counts as done:
    the site shows why). The revision is read from the file's head: a rebuild of hundreds of bundles
    does not parse their analyses."""
    if not (bundle / ANALYSIS_FILE).is_file():
        return False
    if (revision := analysis_revision(bundle)) is not None:
        return revision >= ANALYSIS_REVISION
    try:
        analysis = read_analysis(bundle)
    except ReportgenError:
        return True
    return analysis is not None and not analysis.stale


def analyze_missing(results_dir: Path) -> list[Path]:
    """Analyse the successful bundles that have no analysis.json yet, or one of an earlier revision
    (e.g. a run analysed elsewhere failed, only its trace was copied in, or reportgen was upgraded);
    returns them. A failure stays on the bundle's page. A bundle a run is rewriting is left to that run."""
    done = []
    for bundle in iter_bundles(results_dir) if results_dir.is_dir() else []:
        if not _needs_analysis(bundle):
            continue
        try:
            with bundle_lock(results_dir, bundle.name, timeout_s=0):
                error = analyze_bundle(bundle, read_manifest(bundle)) if _needs_analysis(bundle) else None
        except ReportgenError as exc:
            print(terminal_text(f"reportgen: warning: {bundle.name} not analysed: {exc}"), file=sys.stderr, flush=True)
            continue
        if error is not None:  # the page says why, too
            print(
                terminal_text(f"reportgen: warning: {bundle.name} not analysed: {error}"), file=sys.stderr, flush=True
            )
        done.append(bundle)
    return done


def _needs_analysis(bundle: Path) -> bool:
    """A readable bundle of a successful run with a trace and no analysis of today's revision."""
    if _analysed(bundle):
        return False
    try:
        manifest = read_manifest(bundle)
    except ReportgenError:
        return False  # the site shows an unreadable bundle as such
    return manifest.status is RunStatus.ok and manifest.trace_file is not None


def run_variant(
    recipe: Recipe, recipe_path: Path, results_dir: Path, variant: Variant | None, options: RunOptions | None = None
) -> RunOutcome:
    """Run one recipe variant into `results_dir/<bundle name>/` and analyse it: what `reportgen run`,
    `reportgen reproduce` and the reproducer notebook all do. Runs of one bundle take turns
    (`bundle.bundle_lock`): a second waits for the first, then replaces its bundle (kept in the history);
    the new bundle keeps its comparison with the run before it."""
    name = recipe.bundle_name(variant)
    with bundle_lock(results_dir, name):
        bundle = run_recipe(recipe, recipe_path, results_dir, options, variant)
        manifest = read_manifest(bundle)
        started = time.monotonic()
        error = analyze_bundle(bundle, manifest)
        analysis_s = round(time.monotonic() - started, 3)
        refresh_comparison(results_dir, kept_runs(results_dir, name).get(name, []))
    return RunOutcome(bundle, manifest, error, analysis_s=analysis_s)


def run_recipe_file(
    recipe_path: Path, results_dir: Path, variant: str | None = None, options: RunOptions | None = None
) -> RunOutcome:
    """Load the recipe at `recipe_path` and run its variant called `variant` (see `run_variant`)."""
    recipe = load_recipe(recipe_path)
    return run_variant(recipe, recipe_path, results_dir, select_variant(recipe, variant, recipe_path), options)


def run_recipes(
    paths: Sequence[Path],
    results_dir: Path,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    variants: Collection[str] | None = None,
    matrix: MatrixOptions | None = None,
) -> list[RunOutcome]:
    """Validate every recipe first (so a typo fails in seconds, not after an hour), then run them as `matrix`
    says (`reportgen.matrix`: over the host's GPUs, a shard, on Ray; by default one at a time, or one per GPU
    on a host with several).

    `variants` limits recipes that have variants to the named ones.
    """
    progress = progress or SilentProgress()
    runs = matrix_runs(paths, variants)
    matrix = matrix or MatrixOptions()
    outcomes = run_matrix(runs, results_dir, options or RunOptions(), matrix, run_one, progress)
    if matrix.executor != "local":  # a remote run had no run before it where it ran: compare it here
        refresh_comparisons(results_dir, kept_runs(results_dir))
    progress.runs_done(outcomes)
    return outcomes


def matrix_runs(paths: Sequence[Path], variants: Collection[str] | None = None) -> list[MatrixRun]:
    """Every run (recipe × selected variant) of the recipes at `paths`, all validated first."""
    recipes = load_recipes(paths)
    return [
        MatrixRun(Path(path), recipe, variant)
        for path, recipe in zip(paths, recipes, strict=True)
        for variant in _selected(recipe, Path(path), variants)
    ]


def run_one(run: MatrixRun, results_dir: Path, options: RunOptions) -> RunOutcome:
    """One run of a matrix (`run_variant`); the executors call it, on this host or a remote one."""
    return run_variant(run.recipe, run.recipe_path, results_dir, run.variant, options)


def kept_runs(results_dir: Path, name: str | None = None) -> dict[str, list[RunRecord]]:
    """Every bundle's kept runs (or bundle `name`'s), oldest first, from the history index (brought up to
    date first)."""
    from reportgen.history import HistoryIndex

    with HistoryIndex(results_dir) as index:
        for problem in index.update().unreadable:
            logger.warning("left out of the history: %s", problem)
        runs: dict[str, list[RunRecord]] = {}
        for run in index.runs(name=name):
            runs.setdefault(run.name, []).append(run)
    return runs


def build(
    results: Path | Sequence[Path], source_dir: Path, html_dir: Path | None = None, progress: Progress | None = None
) -> Path:
    """Analyse what is not yet, render every bundle into `source_dir/reports/`, build the HTML site.

    Several results directories (the shards of a matrix, runs from several hosts) make one site: they are
    merged into `source_dir/_build/results` (copies, kept between builds),
    each bundle name's newest run its latest and its other runs its history. Builds of one `source_dir` take turns (`reportgen.site.build_lock`); pages and
    HTML are each replaced whole, so a killed build leaves the previous ones readable. Returns the HTML dir.
    """
    # rendering needs Sphinx, nbformat, matplotlib; running does not
    from reportgen.render import render_site_pages
    from reportgen.site import REPORTS_DIR, build_html, build_lock, default_html_dir, ensure_project, merged_results

    progress = progress or SilentProgress()
    html = html_dir if html_dir is not None else default_html_dir(source_dir)
    sources = [results] if isinstance(results, Path) else list(results)
    for source in sources:
        analyze_missing(source)
    with build_lock(source_dir):
        ensure_project(source_dir)
        results_dir = sources[0]
        if len(sources) > 1:
            progress.build_stage(f"merging {len(sources)} results directories")
            results_dir = merged_results(source_dir)
            merge_results(sources, results_dir)
        history = kept_runs(results_dir)
        refresh_comparisons(results_dir, history)
        progress.build_stage("rendering pages")
        render_site_pages(results_dir, source_dir / REPORTS_DIR, history)
        progress.build_stage("sphinx-build")
        build_html(source_dir, html)
    progress.site_built(html)
    return html


def report(
    paths: Sequence[Path],
    results_dir: Path,
    source_dir: Path,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    variants: Collection[str] | None = None,
    matrix: MatrixOptions | None = None,
) -> int:
    """Run recipes then build the site. Exit code 0 only if every run succeeded."""
    outcomes = run_recipes(paths, results_dir, options, progress, variants, matrix)
    build(results_dir, source_dir, progress=progress)
    return 0 if all(o.settled for o in outcomes) else 1
