"""A sweep point's section and the sweep page (reportgen.render.sweep_pages): who writes it, what it links."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import Bundle, load_bundle
from reportgen.render.sweep_pages import group_section

__all__: list[str] = []

MakeBundle = Callable[..., Path]


def _point(tmp_path: Path, make_bundle: MakeBundle, name: str, batch: str, mode: str) -> Bundle:
    bundle = load_bundle(make_bundle(tmp_path / "results", f"r--{name}"))
    manifest = bundle.manifest.model_copy(update={"variant": name, "point": {"batch_size": batch, "mode": mode}})
    return dataclasses.replace(bundle, manifest=manifest)


def test_the_first_point_writes_the_page_and_every_point_links_it(tmp_path: Path, make_bundle: MakeBundle) -> None:
    points = [
        _point(tmp_path, make_bundle, "bs8-def", "8", "default"),
        _point(tmp_path, make_bundle, "bs64-def", "64", "default"),
        _point(tmp_path, make_bundle, "bs8-ro", "8", "reduce-overhead"),
    ]
    leader = tmp_path / "leader"
    leader.mkdir()
    _, files = group_section(points[1], points, leader)  # "r--bs64-def" sorts first
    assert files[0] == "sweep.md" and len(files) == 3  # the page and one chart per axis
    assert all((leader / f).is_file() for f in files)
    page = (leader / "sweep.md").read_text()
    rows = page.split("## Points")[1].split("* - ")[2:]
    assert [row.split("\n")[0] for row in rows] == [
        "[bs8\\-def](<reportgen-page:../r--bs8-def/index>)",
        "[bs8\\-ro](<reportgen-page:../r--bs8-ro/index>)",
        "[bs64\\-def](<reportgen-page:../r--bs64-def/index>)",
    ]  # in the order of their values, numbers numerically
    other, none = group_section(points[0], points, tmp_path)
    assert none == [] and "a sweep of 3 points" in other and "../r--bs64-def/sweep" in other


def test_a_kept_earlier_run_writes_no_sweep_page(tmp_path: Path, make_bundle: MakeBundle) -> None:
    kept = _point(tmp_path, make_bundle, "bs8-def", "8", "default")
    latest = [_point(tmp_path, make_bundle, "bs64-def", "64", "default")]
    section, files = group_section(kept, latest, tmp_path)
    assert files == [] and "This earlier run was one point of a sweep" in section
