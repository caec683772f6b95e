"""The ``perf-report``, ``perf-summary`` and ``perf-chart`` directives.

A bundle that is missing or unreadable, or a chart without data, costs one located warning
(``reportgen.bundle`` / ``reportgen.chart``, suppressible) and a warning box on the page, never the build.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.typing import OptionSpec

from reportgen.bundle import Bundle, RunStatus, iter_bundles, load_bundle, read_log_tail
from reportgen.errors import BundleError
from reportgen.escape import one_line
from reportgen.render import CHART_CLASS, redacted, redacted_bundle
from reportgen.sphinx_ext.assets import CACHE_DIR, CHART_KINDS, BundleAssets, bundle_assets, source_uri
from reportgen.sphinx_ext.locate import bundle_files, bundle_key, resolve_bundle_dir
from reportgen.sphinx_ext.myst import NO_TOC_CLASS, parse_myst, relocate_files
from reportgen.sphinx_ext.text import findings_of, kernels_of, report_text, summary_table, variants_of

__all__ = ["BundleDirective", "PerfChart", "PerfReport", "PerfSummary", "RenderError"]

logger = logging.getLogger(__name__)


class RenderError(Exception):
    """Why a directive shows a warning box instead of its content."""

    def __init__(self, message: str, subtype: str) -> None:
        message = one_line(message)  # on the page and on the terminal: it quotes the bundle
        super().__init__(message)
        self.message = message
        self.subtype = subtype


class BundleDirective(SphinxDirective):
    """A directive whose one argument is a bundle directory."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        """Render the bundle, or warn and show why not."""
        try:
            return self.render(self._load())
        except RenderError as problem:
            logger.warning(problem.message, location=self.get_location(), type="reportgen", subtype=problem.subtype)
            box = nodes.warning("", nodes.paragraph(text=problem.message))
            self.set_source_info(box)
            return [box]

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """The nodes showing `bundle`."""
        raise NotImplementedError

    def _load(self) -> Bundle:
        argument = self.arguments[0]
        doc_dir = Path(self.env.doc2path(self.env.docname)).parent
        bundle_dir = resolve_bundle_dir(argument, doc_dir, Path(self.env.srcdir), self.config.reportgen_bundle_root)
        if not bundle_dir.exists():
            self._note(bundle_files(bundle_dir, None))  # read again on every build: it updates once it appears
            raise RenderError(f"{self.name}: no bundle at {argument!r} (nothing at {bundle_dir})", "bundle")
        try:
            bundle = load_bundle(bundle_dir)
        except BundleError as exc:
            self._note(bundle_files(bundle_dir, None))
            raise RenderError(f"{self.name}: cannot read bundle {argument!r}: {exc}", "bundle") from None
        self._note(bundle_files(bundle_dir, bundle.manifest))
        return bundle

    def _note(self, files: list[Path]) -> None:
        for path in files:
            self.env.note_dependency(str(path.resolve()))

    def assets(self, bundle: Bundle) -> BundleAssets:
        """The bundle's charts and recipe copy, drawn into the build's cache on first use."""
        key = bundle_key(bundle.path, bundle_files(bundle.path, bundle.manifest))
        try:
            return bundle_assets(bundle, key, Path(self.env.doctreedir) / CACHE_DIR)
        except (OSError, ValueError) as exc:
            raise RenderError(f"{self.name}: cannot draw the charts of {self.arguments[0]!r}: {exc}", "chart") from exc

    def uri(self, path: Path) -> str:
        """`path` as an image or download URI."""
        return source_uri(path, Path(self.env.srcdir))

    def image(self, path: Path, alt: str) -> nodes.image:
        """An image node of the chart at `path`, with the ``:alt:`` and ``:width:`` options applied."""
        image = nodes.image(
            self.block_text, uri=self.uri(path), alt=self.options.get("alt", one_line(alt)), classes=[CHART_CLASS]
        )
        if "width" in self.options:
            image["width"] = self.options["width"]
        self.set_source_info(image)
        return image


class PerfReport(BundleDirective):
    """The whole report page of a bundle, its headings nested under the enclosing section."""

    option_spec: ClassVar[OptionSpec] = {"max-kernels": directives.positive_int, "no-toc": directives.flag}

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """Parse the site's report text of `bundle` and point its images at the cached charts."""
        bundle = redacted_bundle(bundle)  # bundles may come from anywhere: pages never show a credential
        assets = self.assets(bundle)
        recipe_yaml = None
        if assets.recipe is not None:
            recipe_yaml = (assets.directory / assets.recipe).read_text(encoding="utf-8")
        log_tail = None
        if bundle.manifest.status is not RunStatus.ok:
            log_tail = redacted(read_log_tail(bundle.path, bundle.manifest.log_file))
        text = report_text(
            bundle,
            assets.charts,
            recipe_yaml=recipe_yaml,
            log_tail=log_tail,
            max_kernels=self.options.get("max-kernels", 50),
        )
        tree = parse_myst(text, self)
        relocate_files(tree, {name: self.uri(assets.directory / name) for name in assets.names()})
        if "no-toc" in self.options:  # its headings become rubrics: none of them joins the host's contents
            for top in tree:
                if isinstance(top, nodes.Element):
                    top["classes"].append(NO_TOC_CLASS)
        return tree


