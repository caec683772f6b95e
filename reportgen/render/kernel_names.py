"""Display names of kernels (demangled C++ names are long; the table shows their stem)."""

from __future__ import annotations

import re

__all__ = ["short_kernel_name"]

_TEMPLATE_OR_ARGS = re.compile(r"[<(]")


def short_kernel_name(name: str) -> str:
    """A C++ kernel's name without `void`, template arguments and parameters; Triton names unchanged."""
    name = " ".join(name.split())
    if name.startswith("void "):
        name = name[5:]
    match = _TEMPLATE_OR_ARGS.search(name)
    if match is None or "::" not in name[: match.start()]:
        return name
    return name[: match.start()].strip()
