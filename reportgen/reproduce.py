"""`reportgen reproduce`: re-run a bundle's recipe (and variant) from the bundle's own files, compare numbers.

The bundle's recipe.yaml (and the local modules it imports, when they are still found next to the
original recipe file) are staged under `<results>/.reproduce/<bundle>/`, which is where the new run's
manifest points; the new bundle lands in `<results>/<bundle>/` and is analysed like `reportgen run` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle import RECIPE_FILE, Manifest, RunStatus, read_manifest, read_recipe_text
from reportgen.errors import BundleError, RecipeError
from reportgen.pipeline import run_variant, select_variant
from reportgen.recipe import find_local_modules, load_recipe
from reportgen.render import Headline, comparison_table
from reportgen.run import RunOptions

__all__ = ["STAGING_DIR", "Reproduction", "reproduce", "stage_recipe"]

STAGING_DIR = ".reproduce"

Notify = Callable[[str], None]


@dataclass(frozen=True)
class Reproduction:
    """A bundle and its re-run.

    :param original: the reproduced bundle's manifest
    :param bundle: the new bundle's directory
    :param manifest: the new bundle's manifest
    :param analysis_error: why analysing the new bundle failed, if it did
    """

    original: Manifest
    bundle: Path
    manifest: Manifest
    analysis_error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the new run succeeded."""
        return self.manifest.status is RunStatus.ok

    def table(self) -> str:
        """Original and new headline numbers side by side."""
        return comparison_table(Headline.from_manifest(self.original), Headline.from_manifest(self.manifest))


def stage_recipe(bundle_dir: Path, original: Manifest, work_dir: Path, notify: Notify = print) -> Path:
    """Write the bundle's recipe.yaml and the local modules it imports into `work_dir`.

    :returns: the staged recipe file
    :raises BundleError: when the bundle has no recipe.yaml
    """
    recipe_yaml = read_recipe_text(bundle_dir)
    if recipe_yaml is None:
        raise BundleError(f"missing {RECIPE_FILE}", path=bundle_dir, hint="re-run the recipe with `reportgen run`")
    work_dir.mkdir(parents=True, exist_ok=True)
    recipe_path = work_dir / RECIPE_FILE
    recipe_path.write_text(recipe_yaml, encoding="utf-8")
    modules = find_local_modules(original.recipe, original.recipe_path)
    for module in modules.found:
        path = work_dir / module.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module.source, encoding="utf-8")
    for name in modules.missing:
        notify(f"note: module '{name}' was not found next to {original.recipe_path}; it must be importable")
    return recipe_path


def reproduce(
    bundle_dir: Path, results_dir: Path, options: RunOptions | None = None, notify: Notify = print
) -> Reproduction:
    """Re-run the recipe (and variant) of the bundle at `bundle_dir` into `results_dir/<bundle name>/`.

    :raises BundleError: when the bundle is unreadable, or the new bundle would replace it
    """
    original = read_manifest(bundle_dir)
    if (results_dir / original.name).resolve() == bundle_dir.resolve():
        raise BundleError(
            "the new bundle would replace the one being reproduced", path=bundle_dir, hint="pass another -o"
        )
    recipe_path = stage_recipe(bundle_dir, original, results_dir / STAGING_DIR / original.name, notify)
    recipe = load_recipe(recipe_path)
    try:
        variant = select_variant(recipe, original.variant, recipe_path)
    except RecipeError as exc:
        raise BundleError(f"the bundle's recipe has no variant '{original.variant}'", path=recipe_path) from exc
    notify(f"reproducing {original.name} ({bundle_dir})")
    outcome = run_variant(recipe, recipe_path, results_dir, variant, options)
    manifest = outcome.manifest
    notify(f"{manifest.name}: {manifest.status.value} in {manifest.wall_time_s:.1f} s -> {outcome.bundle}")
    if outcome.analysis_error:
        notify(f"{manifest.name}: analysis failed: {outcome.analysis_error}")
    return Reproduction(
        original=original, bundle=outcome.bundle, manifest=manifest, analysis_error=outcome.analysis_error
    )
