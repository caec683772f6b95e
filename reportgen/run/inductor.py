"""Inductor internals the child relies on, isolated here with fallbacks across torch versions.

Everything private (`torch._inductor.*`) that reportgen touches goes through this module, so a
change in a new torch release is fixed in one place; each accessor degrades to "nothing found"
instead of failing the run.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

__all__ = ["loaded_modules", "module_files"]


def loaded_modules() -> list[ModuleType]:
    """Modules Inductor has loaded in this process (wrappers and kernels), in load order.

    torch ≥ 2.6 keeps them in `PyCodeCache.modules` (a list); 2.5 in `PyCodeCache.cache` (a dict).
    """
    try:
        from torch._inductor.codecache import PyCodeCache
    except ImportError:
        return []
    modules = getattr(PyCodeCache, "modules", None)
    if isinstance(modules, list):
        return [m for m in modules if isinstance(m, ModuleType)]
    cache = getattr(PyCodeCache, "cache", None)
    if isinstance(cache, dict):
        return [m for m in cache.values() if isinstance(m, ModuleType)]
    return []


def module_files(modules: list[ModuleType]) -> list[Path]:
    """Existing source files of `modules`, de-duplicated, in order."""
    seen: dict[Path, None] = {}
    for module in modules:
        file = getattr(module, "__file__", None)
        if file and Path(file).is_file():
            seen.setdefault(Path(file), None)
    return list(seen)
