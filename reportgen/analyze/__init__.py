"""Analysis stage: a bundle's trace (and later its compiled modules) -> `Analysis`."""

from __future__ import annotations

from pathlib import Path

from reportgen.analyze.categories import CATEGORY_ORDER, categorize, seed_category
from reportgen.analyze.kernels import kernel_table
from reportgen.analyze.trace import Trace, load_trace
from reportgen.bundle.model import Analysis, Manifest
from reportgen.errors import AnalysisError

__all__ = [
    "CATEGORY_ORDER",
    "Trace",
    "analyze",
    "categorize",
    "kernel_table",
    "load_trace",
    "seed_category",
]


def analyze(bundle_dir: Path, manifest: Manifest) -> Analysis:
    """Analyse one bundle.

    :param bundle_dir: the bundle directory (holds `manifest.trace_file`)
    :param manifest: its manifest
    :raises AnalysisError: the run left no trace or environment, or the trace is unreadable
    """
    manifest_path = bundle_dir / "manifest.json"
    if manifest.trace_file is None:
        raise AnalysisError(
            f"run {manifest.name!r} ({manifest.status.value}) recorded no trace",
            path=manifest_path,
            hint="only runs that reached the profiled steps can be analysed",
        )
    if manifest.environment is None:
        raise AnalysisError(f"run {manifest.name!r} recorded no environment (device unknown)", path=manifest_path)
    device = manifest.environment.device
    trace = load_trace(bundle_dir / manifest.trace_file)
    profiled_steps = manifest.recipe.for_device(device).profile.profiled_steps
    return Analysis(kernels=kernel_table(trace, device, profiled_steps))
