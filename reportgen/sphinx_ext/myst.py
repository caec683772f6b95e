"""Generated MyST text → docutils nodes for the host document, whatever its own markup.

The text is parsed into a scratch document with MyST's Sphinx parser (as docutils' ``include``
does with a ``:parser:``), so a reST page can embed a report as well as a Markdown one. Headings
become sections nested under the section that holds the directive; where sections are not allowed
(inside an admonition, a list, a table cell), :class:`SectionsToRubrics` turns them into rubrics.
"""

from __future__ import annotations

from collections.abc import Iterable

from docutils import nodes
from myst_parser.parsers.sphinx_ import MystParser
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

__all__ = ["NO_TOC_CLASS", "REPORT_CLASS", "TABLE_CLASS", "SectionsToRubrics", "parse_myst", "relocate_files"]

REPORT_CLASS = "reportgen-report"
"""Class of the top-level nodes of an embedded report."""
NO_TOC_CLASS = "reportgen-no-toc"
"""Class of an embedded report's top-level nodes whose headings stay out of the host's table of contents."""
TABLE_CLASS = "reportgen-table"
"""Class of every table an embedded report, summary or overview holds (`reportgen-embed.css`)."""


def _renumber_ids(tree: Iterable[nodes.Node], host: nodes.document) -> None:
    """Give the nodes' ids anew from the host document, so two reports on one page do not collide."""
    for top in tree:
        for element in top.findall(nodes.Element):
            if element["ids"]:
                element["ids"] = []
                host.set_id(element)


def parse_myst(text: str, directive: SphinxDirective) -> list[nodes.Node]:
    """Parse MyST `text` into nodes for `directive`'s document, located at the directive's line."""
    host = directive.state.document
    scratch = nodes.document(host.settings, host.reporter, source=host["source"])
    MystParser().parse(text, scratch)
    tree = list(scratch.children)
    scratch.children = []
    for top in tree:
        for element in top.findall(nodes.Element):
            element.line = directive.lineno
        if isinstance(top, nodes.Element):
            top["classes"].append(REPORT_CLASS)
            for table in top.findall(nodes.table):  # reportgen-embed.css keeps it inside the host's column
                table["classes"].append(TABLE_CLASS)
    _renumber_ids(tree, host)
    return tree


def relocate_files(tree: Iterable[nodes.Node], files: dict[str, str]) -> None:
    """Point images and download links named as keys of `files` at the URIs given as its values."""
    for top in tree:
        for image in top.findall(nodes.image):
            image["uri"] = files.get(image["uri"], image["uri"])
        for download in top.findall(addnodes.download_reference):
            download["reftarget"] = files.get(download["reftarget"], download["reftarget"])


def _rubrics(section: nodes.section) -> list[nodes.Node]:
    """`section` flattened: its title as a rubric (keeping its ids), then its body, subsections alike."""
    title = section.next_node(nodes.title)
    flat: list[nodes.Node] = []
    if title is not None:
        rubric = nodes.rubric(title.rawsource, "", *title.children, ids=section["ids"], classes=section["classes"])
        rubric.source, rubric.line = section.source, section.line
        flat.append(rubric)
    for child in section.children:
        if isinstance(child, nodes.section):
            flat.extend(_rubrics(child))
        elif child is not title:
            flat.append(child)
    return flat


class SectionsToRubrics(SphinxTransform):
    """Turn an embedded report's sections into rubrics where the host allows no section, or where the
    directive said to keep them out of the host's table of contents."""

    default_priority = 200

    def apply(self, **kwargs: object) -> None:
        """Replace each misplaced report section by its flattened content."""
        for section in list(self.document.findall(nodes.section)):
            parent = section.parent
            misplaced = not isinstance(parent, nodes.section | nodes.document)
            if REPORT_CLASS in section["classes"] and (misplaced or NO_TOC_CLASS in section["classes"]):
                section.replace_self(_rubrics(section))
