"""A bundle's file names and layout: every name a stage writes or reads inside a bundle, declared once.

::

    <results>/<bundle-name>/
        manifest.json        Manifest: what ran, where, how it ended, headline numbers
        capture.json         Capture: graph and kernel benchmarks, compile diagnostics (GPU runs)
        provenance.json      Provenance: each compiled kernel's FX nodes, nn.Module path and source line
        analysis.json        Analysis: kernel tables, graphs, busy %, findings (written by analyze)
        analysis-error.txt   why the last analysis failed, if it did
        comparison.json      Comparison with the run this one replaced (written by the pipeline)
        recipe.yaml          the recipe file as the user wrote it
        trace.json.gz        torch.profiler chrome trace of the profiled compiled steps
        trace-eager.json.gz  the same of the profiled eager steps (device figures and counts of eager)
        run.log              the run's stdout + stderr, scrubbed of secrets
        graphs/              profiles of each compiled graph run alone (`wrapper.py -p`)
        modules/wrappers/    compiled wrapper modules, one per graph
        modules/kernels/     kernel modules
        recipe_modules/      the recipe's own Python modules (from next to the recipe file), redacted
    <results>/.history/<bundle-name>/<run id>/   earlier runs of that bundle, each a whole bundle
    <results>/.reportgen-history.sqlite           the history index (a cache, rebuilt from the bundles)
    <results>/.damaged/<bundle-name>-<time>/      a replaced directory that was no readable bundle, kept as it was
"""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = [
    "ANALYSIS_ERROR_FILE",
    "ANALYSIS_FILE",
    "CAPTURE_FILE",
    "COMPARISON_FILE",
    "DAMAGED_DIR",
    "EAGER_TRACE_FILE",
    "GRAPHS_DIR",
    "HISTORY_DIR",
    "HISTORY_INDEX_FILE",
    "LOCKS_DIR",
    "LOG_FILE",
    "MANIFEST_FILE",
    "MODULES_DIR",
    "PROVENANCE_FILE",
    "RECIPE_FILE",
    "RECIPE_MODULES_DIR",
    "SHAPES_TRACE_FILE",
    "TRACE_FILE",
    "module_dir",
]

MANIFEST_FILE = "manifest.json"
LOCKS_DIR = ".locks"
"""Beside the bundles, in the results directory: one lock file per bundle name (`bundle.lock`)."""
CAPTURE_FILE = "capture.json"
ANALYSIS_FILE = "analysis.json"
PROVENANCE_FILE = "provenance.json"
ANALYSIS_ERROR_FILE = "analysis-error.txt"
COMPARISON_FILE = "comparison.json"
RECIPE_FILE = "recipe.yaml"
TRACE_FILE = "trace.json.gz"
EAGER_TRACE_FILE = "trace-eager.json.gz"
SHAPES_TRACE_FILE = "trace-shapes.json.gz"
"""One compiled step recorded with its ops' shapes (`record_shapes=True`): what the FLOP counts read. Kept apart
from the profiled steps, whose timing the shapes' recording would slow."""
LOG_FILE = "run.log"
GRAPHS_DIR = "graphs"
MODULES_DIR = "modules"
HISTORY_DIR = ".history"
"""Inside a results directory: earlier runs of each bundle, `<bundle-name>/<run id>/`."""
DAMAGED_DIR = ".damaged"
"""Inside a results directory: directories a run replaced that held no readable manifest.json (a damaged bundle,
or someone's files), moved here as `<bundle-name>-<UTC time>/` instead of being deleted."""
HISTORY_INDEX_FILE = ".reportgen-history.sqlite"
"""Inside a results directory: the history index over its bundles (`reportgen.history`)."""
RECIPE_MODULES_DIR = "recipe_modules"
"""The Python modules the recipe imports from next to its file, copied (redacted) by the run."""


def module_dir(kind: str) -> str:
    """Bundle path of the directory holding compiled modules of `kind`: `modules/wrappers`, `modules/kernels`."""
    return str(PurePosixPath(MODULES_DIR) / f"{kind}s")
