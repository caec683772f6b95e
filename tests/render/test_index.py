"""Tests of reportgen.render.index (the reports index: rows kept between builds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import Comparison, MetricChange, RunStatus, Side, load_bundle
from reportgen.render.index import BrokenBundle, IndexEntry, index_entry, index_page, overview_page
from reportgen.render.markup import escape_md

MakeBundle = Callable[..., Path]
GPU_BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundles" / "fused_add_mul"
EVIL_TITLE = "<script>alert(1)</script> {eval-rst} `x` [a](b) *b* | 1. %c"


def test_index_page(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundles = [
        load_bundle(make_bundle(tmp_path, "a-ok", title=EVIL_TITLE)),
        load_bundle(make_bundle(tmp_path, "b-failed", status=RunStatus.failed)),
    ]
    page = index_page([index_entry(b) for b in bundles], [BrokenBundle("c-bad", "manifest.json: invalid <JSON>")])
    assert "toctree" not in page  # report pages are orphans: adding one changes no other page's navigation
    assert "````{container} reportgen-index\n```{list-table}\n:header-rows: 1\n" in page
    title = escape_md(EVIL_TITLE)
    ok_row = f"* - [{title}](<reportgen-page:a-ok/index>)\n  - `timm:\u200bmixnet_l`\n  - NVIDIA H100 80GB HBM3\n  - 2\\.11.0\\+cu130"
    assert ok_row + "\n  - 2025-01-01\n  - 1.50×\n  - —\n  - 160.0 s\n  - ok\n" in page
    assert "  - 2025-01-01\n  - —\n  - —\n  - —\n  - **failed**\n  - —\n  - —\n```\n````" in page
    assert "speedups.png" not in page
    assert "<script>" not in page
    assert "```{warning}\nBundle `c-bad` could not be read: manifest.json\\: invalid \\<JSON\\>\n```" in page


def test_index_page_empty() -> None:
    assert index_page([]) == "# Reports\n\nNo reports yet.\n"


def test_index_page_busy_date_and_chart(tmp_path: Path) -> None:
    bundle = load_bundle(GPU_BUNDLE)
    page = index_page([index_entry(bundle)], speedup_chart="speedups.png")
    assert "  - 2026-11-22\n  - 0.94×\n  - infer\u00a075\n  - 3.5 s\n  - ok\n" in page
    assert "```{figure} speedups.png\n:alt: Speedup of torch.compile per run\n" in page


def test_index_entry_keeps_only_ok_speedups(tmp_path: Path, make_bundle: MakeBundle) -> None:
    ok = index_entry(load_bundle(make_bundle(tmp_path, "a-ok")))
    failed = index_entry(load_bundle(make_bundle(tmp_path, "b-failed", status=RunStatus.failed)))
    assert (ok.name, ok.speedup, failed.speedup) == ("a-ok", 1.5, None)
    assert index_page([IndexEntry("x", ok.row)]) == index_page([ok])  # the page is a function of the rows


def _comparison(name: str, verdict: str, kind: str = "device") -> Comparison:
    side = Side(bundle=name, status="ok")
    metric = MetricChange(
        name="device time per step, compiled", unit="ms", better="lower", before=1.0, after=1.2, gated=True,
        verdict=verdict, kind=kind, side="compiled",  # type: ignore[arg-type]
    )  # fmt: skip
    return Comparison(name=name, before=side, after=side, threshold=0.05, metrics=[metric])


def test_the_overview_leads_with_failures_then_regressions(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """Issue 29: the front page's state of the runs, failures first, then regressions, then moved figures."""
    entries = [
        index_entry(load_bundle(make_bundle(tmp_path, "a-ok"))),
        index_entry(load_bundle(make_bundle(tmp_path, "b-failed", status=RunStatus.failed))),
        index_entry(load_bundle(make_bundle(tmp_path, "c-oom", status=RunStatus.oom))),
        index_entry(load_bundle(make_bundle(tmp_path, "d-slower")), comparison=_comparison("d-slower", "regressed")),
        index_entry(load_bundle(make_bundle(tmp_path, "e-moved")), comparison=_comparison("e-moved", "changed")),
        index_entry(load_bundle(make_bundle(tmp_path, "f-evil", title=EVIL_TITLE))),
    ]
    page = overview_page(entries, [BrokenBundle("g-bad", "unreadable")])
    assert page.startswith("## State of the runs\n\n6 runs: 2 failed, 1 regressed, 1 changed, 2 ok; 1 bundle could")
    links = [line.split("(<")[1].split(">)")[0] for line in page.splitlines() if line.startswith("* - [")]
    order = ["b-failed", "c-oom", "d-slower", "e-moved", "a-ok", "f-evil"]
    assert links == [f"reportgen-page:reports/{name}/index" for name in order]
    assert "  - **failed**\n" in page and "  - **oom**\n" in page
    assert "[device time per step, compiled +20.0 %, **regressed**](<reportgen-page:reports/d-slower/compare>)" in page
    assert escape_md(EVIL_TITLE) in page and "<script>" not in page
    assert overview_page([]) == "## State of the runs\n\n0 runs: no runs yet.\n"
