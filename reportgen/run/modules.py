"""Copy compiled modules (wrappers and kernel sources) into the bundle.

The child copies what Inductor loaded in its process (`run.inductor.loaded_modules`) before it exits
(Inductor may purge its files at exit); the parent falls back to scanning the run's private cache dir.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from reportgen.bundle import ModuleFile, module_dir

__all__ = ["cached_source", "copy_modules", "named_kernels", "scan_cache_dir"]

_KERNEL_PATH = re.compile(r"^# kernel path: (\S+\.py)\s*$", re.M)
_WRAPPER_MARK = "compiled_module_main"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def named_kernels(files: Iterable[Path]) -> list[str]:
    """File names of the kernels the wrappers among `files` name (`# kernel path:`) that exist, sorted: what
    `copy_modules` keeps of them. A kernel's file name holds its source's hash, so two processes' lists are equal when they ran
    the same kernels."""
    return sorted({m.name for m in _named_by_wrappers((p, _read(p)) for p in files) if m.is_file()})


def _named_by_wrappers(files: Iterable[tuple[Path, str]]) -> set[Path]:
    """The kernel paths that the wrappers (files holding `compiled_module_main`) among `(path, text)` name.

    A wrapper read from Inductor's FX graph cache names its kernels where the cache was filled; in a cache filled
    at another path (copied, restored by CI, carried to another machine) such a kernel is looked up by name in the
    wrapper's own cache (`<cache>/<xx>/wrapper.py`, `cached_source`). On an H200 (torch 2.11), resnet50 on a cache
    carried from another machine's `/tmp/wc/...` kept 1 of its 164 kernels without this."""
    named: set[Path] = set()
    for path, text in files:
        if _WRAPPER_MARK not in text:
            continue
        cache = path.parent.parent if len(path.parent.name) == 2 else None  # only in Inductor's layout
        for kernel in map(Path, _KERNEL_PATH.findall(text)):
            if not kernel.is_file():
                kernel = cached_source(kernel.name, cache) or kernel
            named.add(kernel)
    return named


def copy_modules(files: Iterable[Path], bundle_dir: Path) -> list[ModuleFile]:
    """Copy wrappers (files holding `compiled_module_main`) and the kernels they name.

    `files` come in load order, so wrappers keep their compile order (forward before backward).
    A kernel a wrapper names by its `# kernel path:` is copied from that path when `files` lack it:
    kernels built by the compile workers need not be in the parent's module cache (torch 2.11 listed
    9 of mixnet_l's ~500), nor those of a graph read from the FX graph cache (`_named_by_wrappers`). Kernel
    files no wrapper names (e.g. autotuning benchmarks) are left out.
    """
    paths = list(files)
    texts = {p: _read(p) for p in paths}
    wrappers = [p for p in paths if _WRAPPER_MARK in texts[p]]
    named = _named_by_wrappers((w, texts[w]) for w in wrappers)
    by_name = {p.name: p for p in paths if p not in wrappers}
    by_name.update({p.name: p for p in named if p.name not in by_name and p.is_file()})
    kernels = sorted((by_name[p.name] for p in named if p.name in by_name), key=lambda p: p.name)
    kernels = list(dict.fromkeys(kernels))
    found: list[ModuleFile] = []
    groups: tuple[tuple[Literal["wrapper", "kernel"], list[Path]], ...] = (("wrapper", wrappers), ("kernel", kernels))
    for kind, group in groups:
        dest_dir = bundle_dir / module_dir(kind)
        dest_dir.mkdir(parents=True, exist_ok=True)
        for order, src in enumerate(group):
            dest = dest_dir / src.name
            shutil.copyfile(src, dest)
            rel = dest.relative_to(bundle_dir).as_posix()
            found.append(ModuleFile(path=rel, kind=kind, order=order, size_bytes=dest.stat().st_size))
    return found


def scan_cache_dir(cache_dir: Path, bundle_dir: Path) -> list[ModuleFile]:
    """Fallback: every `.py` under a run's private Inductor cache, wrappers ordered by mtime."""
    if not cache_dir.is_dir():
        return []
    files = sorted((p for p in cache_dir.rglob("*.py") if p.is_file()), key=lambda p: (p.stat().st_mtime_ns, p.name))
    return copy_modules(files, bundle_dir)


def cached_source(name: str, cache_dir: Path | None) -> Path | None:
    """The file `name` in a live Inductor cache (`<cache>/<name[1:3]>/<name>`, or any one-level subdir).

    Importing a kernel from there, not from its bundle copy, lets Triton's autotuner find the
    `.best_config` the run wrote beside it: the same config as the run, and no second tuning.
    """
    if cache_dir is None or not cache_dir.is_dir():
        return None
    usual = cache_dir / name[1:3] / name
    if usual.is_file():
        return usual
    return next((p for p in cache_dir.glob(f"*/{name}") if p.is_file()), None)
