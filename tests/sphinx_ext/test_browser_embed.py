"""A host project that embeds a wide report, built under three themes and opened in chromium at 1400 px."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.data.h100_bundle import make_h100_bundle
from tests.site.test_browser import _artifacts, _open, served

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__: list[str] = []

pytestmark = [pytest.mark.browser, pytest.mark.slow]

THEMES = {"alabaster": "div.sphinxsidebar", "furo": ".sidebar-drawer", "classic": "div.sphinxsidebar"}
"""Each theme and its navigation column: the host's layout, which embedding must leave as it is."""

_PAGE_OVERFLOW_JS = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
_BOX_JS = "s => { const r = document.querySelector(s).getBoundingClientRect(); return [r.x, r.width]; }"
_ROWS_JS = "[...document.querySelectorAll('table.reportgen-sortable')].at(-1).tBodies[0].rows"


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One host project (a plain page and a page embedding the H100 mixnet_l report) built once per theme,
    with the extension added in one line; all served from one directory."""
    work = tmp_path_factory.mktemp("embed")
    make_h100_bundle(work / "results" / "mixnet_l")
    out = work / "html"
    for theme in THEMES:
        source = work / theme
        source.mkdir()
        conf = f'project = "Host"\nhtml_theme = "{theme}"\nextensions = ["reportgen.sphinx"]\n'
        (source / "conf.py").write_text(conf, encoding="utf-8")
        (source / "index.md").write_text("# Host\n\n```{toctree}\nplain\nperf\nparts\n```\n", encoding="utf-8")
        rst = "Parts\n=====\n\n.. perf-kernels:: ../results/mixnet_l\n   :graph: 1\n   :top: 5\n\n"
        (source / "parts.rst").write_text(rst + ".. perf-findings:: ../results/mixnet_l\n", encoding="utf-8")
        (source / "plain.md").write_text("# Plain\n\nThe host's own page.\n\n## A section\n\nText.\n")
        (source / "perf.md").write_text("# Perf\n\n```{perf-report} ../results/mixnet_l\n```\n", encoding="utf-8")
        command = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(source), str(out / theme)]
        built = subprocess.run(command, capture_output=True, text=True, check=False)
        assert built.returncode == 0, f"{theme}: {built.stdout}{built.stderr}"
    with served(out) as url:
        yield url


@pytest.mark.parametrize("theme", THEMES)
def test_an_embedded_report_keeps_the_hosts_layout(browser: Browser, sites: str, theme: str) -> None:
    plain, _ = _open(browser, f"{sites}{theme}/plain.html", width=1400)
    page, problems = _open(browser, f"{sites}{theme}/perf.html", width=1400)
    try:
        sidebar = THEMES[theme]
        assert page.evaluate(_BOX_JS, sidebar) == plain.evaluate(_BOX_JS, sidebar), "the host's sidebar moved"
        assert page.evaluate(_PAGE_OVERFLOW_JS) == 0, "the page is wider than the window"
        tables = page.locator("table.reportgen-sortable")
        assert tables.count() > 0
        # Sorting and filtering work (the extension's JS, loaded once).
        last = tables.last
        assert page.locator("input.reportgen-filter").count() == tables.count()
        last.locator("button.reportgen-sort").first.click()
        assert last.locator("th[aria-sort]").count() == 1
        rows = page.evaluate(f"{_ROWS_JS}.length")
        page.locator("input.reportgen-filter").last.fill("triton_poi")
        shown = page.evaluate(f"[...{_ROWS_JS}].filter(r => !r.hidden).length")
        assert 0 < shown < rows
        page.screenshot(path=str(_artifacts() / f"embed-{theme}.png"), full_page=False)
        chart_filter = "getComputedStyle(document.querySelector('img.reportgen-chart')).filter"
        assert page.evaluate(chart_filter) == "none"  # a light page: charts as drawn
        if theme == "furo":  # its dark mode: charts inverted (hues kept), not white boxes
            page.evaluate("document.body.dataset.theme = 'dark'")
            assert "invert" in page.evaluate(chart_filter)
        assert problems == []
    finally:
        page.close()
        plain.close()
