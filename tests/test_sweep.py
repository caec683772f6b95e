"""A sweep end to end on the CPU: `reportgen report` of recipes/sweep_tiny.yaml (2 batch sizes x 2 modes) and of a
sweep whose batch-3 point raises. Real runs, a real Sphinx build; the sweep page, its charts, rows and links."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reportgen.bundle import RunStatus, read_manifest
from tests.site.test_browser import assert_page_is_whole

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[1]
TINY_POINTS = ["bs8-def", "bs8-ro", "bs64-def", "bs64-ro"]


@dataclass(frozen=True)
class Report:
    work: Path
    proc: subprocess.CompletedProcess[str]

    def html_path(self, run: str, page: str = "index") -> Path:
        return self.work / "site" / "_build" / "html" / "reports" / run / f"{page}.html"

    def text(self, run: str, page: str = "index") -> str:
        raw = self.html_path(run, page).read_text(encoding="utf-8")
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    work = tmp_path_factory.mktemp("sweep")
    recipes = [str(ROOT / "recipes" / "sweep_tiny.yaml"), str(ROOT / "tests" / "data" / "recipes" / "sweep_fails.yaml")]
    command = [sys.executable, "-m", "reportgen", "report", *recipes, "-o", "results", "--out", "site"]
    return Report(work, subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=1200))


@pytest.mark.slow
def test_each_point_is_a_run_with_its_values(report: Report) -> None:
    assert report.proc.returncode == 1, report.proc.stdout + report.proc.stderr  # one point failed
    for name in TINY_POINTS:
        manifest = read_manifest(report.work / "results" / f"sweep_tiny--{name}")
        assert manifest.status is RunStatus.ok, manifest.error
        assert manifest.variant == name
        batch, mode = manifest.point["batch_size"], manifest.point["mode"]
        assert manifest.recipe.inputs.batch_size == int(batch) and manifest.recipe.compile.mode == mode
        assert manifest.metrics.compiled is not None


@pytest.mark.slow
def test_a_failing_point_leaves_the_other_and_is_marked(report: Report) -> None:
    ok = read_manifest(report.work / "results" / "sweep_fails--bs2")
    failed = read_manifest(report.work / "results" / "sweep_fails--bs3")
    assert ok.status is RunStatus.ok and failed.status is RunStatus.failed
    assert failed.error is not None and "planted failure at batch 3" in failed.error
    text = report.text("sweep_fails--bs2", "sweep")
    assert "1 of 2 points did not finish" in text and "sweep_fails--bs3 : failed" in text
    rows = re.findall(r"<tr[^>]*>.*?</tr>", report.html_path("sweep_fails--bs2", "sweep").read_text(), re.S)
    assert any("bs3" in row and ">failed<" in row for row in rows)


@pytest.mark.slow
def test_the_sweep_page_has_a_chart_per_axis_and_a_linked_row_per_point(report: Report) -> None:
    page = report.html_path("sweep_tiny--bs64-def", "sweep")  # the first point by name writes it
    raw = page.read_text(encoding="utf-8")
    images = re.findall(r'<img [^>]*src="([^"]+)"', raw)
    assert len(images) == 2 and all((page.parent / src).is_file() for src in images)
    assert "4 points over batch_size , mode" in report.text("sweep_tiny--bs64-def", "sweep")
    links = re.findall(r'href="([^"]+)"', raw)
    for name in TINY_POINTS:
        target = next(link for link in links if f"sweep_tiny--{name}/index.html" in link)
        assert (page.parent / target).resolve().is_file()
    assert "The best compile mode by batch size" in report.text("sweep_tiny--bs64-def", "sweep")


@pytest.mark.slow
def test_every_point_links_the_sweep_page(report: Report) -> None:
    for name in TINY_POINTS:
        page = report.html_path(f"sweep_tiny--{name}")
        assert "This run is one point of a sweep of 4 points" in report.text(f"sweep_tiny--{name}")
        link = next(h for h in re.findall(r'href="([^"]+)"', page.read_text()) if h.endswith("sweep.html"))
        assert (page.parent / link).resolve() == report.html_path("sweep_tiny--bs64-def", "sweep").resolve()


@pytest.mark.slow
def test_the_reports_index_links_each_sweeps_page(report: Report) -> None:
    index = report.work / "site" / "_build" / "html" / "reports" / "index.html"
    links = [h for h in re.findall(r'href="([^"]+)"', index.read_text(encoding="utf-8")) if h.endswith("sweep.html")]
    pages = sorted((index.parent / link).resolve() for link in links)
    assert pages == sorted(p.resolve() for p in (index.parent).glob("*/sweep.html")) and len(pages) == 2


@pytest.mark.slow
def test_history_keeps_each_point(report: Report) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "reportgen", "history", "results", "--recipe", "sweep_tiny"],
        cwd=report.work, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    for name in TINY_POINTS:
        assert f"sweep_tiny--{name}" in listed.stdout


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize(
    "path",
    ["sweep_tiny--bs64-def/sweep.html", "sweep_tiny--bs8-ro/index.html", "sweep_fails--bs2/sweep.html"],
)
def test_the_sweep_pages_load_in_a_browser(report: Report, browser: Browser, path: str) -> None:
    assert_page_is_whole(browser, report.work / "site" / "_build" / "html", f"reports/{path}")
