"""`reportgen compare A B`: headline numbers with their intervals, then the kernel-level diff that explains them.

A and B are two bundles, or two results directories (bundles paired by name). A headline metric regressed
when it moved the wrong way by more than the threshold *and* the two runs' 95 % intervals do not overlap;
`reportgen compare` exits 1 then, 0 otherwise, 2 on bad input. Each side's step times pool the runs of its
identity kept beside it (`reportgen.compare.pool`), so the intervals also cover variation between processes.
"""

from __future__ import annotations

from reportgen.compare.diff import DEFAULT_THRESHOLD, compare_bundles, compare_paths
from reportgen.compare.format import to_markdown, to_text
from reportgen.compare.previous import previous_of, refresh_comparison, refresh_comparisons

__all__ = [
    "DEFAULT_THRESHOLD",
    "compare_bundles",
    "compare_paths",
    "previous_of",
    "refresh_comparison",
    "refresh_comparisons",
    "to_markdown",
    "to_text",
]
