"""MyST markup helpers: tables, figures, links; user text goes through `reportgen.escape` (re-exported here)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from reportgen.bundle import NOT_MEASURED
from reportgen.escape import html_attribute, myst_block, myst_literal, myst_role_text, myst_text, page_url, path_segment

__all__ = [
    "CHART_CLASS",
    "HISTORY_PAGE",
    "MAX_TABLE_ROWS",
    "MISSING",
    "ORPHAN",
    "ORPHAN_UNSEARCHED",
    "SORTABLE",
    "code_block",
    "code_span",
    "doc_link",
    "escape_md",
    "figure",
    "list_table",
    "location_span",
    "page_link",
    "page_name",
    "plural",
    "short_path",
]

HISTORY_PAGE = "history"
"""The trend page, next to the latest run's report (`<bundle>/history.md`)."""

MISSING = NOT_MEASURED
"""A table cell or value that was not measured (`reportgen.bundle.NOT_MEASURED`)."""

MAX_TABLE_ROWS = 5_000
"""Rows one table of a page shows: a graph of mixnet_l's backward lists ~300 kernels; a bundle made elsewhere can
list 250,000 (its JSON's bound), which as a list-table costs Sphinx minutes and the page tens of megabytes."""
CHART_CLASS = "reportgen-chart"
"""Class of every chart image (reportgen-embed.css: charts fit their column and darken with a dark theme)."""
SORTABLE = "reportgen-sortable"
"""Class of tables the site's `reportgen.js` makes sortable and filterable (long kernel tables)."""
ORPHAN = "---\norphan: true\n---"
"""Front matter of a page that is in no toctree (Sphinx then does not warn about it)."""
ORPHAN_UNSEARCHED = "---\norphan: true\nnosearch: true\n---"
"""Front matter of a page in no toctree and not in the search index: the wrapper and kernel pages, whose text is
source code (megabytes for a wrapper; stemming a kernel page's source took 11 % of Sphinx's time for a mixnet_l
report), while the report's kernel tables, which are indexed, hold every kernel's name, ops and module."""

escape_md = myst_text
"""User text as one line of inline MyST that renders literally (`reportgen.escape.myst_text`)."""
code_span = myst_literal
"""User text as an inline code span (`reportgen.escape.myst_literal`)."""
code_block = myst_block
"""User text as a fenced code block (`reportgen.escape.myst_block`)."""


page_name = path_segment
"""The page directory (and URL segment) of a bundle or run under `reports/` (`reportgen.escape.path_segment`)."""


def doc_link(label: str, docname: str) -> str:
    """A `{doc}` link; `label` is user text, shown literally; `docname` is built from `page_name` names only."""
    return f"{{doc}}`{myst_role_text(label) or docname} <{docname}>`"


def page_link(text: str, docname: str) -> str:
    """A link to a page of another run's directory (or from the index to a run's): `text` is MyST (escaped
    already), `docname` relative and without suffix. A URL rather than a cross-reference, so that each run's pages
    build on their own (`reportgen.escape.PAGE_SCHEME`); links inside one run's directory stay `{doc}` links."""
    return f"[{text}]({page_url(docname)})"


def list_table(header: Sequence[str], rows: Iterable[Sequence[str]], title: str = "", classes: str = "") -> str:
    """A `{list-table}` with one header row; `classes` go on the table (e.g. `SORTABLE`).

    :param title: MyST text (escaped); a title holding a backtick gets a tilde fence (a backtick fence's
        argument may not hold one: the table would become a paragraph)
    """
    fence = "~~~" if "`" in title else "```"
    options = [":header-rows: 1", *([f":class: {classes}"] if classes else [])]
    lines = [f"{fence}{{list-table}} {title}".rstrip(), *options, ""]
    remaining = iter(rows)
    shown: list[Sequence[str]] = list(itertools.islice(remaining, MAX_TABLE_ROWS + 1))
    if len(shown) > MAX_TABLE_ROWS:
        left_out = len(shown) - MAX_TABLE_ROWS + sum(1 for _ in remaining)
        note = f"… {left_out:,} more rows (a table shows at most {MAX_TABLE_ROWS:,})"
        shown[MAX_TABLE_ROWS:] = [[note, *[""] * (len(header) - 1)]]
    for row in [header, *shown]:
        # A cell starting with "#" (the header of a numbering column) would be a heading in its cell.
        cells = [f"\\{cell}" if cell.startswith("#") else cell for cell in row]
        lines.extend(f"{'* -' if i == 0 else '  -'} {cell}".rstrip() for i, cell in enumerate(cells))
    return "\n".join([*lines, fence])


def figure(file: str, alt: str, caption: str) -> str:
    """A full-width `{figure}` with alt text and a caption."""
    return f"```{{figure}} {file}\n:alt: {alt}\n:width: 100%\n:class: {CHART_CLASS}\n\n{caption}\n```"


def plural(count: int, noun: str) -> str:
    """`1 kernel`, `2 kernels`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


_PACKAGE_ROOT = re.compile(r".*/(?:site|dist)-packages/|.*/lib/python\d+(?:\.\d+)?/")
"""Where an installed package's (or the standard library's) own path starts: `…/site-packages/timm/…`."""


def short_path(path: str) -> str:
    """A source path as a reader names it: relative to its package root (`timm/layers/norm_act.py:136`), else the
    last two parts of an absolute path (`recipes/models.py:29`); a relative path as it is."""
    if match := _PACKAGE_ROOT.match(path):
        return path[match.end() :]
    parts = PurePosixPath(path).parts
    return "/".join(parts[-2:]) if path.startswith("/") and len(parts) > 3 else path


def location_span(location: str) -> str:
    """A source location as a code span of its short path, the whole path on hover (an escaped `title`)."""
    short = short_path(location)
    if short == location:
        return code_span(location)
    return f'<span title="{html_attribute(location)}">{code_span(short)}</span>'
