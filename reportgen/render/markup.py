"""MyST markup helpers: escaping user text, code spans and blocks, tables and figures (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from reportgen.bundle import NOT_MEASURED

__all__ = [
    "MISSING",
    "ORPHAN",
    "ORPHAN_UNSEARCHED",
    "SORTABLE",
    "code_block",
    "code_span",
    "escape_md",
    "figure",
    "list_table",
    "plural",
]

MISSING = NOT_MEASURED
"""A table cell or value that was not measured (`reportgen.bundle.NOT_MEASURED`)."""

SORTABLE = "reportgen-sortable"
"""Class of tables the site's `reportgen.js` makes sortable and filterable (long kernel tables)."""
ORPHAN = "---\norphan: true\n---"
"""Front matter of a page that is in no toctree (Sphinx then does not warn about it)."""
ORPHAN_UNSEARCHED = "---\norphan: true\nnosearch: true\n---"
"""Front matter of a page in no toctree and not in the search index: the wrapper and kernel pages, whose text is
source code (megabytes for a wrapper; stemming a kernel page's source took 11 % of Sphinx's time for a mixnet_l
report), while the report's kernel tables, which are indexed, hold every kernel's name, ops and module."""

_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-!|~$&%^:=])")
_LINE_START_NUMBER = re.compile(r"^(\d+)([.)])")
_BACKTICKS = re.compile(r"`+")


def escape_md(text: str) -> str:
    """`text` as one line of inline MyST that renders literally (no markup, roles or HTML)."""
    text = " ".join(text.split())
    text = _SPECIAL.sub(r"\\\1", text)
    return _LINE_START_NUMBER.sub(r"\1\\\2", text)


def code_span(text: str) -> str:
    """`text` as an inline code span, whatever backticks it contains."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, language: str = "text") -> str:
    """`text` as a fenced code block whose fence no line of `text` can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def list_table(header: Sequence[str], rows: Iterable[Sequence[str]], title: str = "", classes: str = "") -> str:
    """A `{list-table}` with one header row; `classes` go on the table (e.g. `SORTABLE`)."""
    options = [":header-rows: 1", *([f":class: {classes}"] if classes else [])]
    lines = [f"```{{list-table}} {title}".rstrip(), *options, ""]
    for row in [header, *rows]:
        lines.extend(f"{'* -' if i == 0 else '  -'} {cell}".rstrip() for i, cell in enumerate(row))
    return "\n".join([*lines, "```"])


def figure(file: str, alt: str, caption: str) -> str:
    """A full-width `{figure}` with alt text and a caption."""
    return f"```{{figure}} {file}\n:alt: {alt}\n:width: 100%\n\n{caption}\n```"


def plural(count: int, noun: str) -> str:
    """`1 kernel`, `2 kernels`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
