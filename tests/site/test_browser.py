"""The built site in a real browser: Debian's chromium, headless, driven by Playwright.

A CPU bundle is made by a real `reportgen run`; a small H200 bundle comes from tests/data/bundles. The site
is served on 127.0.0.1 and each page is checked for images that did not load, console errors and internal
links that do not answer 200. Full-page screenshots go to `$REPORTGEN_ARTIFACTS` (default tests/artifacts/).

CI installs chromium (`.ci/run`); without it these tests fail, they are never skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from reportgen.pipeline import build as build_site
from reportgen.site.serve import make_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Request

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TESTS = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGES = ["reports/index.html", "reports/addmul/index.html", "reports/h200-fused_add_mul/index.html"]
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
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A site of one real CPU run and one canned H200 bundle, served on 127.0.0.1."""
    work = tmp_path_factory.mktemp("browser")
    recipe = TESTS / "data" / "recipes" / "addmul.yaml"
    run = [sys.executable, "-m", "reportgen", "run", str(recipe), "-o", "results"]
    proc = subprocess.run(run, cwd=work, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shutil.copytree(TESTS / "data" / "bundles" / "fused_add_mul", work / "results" / "h200-fused_add_mul")
    html = build_site(work / "results", work / "site")
    server = make_server(html, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium through Playwright; a clear failure when either is missing."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install it (as root: apt-get update && apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the Python package playwright is missing: pip install -e '.[test]'")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _failed(request: Request, problems: list[str]) -> None:
    """Record a request that got no response; those a navigation cancelled are no fault of the site."""
    if request.failure != "net::ERR_ABORTED":
        problems.append(f"failed: {request.url} ({request.failure})")


def _open(browser: Browser, url: str) -> tuple[Page, list[str]]:
    """The page at `url` in a 1280-wide window, and the console errors, page errors and failed loads it had."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
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


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_with_images_links_and_no_errors(browser: Browser, site_url: str, path: str) -> None:
    page, problems = _open(browser, site_url + path)
    try:
        images: list[dict[str, Any]] = page.evaluate(_IMAGES_JS)
        assert images, "no images"
        assert [i["src"] for i in images if not i["ok"]] == [], "images that did not load"
        assert [i["src"] for i in images if not i["alt"].strip()] == [], "images without alt text"
        assert _broken_links(page, site_url) == []
        name = "index" if path == PAGES[0] else f"report-{path.split('/')[1]}"
        page.screenshot(path=str(_artifacts() / f"{name}.png"), full_page=True)
        assert problems == []
    finally:
        page.close()


def test_index_table_fits_and_reports_link_to_each_other(browser: Browser, site_url: str) -> None:
    page, problems = _open(browser, site_url + PAGES[0])
    try:
        assert page.evaluate(_INDEX_OVERFLOW_JS) == [0], "the index table is wider than the page"
        for selector, path in [
            ("text=A * B + C <tiny>", PAGES[1]),
            ("a.next-page", PAGES[2]),  # furo's previous/next links follow the toctree of the reports index
            ("a.prev-page", PAGES[1]),
        ]:
            page.click(selector)
            page.wait_for_load_state("networkidle")
            assert page.url == site_url + path
        assert problems == []
    finally:
        page.close()
