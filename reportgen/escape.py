"""The one boundary between what a bundle says and what reportgen writes: one function per target.

Everything that comes from a bundle, a recipe or a results directory's names (titles, variants, kernel names,
errors, directory names, ...) is untrusted text. It reaches a target only through these functions:

============================  =====================  ==================================================
target                        function               what it does
============================  =====================  ==================================================
MyST text (pages)             `myst_text`            one line; every character with a MyST meaning
                                                     backslash-escaped: no roles, directives, HTML, links
MyST literal (pages)          `myst_literal`         one line as an inline code span no backtick can end
MyST code block (pages)       `myst_block`           lines as a fenced block no line of them can close
MyST from Markdown (pages)    `myst_markdown`        a recipe's description: paragraphs, lists, emphasis,
                                                     code and http(s) links kept, all else as text
MyST role text (`{doc}`)      `myst_role_text`       one line without the characters that end a role
HTML attribute                `html_attribute`       one line, `&<>"'` as entities
URL path segment / docname    `path_segment`         a safe name kept as is, anything else encoded
link to another run's page    `page_url`             docname of `path_segment`s as a `reportgen-page:` URL
Markdown (pull requests,      `markdown_text`,       one line; every ASCII punctuation backslash-escaped
notebooks)                    `markdown_code`        (text) or a code span, `|` escaped in tables (code)
terminal                      `terminal_text`        controls shown, ESC and bidi overrides never raw
chart labels (matplotlib)     `chart_text`           one line, `$` escaped (no mathtext)
============================  =====================  ==================================================

Every function first makes control characters visible (`visible`): C0 controls but tab and newline, DEL, C1
controls, bidi embeddings, overrides, isolates and marks, zero-width characters, line and paragraph separators,
byte order marks, tag characters and lone surrogates become their escape sequence as text (`\\x1b`, `\\u202e`), so
a title can neither colour a terminal, reorder a line, hide text nor break an encoder.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence

__all__ = [
    "CONTROLS",
    "FILE_SUFFIXES",
    "MAX_SEGMENT",
    "PAGE_SCHEME",
    "RESERVED_STEMS",
    "chart_text",
    "external_link",
    "html_attribute",
    "markdown_code",
    "markdown_text",
    "myst_block",
    "myst_literal",
    "myst_markdown",
    "myst_role_text",
    "myst_text",
    "one_line",
    "page_url",
    "path_segment",
    "safe_segment",
    "terminal_text",
    "visible",
]

CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]"
)
"""Characters never written raw: C0 controls but tab and newline (ESC starts terminal sequences, BEL rings, CR
overwrites a line), DEL, C1 controls (CSI is one), Arabic letter mark, Mongolian vowel separator, zero-width
space/joiners and LRM/RLM, line and paragraph separators, bidi embeddings and overrides (U+202A-U+202E: Trojan
Source), word joiner and invisible operators, bidi isolates (U+2066-U+2069) and deprecated format characters,
byte order mark, interlinear annotations, lone surrogates (unencodable: a page write would fail) and tag
characters. Zero-width joiners inside emoji sequences are shown too: a name is not the place for them."""

_SPACE = re.compile(r"\s+")
_MYST_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-!|~$&%^:=])")
"""Characters with a meaning somewhere in MyST inline or block syntax (CommonMark, roles, substitutions,
dollar math, targets, comments, block breaks, tables)."""
_LINE_START_NUMBER = re.compile(r"^(\d+)([.)])")
_BACKTICKS = re.compile(r"`+")
_ROLE_ENDS = re.compile(r"[`<>]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~$&])")
"""ASCII punctuation with a meaning anywhere in a line of CommonMark, GitHub or Jupyter Markdown (escapes, code,
emphasis, links and images, HTML and autolinks, entities, headings, tables, strikethrough, math); CommonMark lets a
backslash escape each. `(` and `!` mean something only after a `]` or before a `[`, which are escaped."""
_MARKDOWN_LINE_START = re.compile(r"^(?:([-+=])(?=\s|$|\1)|(\d+)([.)])(?=\s|$))")
"""What makes a line a list item, a thematic break, a setext underline or an ordered list item."""
_LINKISH = re.compile(r"\S*(?:[@#]|://|www\.)\S*", re.IGNORECASE)
"""A word GitHub links whatever its escapes (mentions, issue references, URLs: they are found in the text after
Markdown is parsed); inside a code span it is not."""
_LANGUAGE = re.compile(r"[A-Za-z0-9_+-]*")

MAX_SEGMENT = 100
"""Longest name kept as a path segment: a recipe (64) and a variant (32) joined by `--` fit; longer ones are
encoded to a short slug and hash (file systems take 255 bytes a name)."""
_SAFE_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
RESERVED_STEMS = frozenset({"index", "genindex", "search", "searchindex", "py-modindex", "objects", "speedups"})
"""Names (before any `.`) of the site's own pages and files next to the report directories: a directory
`index.md` would stand where the reports index is written (and abort the build)."""
FILE_SUFFIXES = frozenset(
    {"md", "rst", "txt", "ipynb", "html", "htm", "inv", "js", "css", "png", "svg", "json", "pickle", "doctree"}
)
"""Suffixes of files Sphinx reads or a site holds: a directory named like one would be taken for it."""
PAGE_SCHEME = "reportgen-page"
"""The URL scheme of links from one run's pages to another's (or from the index to a run's): a MyST link
`[text](<reportgen-page:../run/index>)` is a URL, not a Sphinx cross-reference, so each run's pages build without
the others (`reportgen.site` maps the scheme to `../run/index.html`)."""

_DOCNAME_PART = re.compile(r"\.\.|[A-Za-z0-9][A-Za-z0-9._~-]*")
_SLUG_WORD = re.compile(r"[a-z0-9]+")
_SLUG_CHARS = 40
_DIGEST_CHARS = 12


def _escape_one(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every `CONTROLS` character as its escape sequence (`\\x1b`, `\\u202e`); CR LF becomes LF.
    Tabs and newlines stay: the targets of one line fold them."""
    return CONTROLS.sub(_escape_one, text.replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """`visible(text)` with every run of whitespace (newlines included) as one space, stripped."""
    return " ".join(_SPACE.split(visible(text))).strip()


# --- MyST ---------------------------------------------------------------------------------------------------


def myst_text(text: str) -> str:
    """`text` as one line of inline MyST that renders literally (no markup, roles, directives, HTML or math)."""
    escaped = _MYST_SPECIAL.sub(r"\\\1", one_line(text))
    return _LINE_START_NUMBER.sub(r"\1\\\2", escaped)


def myst_literal(text: str, break_after: str = "") -> str:
    """`text` as one inline code span, whatever backticks it holds ("" for blank text).

    :param break_after: characters after which the browser may wrap the span (a zero-width space follows each)
    """
    text = one_line(text)
    if not text:
        return ""
    for char in break_after:
        text = text.replace(char, char + "\u200b")
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def myst_block(text: str, language: str = "text") -> str:
    """`text` as a fenced code block whose fence no line of `text` can close.

    :param language: the highlighting language: reportgen's own word, never a bundle's
    """
    if not _LANGUAGE.fullmatch(language):
        raise ValueError(f"not a highlighting language: {language!r}")
    text = visible(text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


_SAFE_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+")
"""Link targets kept from a description: http(s) URLs of characters that cannot end a MyST link or start markup."""
_INLINE_MARKS = {"em_open": "*", "em_close": "*", "strong_open": "**", "strong_close": "**"}


def myst_markdown(text: str) -> str:
    """A recipe description's Markdown as MyST that shows it formatted and runs nothing: paragraphs, lists,
    emphasis, inline code, code blocks and http(s) links are kept (every text in them escaped as `myst_text`
    escapes it); headings become bold paragraphs; raw HTML, images, roles, directives and math are text."""
    from markdown_it import MarkdownIt  # a dependency of myst-parser and rich; loaded only where a page needs it

    parser = MarkdownIt("commonmark", {"html": False}).disable(["image", "html_block", "html_inline"])
    blocks: list[str] = []
    lists: list[str] = []
    heading = item_start = False
    for token in parser.parse(visible(text)):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append("- " if kind == "bullet_list_open" else "1. ")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            item_start = True
        elif kind in ("heading_open", "heading_close"):
            heading = kind == "heading_open"
        elif kind == "inline":
            line = _inline(token.children or [])
            if heading and line:
                line = f"**{line}**"
            if lists:  # inside a list item: its first paragraph carries the marker, the others are indented
                indent = "   " * (len(lists) - 1)
                line = indent + (lists[-1] if item_start else "   ") + line
                item_start = False
            blocks.append(line)
        elif kind in ("fence", "code_block") and token.content.strip():  # the fence's info string is dropped
            blocks.append(myst_block(token.content))
    return "\n\n".join(block for block in blocks if block.strip())


def _inline(children: Sequence[object]) -> str:
    out: list[str] = []
    href: str | None = None
    for child in children:
        kind, content = getattr(child, "type", ""), getattr(child, "content", "")
        if kind == "text":
            out.append(_MYST_SPECIAL.sub(r"\\\1", content))
        elif kind == "code_inline":
            out.append(myst_literal(content))
        elif kind in ("softbreak", "hardbreak"):
            out.append(" ")
        elif kind in _INLINE_MARKS:
            out.append(_INLINE_MARKS[kind])
        elif kind == "link_open":
            target = str(getattr(child, "attrs", {}).get("href", ""))
            href = target if _SAFE_URL.fullmatch(target) else None
            out.append("[" if href else "")
        elif kind == "link_close":
            out.append(f"]({href})" if href else "")
            href = None
    return _LINE_START_NUMBER.sub(r"\1\\\2", "".join(out).strip())


def external_link(text: str, url: str) -> str:
    """A MyST link to an http(s) `url` of safe characters (the rule recipe descriptions' links follow); `text` alone,
    escaped, for any other target."""
    label = myst_text(text)
    return f"[{label}]({url})" if _SAFE_URL.fullmatch(url) else label


def myst_role_text(text: str) -> str:
    """`text` as the title of a role such as `{doc}` (shown literally): one line, no backticks or angle brackets."""
    return " ".join(_ROLE_ENDS.sub("", one_line(text)).split())


# --- HTML and URLs ------------------------------------------------------------------------------------------


def html_attribute(text: str) -> str:
    """`text` as the value of a double- or single-quoted HTML attribute."""
    return html.escape(one_line(text), quote=True)


def safe_segment(name: str) -> bool:
    """Whether `name` may be a path segment, docname part and URL segment as it is: letters, digits, `_`, `-`
    and inner dots, at most `MAX_SEGMENT` characters, neither one of the site's own names (`RESERVED_STEMS`)
    nor named like a file (`FILE_SUFFIXES`)."""
    if len(name) > MAX_SEGMENT or not _SAFE_SEGMENT.fullmatch(name):
        return False
    stem, dot, _ = name.partition(".")
    return stem.lower() not in RESERVED_STEMS and not (dot and name.rpartition(".")[2].lower() in FILE_SUFFIXES)


def path_segment(name: str) -> str:
    """`name` as one segment of a path, docname and URL of the site: itself when `safe_segment`, else a slug of
    its letters and digits and a hash of it (`my_run-1f3a...`): no quote, space, `<`, `~`, slash or dot name
    reaches a file name, a link or the theme's HTML."""
    if safe_segment(name):
        return name
    slug = "_".join(_SLUG_WORD.findall(name.lower()))[:_SLUG_CHARS].strip("_") or "bundle"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]
    return f"{slug}-{digest}"


# --- Markdown for pull requests and notebooks ---------------------------------------------------------------


def markdown_text(text: str, table: bool = False) -> str:
    """`text` as one line of CommonMark/GitHub Markdown that renders literally: each ASCII punctuation character that
    means something escaped (no HTML, links, images, emphasis, tables, math in notebooks); a word that GitHub or
    Jupyter would link even when escaped (`@user`, `#123`, `http://...`, `www.`) becomes a code span.

    :param table: the text is in a table cell (see `markdown_code`)
    """
    text = one_line(text)
    out: list[str] = []
    position = 0
    for match in _LINKISH.finditer(text):
        out += [_MARKDOWN_SPECIAL.sub(r"\\\1", text[position : match.start()]), markdown_code(match.group(), table)]
        position = match.end()
    out.append(_MARKDOWN_SPECIAL.sub(r"\\\1", text[position:]))
    return _MARKDOWN_LINE_START.sub(_escape_line_start, "".join(out))


def _escape_line_start(match: re.Match[str]) -> str:
    sign, number, mark = match.groups()
    return f"\\{sign}" if sign else f"{number}\\{mark}"


def markdown_code(text: str, table: bool = False) -> str:
    """`text` as one inline code span (GitHub links no `@mention` or `#123` inside one).

    :param table: the span is in a table cell: `|` is escaped (GitHub ends a cell at a bare `|`, even in code)
    """
    text = one_line(text) or " "
    if table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# --- terminal and charts ------------------------------------------------------------------------------------


def terminal_text(text: str, single_line: bool = False) -> str:
    """`text` for a terminal: no escape sequence, bell, carriage return or bidi control reaches it raw.

    :param single_line: fold newlines too (a table cell, a name in a line of its own: no forged lines)
    """
    return one_line(text) if single_line else visible(text)


def chart_text(text: str) -> str:
    """`text` as a matplotlib label: one line, `$` escaped so that it is never parsed as mathtext."""
    return one_line(text).replace("$", r"\$")


def page_url(docname: str) -> str:
    """The link target (with its angle brackets) of the page `docname`, relative and without suffix, its segments
    `..` or names made of `path_segment`s (and the `~` of a kept run's page): a `PAGE_SCHEME` URL.

    :raises ValueError: on another segment (a name not made safe first)
    """
    if not all(_DOCNAME_PART.fullmatch(part) for part in docname.split("/")):
        raise ValueError(f"not a docname of safe segments: {docname!r}")
    return f"<{PAGE_SCHEME}:{docname}>"
