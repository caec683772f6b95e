"""Tests of reportgen.render.incremental: only changed bundles are rendered, and the pages equal a clean render."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import RunStatus, write_bundle
from reportgen.render import render_site_pages
from reportgen.render.incremental import STATE_FILE
from reportgen.render.index import OVERVIEW_FILE

MakeBundle = Callable[..., Path]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _mtimes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _without_state(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if name != STATE_FILE}


def test_render_site_pages(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, reports = tmp_path / "results", tmp_path / "site" / "reports"
    make_bundle(results, "ok-run")
    make_bundle(results, "failed-run", status=RunStatus.failed)
    (results / "corrupt").mkdir()
    (results / "corrupt" / "manifest.json").write_text("{not json")
    pages = render_site_pages(results, reports)
    assert pages == [reports / "index.md", reports / "failed-run" / "index.md", reports / "ok-run" / "index.md"]
    assert sorted(p.name for p in (reports / "ok-run").iterdir()) == [
        "index.md",
        "manifest.json",
        "ok-run-categories.png",  # named after the bundle: Sphinx copies all images into one folder
        "ok-run-step_times.png",
        "ok-run-top_kernels.png",
        "recipe.yaml",
        "reproduce.ipynb",
    ]
    failed_files = sorted(p.name for p in (reports / "failed-run").iterdir())
    assert failed_files == ["index.md", "manifest.json", "recipe.yaml", "reproduce.ipynb"]
    assert (reports / "ok-run" / "index.md").read_text().startswith("---\norphan: true\n---\n\n# ok\\-run\n")
    assert "log line 99" in (reports / "failed-run" / "index.md").read_text()
    index = (reports / "index.md").read_text()
    assert "Bundle `corrupt` could not be read" in index
    assert sorted(p.name for p in reports.parent.iterdir()) == ["reports"]
    assert sorted(p.name for p in reports.iterdir()) == [
        STATE_FILE,
        "failed-run",
        "index.md",
        "ok-run",
        OVERVIEW_FILE,
        "speedups.png",
    ]


def test_render_site_pages_without_bundles_removes_their_pages(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, reports = tmp_path / "results", tmp_path / "reports"
    make_bundle(results, "gone")
    make_bundle(results, "stays")
    render_site_pages(results, reports)
    assert (reports / "gone" / "index.md").exists()
    shutil.rmtree(results / "gone")
    render_site_pages(results, reports)
    assert not (reports / "gone").exists()
    assert "gone" not in (reports / "index.md").read_text()
    render_site_pages(tmp_path / "empty", reports)
    assert (reports / "index.md").read_text() == "# Reports\n\nNo reports yet.\n"
    assert sorted(p.name for p in reports.iterdir()) == [STATE_FILE, "index.md", OVERVIEW_FILE]


def test_a_rebuild_with_nothing_changed_writes_nothing(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, reports = tmp_path / "results", tmp_path / "reports"
    for name in ("a", "b"):
        make_bundle(results, name)
    render_site_pages(results, reports)
    before = _mtimes(reports)
    render_site_pages(results, reports)
    assert _mtimes(reports) == before


def test_a_changed_bundle_re_renders_only_its_pages(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, reports = tmp_path / "results", tmp_path / "reports"
    for name in ("a", "b", "c"):
        make_bundle(results, name, title=f"{name} before")
    render_site_pages(results, reports)
    before = _mtimes(reports)
    make_bundle(results, "b", title="b after", kernels=[("triton_poi_fused_new_0", "triton_pointwise", 10.0, 1)])
    render_site_pages(results, reports)
    after = _mtimes(reports)
    changed = {name for name in after if after[name] != before.get(name)}
    assert {"b/index.md", "b/b-top_kernels.png", "index.md"} <= changed
    # a's and c's files untouched; the front page's overview names b's new title
    assert {name.split("/")[0] for name in changed} == {"b", "index.md", OVERVIEW_FILE, STATE_FILE}
    assert "b/b-step_times.png" not in changed  # the same step times: the same image, left alone
    assert "b after" in (reports / "b" / "index.md").read_text()
    clean = tmp_path / "clean"
    render_site_pages(results, clean)
    assert _without_state(_files(reports)) == _without_state(_files(clean))


def test_a_variant_renders_again_when_a_sibling_changes(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """The variants table of a page shows its siblings' numbers: their change is its change."""
    results, reports = tmp_path / "results", tmp_path / "reports"
    for name in ("mix--fast", "mix--slow"):
        _as_variant(make_bundle(results, name))
    render_site_pages(results, reports)
    before = (reports / "mix--slow" / "index.md").read_text()
    _as_variant(make_bundle(results, "mix--fast", kernels=[("triton_poi_fused_new_0", "triton_pointwise", 10.0, 1)]))
    render_site_pages(results, reports)
    assert (reports / "mix--slow" / "index.md").read_text() != before
    clean = tmp_path / "clean"
    render_site_pages(results, clean)
    assert _without_state(_files(reports)) == _without_state(_files(clean))


def _as_variant(bundle: Path) -> None:
    """Mark the bundle `<recipe>--<variant>` as the run of that variant (as `reportgen run` writes it)."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["variant"] = bundle.name.split("--")[1]
    write_bundle(bundle.parent, bundle.name, lambda tmp: _copy_with(bundle, tmp, manifest))


def _copy_with(bundle: Path, tmp: Path, manifest: dict[str, object]) -> object:
    from reportgen.bundle import Manifest

    for path in bundle.iterdir():
        if path.name != "manifest.json" and path.is_file():
            shutil.copyfile(path, tmp / path.name)
    return Manifest.model_validate(manifest)


def test_a_lost_record_or_page_renders_again(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A build killed while rendering has dropped the bundles it was rendering from the record; a page
    deleted by hand is missing: either way the bundle is rendered again."""
    results, reports = tmp_path / "results", tmp_path / "reports"
    make_bundle(results, "a")
    render_site_pages(results, reports)
    expected = _files(reports)
    (reports / STATE_FILE).write_text("{broken")
    (reports / "a" / "index.md").write_text("half written")
    (reports / "a" / "stale.md").write_text("left by an older version")
    render_site_pages(results, reports)
    assert _files(reports) == expected
    (reports / "a" / "recipe.yaml").unlink()
    render_site_pages(results, reports)
    assert _files(reports) == expected
