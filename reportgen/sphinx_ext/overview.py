"""``perf-overview``: the state of every run of a results directory, as a reportgen site's front page shows it."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from reportgen.bundle import COMPARISON_FILE, iter_bundles, load_bundle, read_comparison
from reportgen.errors import BundleError
from reportgen.escape import one_line
from reportgen.render import BrokenBundle, index_entry, overview_page, redacted_bundle
from reportgen.sphinx_ext.locate import bundle_files, resolve_bundle_dir
from reportgen.sphinx_ext.myst import parse_myst

__all__ = ["PerfOverview"]

logger = logging.getLogger(__name__)


class PerfOverview(SphinxDirective):
    """One row per bundle of a results directory (failed runs first, then regressions), without links: the
    embedding project has no report pages. An unreadable bundle is counted and warned about, never the build."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        """Parse the overview of the results directory the argument names."""
        argument = self.arguments[0]
        doc_dir = Path(self.env.doc2path(self.env.docname)).parent
        results = resolve_bundle_dir(argument, doc_dir, Path(self.env.srcdir), self.config.reportgen_bundle_root)
        entries, broken = [], []
        for path in iter_bundles(results) if results.is_dir() else []:
            try:
                bundle = redacted_bundle(load_bundle(path))
                comparison = read_comparison(path)
            except BundleError as exc:
                broken.append(BrokenBundle(path.name, str(exc)))
                logger.warning(
                    one_line(f"perf-overview: cannot read bundle {path.name!r}: {exc}"),
                    location=self.get_location(),
                    type="reportgen",
                    subtype="bundle",
                )
                continue
            # Only files that exist: Sphinx reads a missing dependency as changed, and rebuilds the page every time.
            for file in [*bundle_files(path, bundle.manifest), *([path / COMPARISON_FILE] if comparison else [])]:
                self.env.note_dependency(str(file.resolve()))
            entries.append(index_entry(bundle, comparison=comparison, pages=None))
        if not results.is_dir():
            logger.warning(
                one_line(f"perf-overview: {argument!r} is no results directory"),
                location=self.get_location(),
                type="reportgen",
                subtype="bundle",
            )
        return parse_myst(overview_page(entries, broken, title=False), self)
