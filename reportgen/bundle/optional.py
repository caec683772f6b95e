"""The optional files of a bundle that later stages add or read on their own: the comparison with the run
before (written by the pipeline), the provenance table (written by the run), the head of the analysis (read
by the history index)."""

from __future__ import annotations

import os
from pathlib import Path

from reportgen.bundle.comparison import Comparison
from reportgen.bundle.layout import ANALYSIS_FILE, COMPARISON_FILE, PROVENANCE_FILE
from reportgen.bundle.provenance import Provenance
from reportgen.bundle.record import AnalysisHead
from reportgen.bundle.store import _read_model, _write_text_atomic
from reportgen.errors import BundleError

__all__ = ["read_analysis_head", "read_comparison", "read_provenance", "write_comparison"]


def write_comparison(bundle_dir: Path, comparison: Comparison | None) -> None:
    """Keep the bundle's comparison with the run before it atomically (None: remove an outdated one)."""
    if comparison is None:
        (bundle_dir / COMPARISON_FILE).unlink(missing_ok=True)
    else:
        _write_text_atomic(bundle_dir / COMPARISON_FILE, comparison.model_dump_json(indent=2) + "\n")


def read_comparison(bundle_dir: Path) -> Comparison | None:
    """The bundle's comparison with the run before it; None when it has none, BundleError when it is invalid."""
    if not os.path.lexists(bundle_dir / COMPARISON_FILE):
        return None
    return _read_model(bundle_dir, COMPARISON_FILE, Comparison)


def read_analysis_head(bundle_dir: Path) -> AnalysisHead | None:
    """The few numbers of the bundle's analysis the history keeps; None without a readable analysis."""
    try:
        return (
            _read_model(bundle_dir, ANALYSIS_FILE, AnalysisHead)
            if os.path.lexists(bundle_dir / ANALYSIS_FILE)
            else None
        )
    except BundleError:
        return None


def read_provenance(bundle_dir: Path) -> Provenance | None:
    """The run's provenance.json (kernel → module and source line), if it wrote one; BundleError when invalid."""
    if not os.path.lexists(bundle_dir / PROVENANCE_FILE):
        return None
    return _read_model(bundle_dir, PROVENANCE_FILE, Provenance)