class PerfKernels(BundleDirective):
    """The longest kernels of a bundle, or of one of its compiled graphs (`:graph:`): a sortable table."""

    option_spec: ClassVar[OptionSpec] = {"top": directives.positive_int, "graph": directives.nonnegative_int}

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """Parse the kernel table of `bundle` (or of its graph)."""
        try:
            text = kernels_of(redacted_bundle(bundle), self.options.get("top", 20), self.options.get("graph"))
        except LookupError as exc:
            raise RenderError(f"perf-kernels: {exc}", "bundle") from None
        return parse_myst(text, self)


class PerfFindings(BundleDirective):
    """What the analysis found in a bundle, one admonition per finding."""

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """Parse the findings of `bundle`."""
        return parse_myst(findings_of(redacted_bundle(bundle)), self)


class PerfVariants(BundleDirective):
    """The variants of the bundle's recipe side by side (the bundles of that recipe in its results directory)."""

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """Parse the variant table of `bundle` and its siblings."""
        siblings = []
        for path in iter_bundles(bundle.path.parent):
            try:
                sibling = bundle if path == bundle.path else load_bundle(path)
            except BundleError:
                continue
            if sibling.manifest.recipe.name == bundle.manifest.recipe.name:
                self._note(bundle_files(path, sibling.manifest))
                siblings.append(redacted_bundle(sibling))
        text = variants_of(redacted_bundle(bundle), siblings)
        if not text:
            raise RenderError(
                f"perf-variants: bundle {self.arguments[0]!r} is the only variant of its recipe in its directory",
                "bundle",
            )
        tree = parse_myst(text, self)
        for top in tree:
            if isinstance(top, nodes.Element):
                top["classes"].append(NO_TOC_CLASS)  # its kernel diffs' headings: rubrics, not the host's sections
        return tree


class PerfSummary(BundleDirective):
    """A table of a bundle's status, device, torch version, step times, speedup and compile time."""

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """Parse the summary table of `bundle`."""
        return parse_myst(summary_table(bundle), self)


class PerfChart(BundleDirective):
    """One chart of a bundle, as an image."""

    option_spec: ClassVar[OptionSpec] = {
        "kind": directives.unchanged,  # checked in `run`: one message for a missing or a wrong value
        "width": directives.length_or_percentage_or_unitless,
        "alt": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        """Check that ``:kind:`` is given, then render."""
        kind = self.options.get("kind")
        if kind not in CHART_KINDS:
            got = "none was given" if kind is None else f"got {kind!r}"
            raise self.error(f"perf-chart needs a :kind: option, one of {', '.join(CHART_KINDS)} ({got})")
        return super().run()

    def render(self, bundle: Bundle) -> list[nodes.Node]:
        """An image node of the chart named by ``:kind:``."""
        kind: str = self.options["kind"]
        path = self.assets(bundle).chart(kind)
        if path is None:
            raise RenderError(f"perf-chart: bundle {self.arguments[0]!r} has no data for a {kind!r} chart", "chart")
        return [self.image(path, f"{CHART_KINDS[kind].alt}: {bundle.manifest.recipe.display_title}")]
