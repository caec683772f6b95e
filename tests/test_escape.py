"""Tests of reportgen.escape: each target's function, by what the target's own reader makes of its output."""

from __future__ import annotations

import logging

import pytest
from markdown_it import MarkdownIt

from reportgen.console import TerminalFormatter
from reportgen.escape import (
    chart_text,
    html_attribute,
    markdown_code,
    markdown_text,
    myst_block,
    myst_literal,
    myst_markdown,
    myst_text,
    page_url,
    path_segment,
    safe_segment,
    terminal_text,
    visible,
)

CONTROLS = "\x1b[31m\x07\r\x00\x7f\x9b\u202e\u2066\u200b\ufeff\u2028"


def test_controls_are_shown_as_escape_sequences() -> None:
    assert visible(CONTROLS) == "\\x1b[31m\\x07\\x0d\\x00\\x7f\\x9b\\u202e\\u2066\\u200b\\ufeff\\u2028"
    assert visible("a\tb\r\nc\ud800") == "a\tb\nc\\ud800"
    for function in (myst_text, myst_literal, markdown_text, markdown_code, chart_text, html_attribute, terminal_text):
        assert "\x1b" not in function(CONTROLS) and "\u202e" not in function(CONTROLS), function


def test_terminal_text_keeps_lines_unless_one_line() -> None:
    assert terminal_text("a\x1b[2Jb\nc") == "a\\x1b[2Jb\nc"
    assert terminal_text("forged\nreportgen: all ok", single_line=True) == "forged reportgen: all ok"


def test_warnings_reach_the_terminal_through_the_boundary() -> None:
    record = logging.LogRecord("reportgen.x", logging.WARNING, __file__, 1, "bundle %s", ("\x1b]0;pwned\x07",), None)
    assert TerminalFormatter("%(message)s").format(record) == "bundle \\x1b]0;pwned\\x07"


@pytest.mark.parametrize(
    ("name", "segment"),
    [
        ("mixnet_l--default", "mixnet_l--default"),
        ("20261125T105435-17096f70", "20261125T105435-17096f70"),
        ("resnet50.v1", "resnet50.v1"),
        ("index", "index-"),
        ("index.md", "index_md-"),
        ("speedups.png", "speedups_png-"),
        ('a"b', "a_b-"),
        ("with space", "with_space-"),
        ("x<y", "x_y-"),
        ("..up", "up-"),
        ("tilde~1", "tilde_1-"),
        ("ünï", "n-"),
        ("x" * 101, "x" * 40 + "-"),
    ],
)
def test_path_segments_are_names_or_encoded(name: str, segment: str) -> None:
    got = path_segment(name)
    assert got == segment if not segment.endswith("-") else got.startswith(segment) and len(got) == len(segment) + 12
    assert safe_segment(got) or got.startswith("index-")  # encoded names are safe segments themselves
    assert path_segment(name + "!") != got


def test_myst_text_is_literal_text() -> None:
    markdown = MarkdownIt("commonmark")
    for text in ["<img src=x onerror=alert(1)>", "[a](javascript:x)", "# h", "1. one", "`x`", "*b*", "a\n\n```x"]:
        rendered = markdown.render(myst_text(text))
        assert rendered.startswith("<p>") and rendered.count("<") == 2, (text, rendered)


def test_code_spans_and_blocks_outlast_backticks() -> None:
    assert myst_literal("a``b") == "```a``b```"
    assert myst_literal("ref:x", break_after=":") == "`ref:\u200bx`"
    assert myst_block("```\nx", "text") == "````text\n```\nx\n````"
    with pytest.raises(ValueError, match="not a highlighting language"):
        myst_block("x", "py\n```{include} x")


def test_pull_request_markdown_links_nothing() -> None:
    text = markdown_text("@user fixed #123, see http://evil.example and www.evil.example <b> $x$ | - 1. [a](b)")
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<a" not in rendered and "<b>" not in rendered
    for word in ("@user", "#123,", "http://evil.example", "www.evil.example"):
        assert f"<code>{word}</code>" in rendered
    assert markdown_code("a|b", table=True) == "`a\\|b`"
    assert markdown_text("- item") == "\\- item"
    assert markdown_text("2.11.0+cu130 (H100)") == "2.11.0+cu130 (H100)"


def test_chart_text_is_never_mathtext() -> None:
    assert chart_text("$x^{$") == "\\$x^{\\$"
    assert html_attribute("\" onmouseover='x'") == "&quot; onmouseover=&#x27;x&#x27;"


def test_a_description_keeps_its_markdown_and_nothing_runs() -> None:
    """Issue 29: `random-weight \\`mixnet_l\\`` showed its backticks. Kept: paragraphs, lists, emphasis, code, http(s)
    links (an image becomes its link); headings become bold; raw HTML, roles, math, directives and other link
    schemes are text."""
    text = (
        "random-weight `mixnet_l`, **bold**, *em* and [docs](https://pytorch.org/docs).\n\n"
        "- one\n- two `x`\n\n"
        "# Head\n\n"
        "```{include} /etc/passwd\n:start-line: 1\n```\n\n"
        "<img src=x onerror=alert(1)> ![i](https://x/y.png) $x^2$ {eval-rst}`y` [js](javascript:alert(1))\n\n"
        "1. first\n2. second\n"
    )
    assert myst_markdown(text).split("\n\n") == [
        "random\\-weight `mixnet_l`, **bold**, *em* and [docs](https://pytorch.org/docs).",
        "- one",
        "- two `x`",
        "**Head**",
        "```text\n:start-line: 1\n```",
        "\\<img src\\=x onerror\\=alert\\(1\\)\\> \\![i](https://x/y.png) \\$x\\^2\\$ \\{eval\\-rst\\}`y` "
        "\\[js\\]\\(javascript\\:alert\\(1\\)\\)",
        "1. first",
        "1. second",
    ]
    assert myst_markdown("a\x1b[31m\u202eb") == "a\\\\x1b\\[31m\\\\u202eb"


def test_a_page_url_is_made_of_safe_segments_only() -> None:
    assert page_url("../mix~20261101T100000-00000001/index") == "<reportgen-page:../mix~20261101T100000-00000001/index>"
    assert page_url("reports/a-ok/compare") == "<reportgen-page:reports/a-ok/compare>"
    for bad in ("../a b/index", "a/<x>/index", "/abs/index", ".hidden/index", "a//index", "a/index>)[x](y"):
        with pytest.raises(ValueError, match="safe segments"):
            page_url(bad)
