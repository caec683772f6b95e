"""Static checks of `module.path:callable` references: the module exists and binds the name.

Nothing is imported: modules are found with `PathFinder.find_spec` step by step (next to the
recipe first, then on `sys.path`), and Python sources are read with `ast`.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator, Sequence
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

__all__ = ["bound_names", "check_reference", "find_module_spec", "reference_warning"]

_EXTERNAL_PREFIXES = ("timm", "torchvision")
_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)


def check_reference(ref: str, *, field: str, search_dir: Path) -> str | None:
    """What is wrong with a `module.path:callable` reference, or None when it looks fine.

    `timm:` and `torchvision:` references, compiled modules and modules whose names cannot
    be listed statically (``from x import *``, module ``__getattr__``) are accepted as they are.

    :param ref: the reference, e.g. ``models:TinyMLP``
    :param field: the recipe key, for the message (``model.ref``)
    :param search_dir: the recipe's directory, searched before `sys.path`
    """
    module, _, name = ref.partition(":")
    if not name or module in _EXTERNAL_PREFIXES:
        return None
    spec = find_module_spec(module, search_dir)
    if spec is None:
        return f"{field}: cannot find module '{module}' (looked next to the recipe and on sys.path)"
    if spec.origin is None or not spec.origin.endswith(".py") or not Path(spec.origin).is_file():
        return None
    shown = _display_path(spec.origin)
    try:
        tree = ast.parse(Path(spec.origin).read_bytes(), filename=spec.origin)
    except OSError:
        return None
    except (SyntaxError, ValueError) as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
        reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        return f"{field}: module '{module}' ({shown}) cannot be parsed{where}: {reason}"
    names = bound_names(tree)
    if name in names or "*" in names or "__getattr__" in names:
        return None
    return f"{field}: module '{module}' ({shown}) defines no '{name}'; expected a factory function or nn.Module class"


def reference_warning(ref: str, *, field: str, search_dir: Path) -> str | None:
    """Why a valid reference deserves a second look, or None: one into Python's standard library
    (`os`, `subprocess`, `builtins`, `shutil`, `importlib`, ...) names no model but runs whatever it is
    given. A module of the user's next to the recipe, even one named like the standard library's, is fine."""
    module = ref.partition(":")[0]
    if module.split(".")[0] not in sys.stdlib_module_names:
        return None
    spec = find_module_spec(module, search_dir)
    origin = Path(spec.origin).resolve() if spec is not None and spec.origin and spec.has_location else None
    if origin is not None and origin.is_relative_to(search_dir.resolve()):
        return None
    return (
        f"{field}: {ref!r} is in Python's standard library, not a model library or a module of yours; "
        "running this recipe calls it with the recipe's arguments (see the docs' Security and trust page)"
    )


def find_module_spec(module: str, search_dir: Path) -> ModuleSpec | None:
    """Find a module without importing it or its parent packages.

    :param module: a dotted module name
    :param search_dir: searched before `sys.path` for the top-level package
    """
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    search: Sequence[str] | None = [str(search_dir.absolute()), *sys.path]
    spec: ModuleSpec | None = None
    for depth in range(1, len(parts) + 1):
        if search is None:
            return None
        fullname = ".".join(parts[:depth])
        spec = _find_spec(fullname, list(search), top_level=depth == 1)
        if spec is None:
            return None
        search = spec.submodule_search_locations
    return spec


def _find_spec(fullname: str, search: list[str], *, top_level: bool) -> ModuleSpec | None:
    """PathFinder first; then the other meta-path finders (builtins, editable installs)."""
    try:
        spec = PathFinder.find_spec(fullname, search)
        if spec is not None:
            return spec
        for finder in sys.meta_path:
            if finder is PathFinder or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, None if top_level else search)
            if spec is not None:
                return spec
    except Exception:  # a third-party finder may fail in any way; treat it as "not found"
        return None
    return None


def bound_names(tree: ast.Module) -> frozenset[str]:
    """Names bound at a module's top level (``*`` when it star-imports).

    Statements inside top-level ``if``/``try``/``with``/loops count; function and class bodies do not.
    """
    return frozenset(_iter_bound(tree.body))


def _iter_bound(statements: list[ast.stmt]) -> Iterator[str]:
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield statement.name
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                yield alias.asname or alias.name.split(".")[0]
        elif isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                yield from _iter_target_names(target)
        elif isinstance(statement, _BLOCKS):
            yield from _iter_block(statement)


def _iter_block(statement: ast.stmt) -> Iterator[str]:
    """Names bound in the bodies of a top-level compound statement."""
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        yield from _iter_target_names(statement.target)
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            if item.optional_vars is not None:
                yield from _iter_target_names(item.optional_vars)
    for body in ("body", "orelse", "finalbody"):
        yield from _iter_bound(getattr(statement, body, []))
    for handler in getattr(statement, "handlers", []):
        if handler.name:
            yield handler.name
        yield from _iter_bound(handler.body)


def _iter_target_names(target: ast.expr) -> Iterator[str]:
    """Names an assignment target binds (not attributes or subscripts)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Starred):
        yield from _iter_target_names(target.value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _iter_target_names(element)


def _display_path(origin: str) -> str:
    """The path relative to the working directory when it lies below it."""
    try:
        relative = os.path.relpath(origin)
    except ValueError:
        return origin
    return origin if relative.startswith("..") else relative
