"""The built site in a real browser: Debian's chromium, headless, driven by Playwright.

A CPU bundle is made by a real `reportgen run` on top of a recorded history of that recipe (three runs under two
torch versions: a trend page, kept runs' reports and a comparison; the run is shared with other test files,
`conftest.addmul_history`); a small H200 bundle comes from tests/data/bundles,
and an H100 mixnet_l bundle with wide and long kernel tables from tests/data/h100_bundle.py. The site is served on 127.0.0.1 and each page is checked for images that did not load, console errors and internal
links that do not answer 200. Full-page screenshots go to `$REPORTGEN_ARTIFACTS` (default tests/artifacts/).

CI installs chromium (`.ci/run`); without it these tests fail, they are never skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from reportgen.pipeline import build as build_site
from reportgen.site.serve import make_server
from tests.data.h100_bundle import make_h100_bundle

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Request

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TESTS = Path(__file__).resolve().parents[1]
PAGES = [
    "reports/index.html",
    "reports/addmul/index.html",
    "reports/h200-fused_add_mul/index.html",
    "reports/h100-mixnet_l/index.html",
    "reports/addmul/history.html",
    "reports/addmul/compare.html",
]
WIDE = PAGES[3]
"""A report whose kernel tables are wider than furo's text column and hundreds of rows long (its wrappers)."""
_IMAGES_JS = (
    "[...document.images].map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0, alt: i.alt}))"
)
_LINKS_JS = "[...document.querySelectorAll('a[href]')].map(a => a.href)"
_INDEX_OVERFLOW_JS = (
    "[...document.querySelectorAll('.reportgen-index .table-wrapper')].map(w => w.scrollWidth - w.clientWidth)"
)


def _artifacts() -> Path:
    path = Path(os.environ.get("REPORTGEN_ARTIFACTS") or TESTS / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory, addmul_history: Path) -> Iterator[str]:
    """A site of one real CPU run on its recorded history and canned H200 and H100 bundles, served on 127.0.0.1."""
    work = tmp_path_factory.mktemp("browser")
    shutil.copytree(addmul_history, work / "results")  # the real run, joined to its history (shared: a copy)
    shutil.copytree(TESTS / "data" / "bundles" / "fused_add_mul", work / "results" / "h200-fused_add_mul")
    make_h100_bundle(work / "results" / "h100-mixnet_l")
    with served(build_site(work / "results", work / "site")) as url:
        yield url


