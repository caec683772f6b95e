"""Tests of reportgen.render.index (the reports index: rows kept between builds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import RunStatus, load_bundle
from reportgen.render.index import BrokenBundle, IndexEntry, index_entry, index_page
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
    ok_row = (
        f"* - [{title}](<a-ok/index.md>)\n  - `timm:\u200bmixnet_l`\n  - NVIDIA H100 80GB HBM3\n  - 2\\.11.0\\+cu130"
    )
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
