"""`reportgen reproduce`: re-run a bundle's recipe (and variant) from the bundle's own files, compare numbers.

The bundle's recipe.yaml (and the local modules it imports, when they are still found next to the
original recipe file) are staged under `<results>/.reproduce/<bundle>/`, which is where the new run's
manifest points; the new bundle lands in `<results>/<bundle>/` and is analysed like `reportgen run` does.

The bundle may come from elsewhere: its name is checked (`bundle.names`) before anything is written, and every
file staged lands inside `<results>/.reproduce/<bundle>/` (no absolute path, no `..`, no link followed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reportgen.bundle import RECIPE_FILE, Manifest, RunStatus, read_manifest, read_recipe_text
from reportgen.console import show
from reportgen.errors import BundleError, RecipeError
from reportgen.pipeline import run_variant, select_variant
from reportgen.recipe import find_local_modules, load_recipe
from reportgen.render import Headline, comparison_table
from reportgen.run import RunOptions

__all__ = ["STAGING_DIR", "Reproduction", "reproduce", "stage_recipe"]

STAGING_DIR = ".reproduce"
"""Inside the results directory `-o`: `<bundle>/` holds the staged recipe and its local modules."""

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


def _write_inside(root: Path, relative: str, text: str) -> None:
    """Write `text` to `root/relative`, which must stay inside `root`: a relative path without `..`, and no
    part of it a symbolic link (a link left at the file itself is replaced, not written through)."""
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or any(part in ("..", ".", "") for part in parts) or ":" in parts[0]:
        raise BundleError(f"{relative!r} would be written outside {root}", path=root, hint="the bundle is not valid")
    path = root
    for part in parts[:-1]:
        path = path / part
        if path.is_symlink():
            raise BundleError(f"{relative!r}: {path} is a symbolic link, not followed", path=root)
        path.mkdir(exist_ok=True)
    path = path / parts[-1]
    if path.is_symlink():
        path.unlink()
    path.write_text(text, encoding="utf-8")


def _staging_dir(results_dir: Path, name: str) -> Path:
    """`results_dir/.reproduce/<name>` (`name` a bundle name, as `Manifest` validates it), created; refused when it would lead
    outside `results_dir` (a link)."""
    work_dir = results_dir / STAGING_DIR / name
    for path in (results_dir / STAGING_DIR, work_dir):
        if path.is_symlink():
            raise BundleError("a symbolic link, not followed", path=path, hint="remove it")
    work_dir.mkdir(parents=True, exist_ok=True)
    if not work_dir.resolve().is_relative_to(results_dir.resolve()):
        raise BundleError("leads outside the results directory", path=work_dir, hint="pass another -o")
    return work_dir


def stage_recipe(bundle_dir: Path, original: Manifest, work_dir: Path, notify: Notify = show) -> Path:
    """Write the bundle's recipe.yaml and the local modules it imports into `work_dir` (nothing outside it).

    :returns: the staged recipe file
    :raises BundleError: when the bundle has no recipe.yaml, or a module's path leads outside `work_dir`
    """
    recipe_yaml = read_recipe_text(bundle_dir)
    if recipe_yaml is None:
        raise BundleError(f"missing {RECIPE_FILE}", path=bundle_dir, hint="re-run the recipe with `reportgen run`")
    modules = find_local_modules(original.recipe, original.recipe_path)
    work_dir.mkdir(parents=True, exist_ok=True)
    _write_inside(work_dir, RECIPE_FILE, recipe_yaml)
    for module in modules.found:
        _write_inside(work_dir, module.path, module.source)
    for name in modules.missing:
        notify(f"note: module '{name}' was not found next to {original.recipe_path}; it must be importable")
    return work_dir / RECIPE_FILE


def reproduce(
    bundle_dir: Path, results_dir: Path, options: RunOptions | None = None, notify: Notify = show
) -> Reproduction:
    """Re-run the recipe (and variant) of the bundle at `bundle_dir` into `results_dir/<bundle name>/`.

    :raises BundleError: when the bundle is unreadable, or the new bundle would replace it
    """
    original = read_manifest(bundle_dir)
    name = original.name  # a bundle name: `Manifest` refuses any other as it is read
    if (results_dir / name).resolve() == bundle_dir.resolve():
        raise BundleError(
            "the new bundle would replace the one being reproduced", path=bundle_dir, hint="pass another -o"
        )
    recipe_path = stage_recipe(bundle_dir, original, _staging_dir(results_dir, name), notify)
    recipe = load_recipe(recipe_path)
    try:
        variant = select_variant(recipe, original.variant, recipe_path)
    except RecipeError as exc:
        raise BundleError(f"the bundle's recipe has no variant {original.variant!r}", path=recipe_path) from exc
    if (results_dir / recipe.bundle_name(variant)).resolve() == bundle_dir.resolve():
        raise BundleError(
            "the new bundle would replace the one being reproduced", path=bundle_dir, hint="pass another -o"
        )
    notify(f"reproducing {original.name} ({bundle_dir})")
    outcome = run_variant(recipe, recipe_path, results_dir, variant, options)
    manifest = outcome.manifest
    notify(f"{manifest.name}: {manifest.status.value} in {manifest.wall_time_s:.1f} s -> {outcome.bundle}")
    if outcome.analysis_error:
        notify(f"{manifest.name}: analysis failed: {outcome.analysis_error}")
    return Reproduction(
        original=original, bundle=outcome.bundle, manifest=manifest, analysis_error=outcome.analysis_error
    )
