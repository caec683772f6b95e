"""A sweep point's section and the sweep page (reportgen.render.sweep_pages): who writes it, what it links."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import matplotlib.image
import pytest
from matplotlib.figure import Figure

from reportgen.bundle import Bundle, PointFigures, RunStatus, Series, load_bundle
from reportgen.render.sweep import sweep_page
from reportgen.render.sweep_charts import sweep_chart
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


def test_the_sweep_pages_title_says_sweep_once() -> None:
    assert sweep_page("mixnet_l, AMP", [], {}).startswith("# mixnet\\_l, AMP\\: sweep\n")
    assert sweep_page("mixnet_l: a Sweep", [], {}).startswith("# mixnet\\_l\\: a Sweep\n")


def test_a_kept_earlier_run_writes_no_sweep_page(tmp_path: Path, make_bundle: MakeBundle) -> None:
    kept = _point(tmp_path, make_bundle, "bs8-def", "8", "default")
    latest = [_point(tmp_path, make_bundle, "bs64-def", "64", "default")]
    section, files = group_section(kept, latest, tmp_path)
    assert files == [] and "This earlier run was one point of a sweep" in section


def test_each_panel_shows_every_line_eager_above_compiled_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real sweep (mixnet_l on an H200) had eager steps of 99 ms above compiled ones of 60-70 ms: the eager line
    was cut at the compiled line's top. Every panel's y range holds all of its lines."""
    points = tuple(
        PointFigures(name=f"bs{b}", point={"batch_size": str(b)}, status=RunStatus.ok, batch=b, eager_ms=e,
                     compiled_ms=c, speedup=e / c, device_speedup=3.0, compile_s=100.0, peak_compiled_bytes=1 << 30)
        for b, e, c in ((8, 57.6, 11.2), (128, 98.6, 60.2))
    )  # fmt: skip
    saved: list[Figure] = []
    save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), save(self, *a, **k))[1])
    line = Series(axis="batch_size", label="mode default", points=points)
    path = sweep_chart([line], "batch_size", tmp_path / "s.png")
    assert matplotlib.image.imread(path).shape[0] > 100
    steps, speedup, throughput = saved[0].axes[:3]
    assert steps.get_ylim()[0] == 0 and steps.get_ylim()[1] >= 98.6
    assert speedup.get_ylim()[1] >= 57.6 / 11.2  # wall 5.1x above the device's 3.0x
    assert throughput.get_ylim()[1] >= 128 / 0.0602  # compiled samples/s above eager's