@contextlib.contextmanager
def served(html: Path) -> Iterator[str]:
    """The directory `html` served on 127.0.0.1 (a free port) while the block runs; its URL."""
    server = make_server(html, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _failed(request: Request, problems: list[str]) -> None:
    """Record a request that got no response; those a navigation cancelled are no fault of the site."""
    if request.failure != "net::ERR_ABORTED":
        problems.append(f"failed: {request.url} ({request.failure})")


def _open(browser: Browser, url: str, width: int = 1280) -> tuple[Page, list[str]]:
    """The page at `url` in a window `width` wide, and the console errors, page errors and failed loads it had."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console: {message.text}") if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: _failed(request, problems))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, url
    page.wait_for_load_state("networkidle")
    return page, problems


def _broken_links(page: Page, base: str) -> list[str]:
    """Links of `page` into the site (fragments dropped) that do not answer 200."""
    hrefs: list[str] = page.evaluate(_LINKS_JS)
    targets = sorted({href.split("#")[0] for href in hrefs if href.startswith(base)})
    assert targets, "no internal links"
    return [f"{target}: {status}" for target in targets if (status := page.request.get(target).status) != 200]


def assert_page_is_whole(browser: Browser, html: Path, path: str) -> None:
    """Serve `html`, open `path`: every image loads and has alt text, every internal link answers, no console or
    page error; a full-page screenshot goes to the artifacts."""
    with served(html) as url:
        page, problems = _open(browser, url + path)
        try:
            images: list[dict[str, Any]] = page.evaluate(_IMAGES_JS)
            assert [i["src"] for i in images if not i["ok"]] == [], "images that did not load"
            assert [i["src"] for i in images if not i["alt"].strip()] == [], "images without alt text"
            assert _broken_links(page, url) == []
            page.screenshot(path=str(_artifacts() / path.replace("/", "-").replace(".html", ".png")), full_page=True)
            assert problems == []
        finally:
            page.close()


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_with_images_links_and_no_errors(browser: Browser, site_url: str, path: str) -> None:
    page, problems = _open(browser, site_url + path)
    try:
        images: list[dict[str, Any]] = page.evaluate(_IMAGES_JS)
        assert images or path.endswith("compare.html"), "no images"  # a comparison is tables only
        assert [i["src"] for i in images if not i["ok"]] == [], "images that did not load"
        assert [i["src"] for i in images if not i["alt"].strip()] == [], "images without alt text"
        assert _broken_links(page, site_url) == []
        folder, file = path.split("/")[-2:]
        name = "index" if path == PAGES[0] else f"{'report' if file == 'index.html' else file[:-5]}-{folder}"
        page.screenshot(path=str(_artifacts() / f"{name}.png"), full_page=True)
        assert problems == []
    finally:
        page.close()


def test_index_table_fits_and_links_every_report(browser: Browser, site_url: str) -> None:
    """Report pages are in no toctree (adding one changes no other page): the index table is the way to them."""
    page, problems = _open(browser, site_url + PAGES[0])
    try:
        assert page.evaluate(_INDEX_OVERFLOW_JS) == [0], "the index table is wider than the page"
        for selector, path in [
            ("text=A * B + C <tiny>", PAGES[1]),
            ("text=Fused A * B + C", PAGES[2]),
            ("text=mixnet_l training, fp16 AMP", PAGES[3]),
        ]:
            page.goto(site_url + PAGES[0])
            page.click(selector)
            page.wait_for_load_state("networkidle")
            assert page.url == site_url + path
        assert problems == []
    finally:
        page.close()


_PAGE_OVERFLOW_JS = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
_SORTABLE_JS = "[...document.querySelectorAll('table.reportgen-sortable')].map(t => t.offsetWidth)"


ALL_KERNELS = "section#all-kernels"


def _kernels(page: Page) -> list[str]:
    """The kernel names of the report's "All kernels" table, rows shown, in order."""
    names: list[str] = page.evaluate(
        f"[...document.querySelector('{ALL_KERNELS} table.reportgen-sortable').tBodies[0].rows]"
        ".filter(r => !r.hidden).map(r => r.cells[1].textContent.trim())"
    )
    return names


@pytest.mark.parametrize(("path", "width", "tables"), [(WIDE, 1280, 3), (WIDE, 800, 3), (PAGES[4], 1280, 1)])
def test_a_wide_table_does_not_scroll_the_page(
    browser: Browser, site_url: str, path: str, width: int, tables: int
) -> None:
    """Report pages (kernel tables) and trend pages (a row per run, twelve columns) use the window's width."""
    page, problems = _open(browser, site_url + path, width=width)
    try:
        widths: list[int] = page.evaluate(_SORTABLE_JS)
        assert len(widths) >= tables, "the page has no sortable wide tables"
        assert page.evaluate(_PAGE_OVERFLOW_JS) == 0, "the page scrolls sideways"
        content: int = page.evaluate("document.querySelector('article').clientWidth")
        if width == 1280:
            assert content > 46 * 16, "a report page should use more than furo's 46em text column"
        shot = f"wide-{width}" if path == WIDE else f"wide-{path.split('/')[-1][:-5]}"
        page.screenshot(path=str(_artifacts() / f"{shot}.png"), full_page=False)
        assert problems == []
    finally:
        page.close()


_TOC_JS = (
    "(() => { const d = document.querySelector('.toc-drawer'); const r = d.getBoundingClientRect();"
    " return {left: r.left, width: r.width, window: window.innerWidth,"
    " tallest: Math.max(0, ...[...d.querySelectorAll('.toc-tree a')].map(a => a.getBoundingClientRect().height))}; })()"
)


@pytest.mark.parametrize("width", [800, 1280, 1400, 1920])
def test_the_table_of_contents_is_readable_beside_wide_tables(browser: Browser, site_url: str, width: int) -> None:
    """At furo's widths with a table of contents (>= 82em) it keeps its 15em beside a report's wide kernel tables
    (issue 29: squeezed to a letter a line at 1400 px); below, it is the theme's drawer, off-screen."""
    page, problems = _open(browser, site_url + WIDE, width=width)
    try:
        toc: dict[str, float] = page.evaluate(_TOC_JS)
        assert page.evaluate(_PAGE_OVERFLOW_JS) == 0, "the page scrolls sideways"
        if width >= 82 * 16:
            assert toc["left"] < toc["window"] and toc["width"] >= 15 * 16 - 1, toc
            line: float = page.evaluate(
                "parseFloat(getComputedStyle(document.querySelector('.toc-tree a')).lineHeight)"
            )
            assert toc["tallest"] <= 3 * line, f"a table-of-contents entry wraps over {toc['tallest'] / line:.0f} lines"
        else:
            assert toc["left"] >= toc["window"], f"the table of contents should be a drawer off-screen at {width} px"
        page.screenshot(path=str(_artifacts() / f"toc-{width}.png"), full_page=False)
        assert problems == []
    finally:
        page.close()


def _column(page: Page, index: int) -> list[str]:
    cells: list[str] = page.evaluate(
        f"[...document.querySelector('{ALL_KERNELS} table.reportgen-sortable').tBodies[0].rows]"
        f".filter(r => !r.hidden).map(r => r.cells[{index}].textContent.trim())"
    )
    return cells


def test_kernel_tables_sort_and_filter_in_the_browser(browser: Browser, site_url: str) -> None:
    page, problems = _open(browser, site_url + WIDE)
    try:
        shown = _kernels(page)
        assert len(shown) == 50  # the 50 longest kernels, longest first

        def click(label: str) -> None:
            page.locator(f"{ALL_KERNELS} table.reportgen-sortable th button", has_text=label).click()

        click("Total (ms)")  # numbers sort as numbers, ascending first
        totals = [float(cell) for cell in _column(page, 3)]
        assert totals == sorted(totals) and _kernels(page) != shown
        click("Kernel")
        by_name = _kernels(page)
        assert sorted(by_name) == sorted(shown)
        assert page.evaluate("names => names.every((n, i) => i === 0 || names[i - 1].localeCompare(n) <= 0)", by_name)
        click("Kernel")
        assert _kernels(page) == by_name[::-1]
        page.locator(f"{ALL_KERNELS} input.reportgen-filter").fill("triton_poi")
        filtered = _kernels(page)
        assert 0 < len(filtered) < len(shown)
        assert filtered == [name for name in by_name[::-1] if "triton_poi" in name]
        assert problems == []
    finally:
        page.close()


_TREND_ROWS_JS = (
    "[...document.querySelector('table.reportgen-sortable').tBodies[0].rows].map(r => r.cells[2].textContent.trim())"
)


def test_the_trend_page_shows_every_run_and_links_their_reports(browser: Browser, site_url: str) -> None:
    """Four runs (three recorded under two torch versions, one made here), newest first; each older row opens
    that run's own report, whose images load; the chart loaded and the index links the trend by its sparkline."""
    page, problems = _open(browser, site_url + PAGES[0])
    try:
        page.click("a[href='addmul/history.html']")
        page.wait_for_load_state("networkidle")
        assert page.url == site_url + PAGES[4]
        torch: list[str] = page.evaluate(_TREND_ROWS_JS)
        assert len(torch) == 4 and torch[1:] == ["2.14.1+cu130", "2.13.0+cpu", "2.13.0+cpu"]
        images: list[dict[str, Any]] = page.evaluate(_IMAGES_JS)
        assert [i["ok"] for i in images if "addmul-history" in i["src"]] == [True]
        page.screenshot(path=str(_artifacts() / "trend-addmul.png"), full_page=True)
        page.click("table.reportgen-sortable tbody tr:nth-child(4) a")
        page.wait_for_load_state("networkidle")
        assert "/reports/addmul~" in page.url
        assert page.locator("text=An earlier run, kept in the history of").count() == 1
        assert all(i["ok"] for i in page.evaluate(_IMAGES_JS))
        assert problems == []
    finally:
        page.close()
