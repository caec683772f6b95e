"""Markup helpers: source locations shortened for reading, the whole path on hover, checked in real HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from docutils.core import publish_string
from myst_parser.parsers.docutils_ import Parser

from reportgen.render.markup import list_table, location_span, short_path

__all__: list[str] = []

SITE = "/opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm_act.py:136"


@pytest.mark.parametrize(
    ("path", "short"),
    [
        (SITE, "timm/layers/norm_act.py:136"),  # issue 29's example
        ("/usr/lib/python3/dist-packages/numpy/core/_methods.py:49", "numpy/core/_methods.py:49"),
        ("/usr/lib/python3.11/contextlib.py:81", "contextlib.py:81"),  # the standard library
        ("/home/me/project/recipes/models.py:29", "recipes/models.py:29"),  # elsewhere: the last two parts
        ("recipes/models.py:29", "recipes/models.py:29"),  # relative (to the recipe's directory): as it is
        ("/m.py:3", "/m.py:3"),
    ],
)
def test_short_path_names_a_location_from_its_package(path: str, short: str) -> None:
    assert short_path(path) == short


class _Spans(HTMLParser):
    """Each `<span title>`'s title and the text inside it (docutils writes the code span as a nested span)."""

    def __init__(self) -> None:
        super().__init__()
        self.titles: list[str] = []
        self.code: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "span" and (title := dict(attrs).get("title")) is not None:
            self.titles.append(title)
            self._depth = 1
        elif tag == "span" and self._depth:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.code.append(data)


def _html(myst: str) -> _Spans:
    html = publish_string(myst, parser=Parser(), writer_name="html5", settings_overrides={"output_encoding": "unicode"})
    spans = _Spans()
    spans.feed(str(html))
    return spans


def test_the_whole_path_is_on_hover_and_a_hostile_one_stays_an_attribute() -> None:
    page = _html(f"Break at {location_span(SITE)}.")
    assert page.titles == [SITE] and "".join(page.code) == "timm/layers/norm_act.py:136"
    hostile = '/x/site-packages/a" onmouseover="alert(1)<b>.py:1'
    page = _html(f"Break at {location_span(hostile)}.")
    assert page.titles == [hostile]  # one attribute, whole: nothing broke out of it
    assert "".join(page.code) == 'a" onmouseover="alert(1)<b>.py:1'


def test_a_numbering_column_header_is_text_not_a_heading() -> None:
    """`#` alone in a list-table cell was an empty heading (`<th><p class="rubric" id="id1"></p></th>`)."""
    myst = list_table(["#", "kernel"], [["1", "triton_poi_0"], ["#2 of 3", "x"]])
    html = str(
        publish_string(myst, parser=Parser(), writer_name="html5", settings_overrides={"output_encoding": "unicode"})
    )
    html = html[html.index("<body") :]
    assert "<h1" not in html and "rubric" not in html and "<h2" not in html
    assert re.search(r"<th[^>]*><p>#</p></th>", html), html
    assert "#2 of 3" in html
