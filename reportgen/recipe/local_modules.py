"""The Python modules a recipe imports from next to its file (its `module:callable` references)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reportgen.recipe.model import Recipe

__all__ = ["LocalModule", "LocalModules", "find_local_modules", "read_local_modules"]


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
    recipe_path = Path(recipe_path)
    if not recipe_path.is_absolute():
        recipe_path = (base_dir or Path.cwd()) / recipe_path
    if not recipe_path.is_file():
        return LocalModules(recipe_dir=None, missing=tuple(_module_names(recipe)))
    return read_local_modules(recipe, recipe_path.parent, lambda relative: _read(recipe_path.parent / relative))


def read_local_modules(recipe: Recipe, where: Path, read: Callable[[str], str | None]) -> LocalModules:
    """The recipe's modules as `read` finds them: it gets a path like `pkg/models.py` and returns the
    module's text, or None when it has none (e.g. reading a bundle's copies, confined to the bundle).

    :param where: the directory `read` reads from, reported as `LocalModules.recipe_dir`
    """
    found, missing = [], []
    for name in _module_names(recipe):
        relative = str(PurePosixPath(*name.split(".")).with_suffix(".py"))
        source = read(relative)
        if source is None:
            missing.append(name)
        else:
            found.append(LocalModule(path=relative, source=source))
    return LocalModules(recipe_dir=where, found=tuple(found), missing=tuple(missing))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
