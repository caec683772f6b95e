"""Copy compiled modules (wrappers and kernel sources) out of a run's private Inductor cache."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from reportgen.bundle.model import ModuleFile

__all__ = ["collect_modules"]

_KERNEL_PATH = re.compile(r"^# kernel path: (\S+\.py)\s*$", re.M)
_WRAPPER_MARK = "compiled_module_main"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def collect_modules(cache_dir: Path, bundle_dir: Path) -> list[ModuleFile]:
    """Copy wrappers (`compiled_module_main` in the file) and the kernels they name into the bundle.

    With a fresh cache dir per run, every wrapper there belongs to this run; their creation order
    (mtime) is the compile order, so the forward graph precedes its backward.
    """
    if not cache_dir.is_dir():
        return []
    sources = [p for p in cache_dir.rglob("*.py") if p.is_file()]
    wrappers = sorted((p for p in sources if _WRAPPER_MARK in _read(p)), key=lambda p: (p.stat().st_mtime_ns, p.name))
    kernel_names = {Path(m).name for w in wrappers for m in _KERNEL_PATH.findall(_read(w))}
    kernels = sorted(p for p in sources if p.name in kernel_names)
    found: list[ModuleFile] = []
    for kind, paths in (("wrapper", wrappers), ("kernel", kernels)):
        dest_dir = bundle_dir / "modules" / f"{kind}s"
        dest_dir.mkdir(parents=True, exist_ok=True)
        for order, src in enumerate(paths):
            dest = dest_dir / src.name
            shutil.copyfile(src, dest)
            found.append(
                ModuleFile(
                    path=dest.relative_to(bundle_dir).as_posix(), kind=kind, order=order, size_bytes=dest.stat().st_size
                )
            )
    return found
