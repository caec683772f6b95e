"""Bytecode for a run's processes where the installed libraries' own is not kept (a read-only or `-B` install).

Each process a run starts (the run's child, its graph-timing process) imports torch, Dynamo, Inductor and the
model's library: some 2,300 modules. Where their `.pyc` files are neither shipped nor writable, or
`PYTHONDONTWRITEBYTECODE` is set, every process compiles them all from source again: on a lent H200 (torch 2.11,
2026-11-27) the graph-timing process made 5,084 `compile` calls taking 12.4 s of its 64 s (cProfile), 2,292 of them
modules imported from source. There a run's processes keep their bytecode in a cache of the user's
(`PYTHONPYCACHEPREFIX`), written by the first process that imports a module and read by every later one; an install
whose bytecode sits beside its source is left as it is.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import MutableMapping
from pathlib import Path

__all__ = ["PREFIX_VARIABLE", "default_cache", "keep_bytecode"]

PREFIX_VARIABLE = "PYTHONPYCACHEPREFIX"
_NO_WRITE = "PYTHONDONTWRITEBYTECODE"


def default_cache(env: MutableMapping[str, str]) -> Path | None:
    """`$XDG_CACHE_HOME/reportgen/pycache`, else `~/.cache/reportgen/pycache`; None without a home."""
    base = env.get("XDG_CACHE_HOME") or (str(Path(env["HOME"]) / ".cache") if env.get("HOME") else None)
    return Path(base) / "reportgen" / "pycache" if base else None


def _cached_in_place(package: str) -> bool:
    """Whether `package`'s `__init__` has bytecode beside its source (found without importing it); True when the
    package is not installed (nothing to gain)."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return True
    source = Path(spec.origin)
    return (source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc").is_file()


def keep_bytecode(env: MutableMapping[str, str], cache: Path | None, package: str = "torch") -> bool:
    """Point `env`'s processes at `cache` for bytecode when `package`'s is not kept beside its source; True if it
    did. A prefix the user chose stays; the cache is made private to the user (bytecode is code it will run)."""
    if cache is None or env.get(PREFIX_VARIABLE) or sys.implementation.cache_tag is None:
        return False
    if _cached_in_place(package):
        return False
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = cache.stat()
    except OSError:
        return False
    if info.st_uid != os.getuid() or info.st_mode & 0o022:  # someone else's, or writable by others: not ours to run
        return False
    env[PREFIX_VARIABLE] = str(cache)
    env.pop(_NO_WRITE, None)
    return True
