"""``perf-trend``: a bundle's trend chart over its kept runs (the history index of its results directory)."""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.typing import OptionSpec

from reportgen.bundle import Bundle, RunRecord
from reportgen.history import HistoryIndex, kept_runs_of
from reportgen.sphinx_ext.assets import CACHE_DIR
from reportgen.sphinx_ext.directives import BundleDirective, RenderError
from reportgen.sphinx_ext.locate import bundle_files

__all__ = ["PerfTrend"]


def _runs(bundle: Bundle, build_dir: Path) -> list[RunRecord]:
    """The bundle's kept runs, oldest first. The index lives in Sphinx's build directory, one per results
    directory: a docs build writes nothing into the host's source tree (nor into the results)."""
    results = bundle.path.parent.resolve()
    key = hashlib.sha256(str(results).encode()).hexdigest()[:16]
    build_dir.mkdir(parents=True, exist_ok=True)
    with HistoryIndex(results, build_dir / f"history-{key}.sqlite") as index:
        index.update()
        return index.runs(name=bundle.manifest.name)


def _run_files(bundle: Bundle) -> list[Path]:
    """The files the index reads of each run of the bundle (the latest and the kept ones): a new run rewrites
    the latest's manifest, so these say when the trend changed. Files only: Sphinx takes a directory (or a
    missing file) for a changed dependency, and would read the page again on every build."""
    return [file for run in (bundle.path, *kept_runs_of(bundle.path)) for file in bundle_files(run, None)]


def _draw(runs: list[RunRecord], cache: Path) -> Path:
    """The chart in the build's cache, named by its runs; drawn once, then renamed into place (parallel
    readers may draw the same chart)."""
    key = hashlib.sha256("\0".join(r.model_dump_json() for r in runs).encode()).hexdigest()[:20]
    path = cache / f"trend-{key}.png"
    if not path.is_file():
        from reportgen.render import trend_chart  # matplotlib: loaded when a chart is drawn

        tmp = trend_chart(runs, cache / f".trend-{key}-{secrets.token_hex(4)}.png")
        tmp.replace(path)
    return path


class PerfTrend(BundleDirective):
    """A bundle's step times, speedup, compile time, peak memory, busy % and kernel count over its kept runs."""

    option_spec: ClassVar[OptionSpec] = {
        "width": directives.length_or_percentage_or_unitless,
        "alt": directives.unchanged,
    }

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """An image node of the trend chart; a warning box with fewer than two runs."""
        self._note(_run_files(bundle))
        runs = _runs(bundle, Path(self.env.doctreedir) / CACHE_DIR)
        if len(runs) < 2:  # a new recipe: nothing is wrong, the trend starts with its second run
            note = nodes.note("", nodes.paragraph(text=f"A trend of {self.arguments[0]} shows from its second run on."))
            self.set_source_info(note)
            return [note]
        try:
            path = _draw(runs, Path(self.env.doctreedir) / CACHE_DIR)
        except (OSError, ValueError) as exc:
            raise RenderError(f"perf-trend: cannot draw the trend of {self.arguments[0]!r}: {exc}", "chart") from exc
        return [self.image(path, f"Trend over {len(runs)} runs: {bundle.manifest.recipe.display_title}")]
