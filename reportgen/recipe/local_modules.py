"""The Python modules a recipe imports from next to its file (its `module:callable` references)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reportgen.recipe.model import Recipe

__all__ = ["LocalModule", "LocalModules", "find_local_modules"]


@dataclass(frozen=True)
class LocalModule:
    """A Python module the recipe imports from next to its file.

    :param path: path relative to the recipe's directory, e.g. `models.py`
    :param source: the module's text
    """

    path: str
    source: str


@dataclass(frozen=True)
class LocalModules:
    """What a recipe imports from next to its file.

    :param recipe_dir: the original recipe's directory, or None when the recipe file no longer exists
    :param found: the modules found there
    :param missing: module names of `module:callable` references with no file next to the recipe
    """

    recipe_dir: Path | None
    found: tuple[LocalModule, ...] = ()
    missing: tuple[str, ...] = ()


def _module_names(recipe: Recipe) -> list[str]:
    refs = [recipe.model.ref] if recipe.model.source == "python" else []
    if recipe.inputs.factory:
        refs.append(recipe.inputs.factory)
    return list(dict.fromkeys(ref.split(":", 1)[0] for ref in refs))


def find_local_modules(recipe: Recipe, recipe_path: str | Path, base_dir: Path | None = None) -> LocalModules:
    """Look up the modules of the recipe's `module:callable` references next to the recipe file.

    :param recipe_path: where the recipe was loaded from (a bundle's `Manifest.recipe_path`)
    :param base_dir: directory a relative `recipe_path` is relative to (default: the working directory)
    """
    names = _module_names(recipe)
    recipe_path = Path(recipe_path)
    if not recipe_path.is_absolute():
        recipe_path = (base_dir or Path.cwd()) / recipe_path
    if not recipe_path.is_file():
        return LocalModules(recipe_dir=None, missing=tuple(names))
    found, missing = [], []
    for name in names:
        relative = PurePosixPath(*name.split(".")).with_suffix(".py")
        path = recipe_path.parent / relative
        try:
            found.append(LocalModule(path=str(relative), source=path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            missing.append(name)
    return LocalModules(recipe_dir=recipe_path.parent, found=tuple(found), missing=tuple(missing))
