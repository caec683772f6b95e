"""Tests of reportgen.site: a real `sphinx-build -W` of canned bundles."""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import RunStatus
from reportgen.errors import SiteError
from reportgen.pipeline import build as build_site
from reportgen.site import build as site
from reportgen.site.stamp import BuildStamp, changed_documents
from reportgen.site.trees import LEFTOVERS, tree_dirs

MakeBundle = Callable[..., Path]


def test_build_site_with_ok_and_failed_bundles(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, source = tmp_path / "results", tmp_path / "site"
    make_bundle(results, "mixnet", title="Mixnet <b>L</b> {eval-rst}")
    make_bundle(results, "crash", status=RunStatus.failed)
    html = build_site(results, source)
    assert html == source / "_build" / "html"
    assert (source / "conf.py").exists()
    report = (html / "reports" / "mixnet" / "index.html").read_text()
    for name in ("triton_per_fused__native_batch_norm_legit_functional_0", "triton_red_fused_sum_2"):
        assert name in report
    assert "Mixnet &lt;b&gt;L&lt;/b&gt; {eval-rst}" in report
    images = re.findall(r'<img [^>]*src="([^"]+)"', report)
    assert len(images) == 3
    for src in images:
        assert (html / "reports" / "mixnet" / src).resolve().is_file()
    failed = (html / "reports" / "crash" / "index.html").read_text()
    assert "illegal memory access &lt;b&gt;was&lt;/b&gt;" in failed
    index = (html / "reports" / "index.html").read_text()
    assert 'href="mixnet/index.html"' in index
    assert 'href="crash/index.html"' in index
    # A new site's front page leads with the state of the runs: the failed run first (issue 29).
    front = (html / "index.html").read_text()
    assert "State of the runs" in front and "2 runs: 1 failed, 1 ok." in front
    assert front.index('href="reports/crash/index.html"') < front.index('href="reports/mixnet/index.html"')


def test_build_site_keeps_existing_project(tmp_path: Path) -> None:
    source = tmp_path / "site"
    source.mkdir()
    (source / "conf.py").write_text('project = "mine"\nextensions = ["myst_parser"]\n')
    (source / "index.md").write_text("# Mine\n\n```{toctree}\nreports/index\n```\n")
    html = build_site(tmp_path / "no-results", source, tmp_path / "html")
    assert html == tmp_path / "html"
    assert "No reports yet." in (html / "reports" / "index.html").read_text()
    assert (source / "conf.py").read_text().startswith('project = "mine"')


def test_build_site_failure_raises_site_error(tmp_path: Path) -> None:
    source = tmp_path / "site"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_parser"]\n')
    (source / "index.md").write_text("# Index\n\n```{toctree}\nreports/index\nmissing-page\n```\n")
    with pytest.raises(SiteError) as info:
        build_site(tmp_path / "results", source)
    assert info.value.message.startswith("sphinx-build failed with exit code 1:")
    assert "missing-page" in info.value.message


# --- incremental builds ----------------------------------------------------------------------------

GPU_BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundles" / "fused_add_mul"


def _site(html: Path) -> dict[str, bytes]:
    """Every file of the published tree: Sphinx's doctrees and reportgen's stamp are kept outside it (`site.state`)."""
    root = html.resolve()
    files = (p for p in sorted(root.rglob("*")) if p.is_file())
    site = {p.relative_to(root).as_posix(): p.read_bytes() for p in files}
    assert not [name for name in site if name.startswith(LEFTOVERS)]
    return site


def _mtimes(html: Path) -> dict[str, int]:
    root = html.resolve()
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_an_incremental_build_equals_a_clean_build(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """Change one bundle, add one, remove one: the rebuilt site equals a site built from scratch, file for file."""
    results = tmp_path / "results"
    for name in ("alpha", "beta", "gamma"):
        make_bundle(results, name, title=f"{name} before")
    shutil.copytree(GPU_BUNDLE, results / "h200-fused_add_mul")
    html = build_site(results, tmp_path / "site")
    first = html.resolve()
    make_bundle(results, "beta", title="beta after", kernels=[("triton_poi_fused_new_0", "triton_pointwise", 10.0, 1)])
    make_bundle(results, "delta", title="delta added")
    shutil.rmtree(results / "gamma")
    assert build_site(results, tmp_path / "site") == html
    assert html.is_symlink() and html.resolve() != first  # published by switching the link to the other tree
    clean = build_site(results, tmp_path / "clean")
    site = _site(html)
    assert site == _site(clean)
    assert not any(name.startswith(("reports/gamma/", "_sources/reports/gamma/")) for name in site)
    assert not any("gamma" in name for name in site if name.startswith(("_images/", "_downloads/")))
    assert "beta after" in site["reports/beta/index.html"].decode()


def test_a_change_builds_only_its_runs_pages_and_equals_a_clean_build(
    tmp_path: Path, make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: each run's pages are a unit of their own (`site.units`). In a site of 20 bundles, three changed
    bundles build their three units (and the site's own pages), and the site equals a clean build of the same
    sources; the front page edited builds every unit again (the sidebar of every page shows it)."""
    results = tmp_path / "results"
    for i in range(20):
        make_bundle(results, f"b{i:02d}", title=f"b{i:02d} before")
    built: list[list[str]] = []
    build_units = site.build_units

    def spy(source: Path, work: Path, units: list[str], *args: object) -> None:
        built.append(list(units))
        build_units(source, work, units, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(site, "build_units", spy)
    html = build_site(results, tmp_path / "site")
    assert built == [[f"b{i:02d}" for i in range(20)]]
    published = html.resolve()
    other = next(tree for tree in tree_dirs(html) if tree != published)
    assert _site(other) == _site(published)  # made a copy after the clean build: the next one copies its changes only
    for i in range(3):
        make_bundle(results, f"b{i:02d}", title=f"b{i:02d} after")
    build_site(results, tmp_path / "site")
    assert {unit.split("~")[0] for unit in built[-1]} == {"b00", "b01", "b02"}  # (each with its kept run)
    assert "b01 after" in (html / "reports" / "b01" / "index.html").read_text()
    assert _site(html) == _site(build_site(results, tmp_path / "clean"))
    front = "# torch.compile reports\n\nOur nightly runs.\n\n```{toctree}\nreports/index\n```\n"
    for source in (tmp_path / "site", tmp_path / "clean"):
        (source / "index.md").write_text(front)  # kept by the build: the user's front page
    build_site(results, tmp_path / "site")
    assert len(built[-1]) == 23
    assert "Our nightly runs." in (html / "index.html").read_text()
    assert _site(html) == _site(build_site(results, tmp_path / "clean"))


def test_changed_documents_counts_sources_added_changed_and_removed() -> None:
    before = BuildStamp(inputs="x", sources={"index.md": (1, 1), "a.md": (1, 1), "gone.md": (1, 1), "a.png": (1, 1)})
    after = BuildStamp(inputs="x", sources={"index.md": (1, 1), "a.md": (2, 2), "new.md": (1, 1), "a.png": (3, 3)})
    assert changed_documents(before, after) == (3, 3)  # a changed, new added, gone removed; images do not count
    assert changed_documents(before, before) == (0, 3)
    assert changed_documents(None, after) == (3, 3)
    assert changed_documents(before.model_copy(update={"inputs": "y"}), before) == (3, 3)  # reportgen or Sphinx changed


def test_a_rebuild_with_nothing_changed_does_not_run_sphinx(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results = tmp_path / "results"
    make_bundle(results, "alpha")
    html = build_site(results, tmp_path / "site")
    published, before = html.resolve(), _mtimes(html)
    build_site(results, tmp_path / "site")
    assert html.resolve() == published
    assert _mtimes(html) == before
    (tmp_path / "site" / "index.md").write_text("# Changed by hand\n\n```{toctree}\nreports/index\n```\n")
    build_site(results, tmp_path / "site")
    assert html.resolve() != published
    assert "Changed by hand" in (html / "index.html").read_text()


def test_a_site_built_before_the_trees_becomes_a_link(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """An HTML directory of an older reportgen (a plain directory) is the starting point, then replaced by the link."""
    results, source = tmp_path / "results", tmp_path / "site"
    make_bundle(results, "alpha")
    html = build_site(results, source)
    shutil.copytree(html.resolve(), tmp_path / "plain")
    shutil.rmtree(html.resolve())
    html.unlink()
    (tmp_path / "plain").rename(html)
    make_bundle(results, "beta")
    build_site(results, source)
    assert html.is_symlink()
    assert 'href="beta/index.html"' in (html / "reports" / "index.html").read_text()
    assert sorted(p.name for p in html.parent.iterdir()) == [
        ".html-a",
        ".html-b",
        ".html-state",
        "html",
    ]  # the plain one is gone


def test_the_build_inputs_do_not_depend_on_the_directory_it_was_started_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sys.path[0]` is the working directory under `python -m reportgen` (a repository root holds an egg-info):
    building from another directory must not count as new inputs (it rebuilt an unchanged site). A distribution
    installed on the rest of the path still does."""
    checkout, elsewhere, site_packages = (tmp_path / name for name in ("checkout", "elsewhere", "site-packages"))
    for directory in (checkout, elsewhere, site_packages):
        directory.mkdir()
    (checkout / "reportgen.egg-info").mkdir()
    rest = list(sys.path[1:])
    monkeypatch.setattr(sys, "path", [str(checkout), str(site_packages), *rest])
    from_checkout = site._inputs()
    monkeypatch.setattr(sys, "path", [str(elsewhere), str(site_packages), *rest])
    assert site._inputs() == from_checkout
    (site_packages / "furo-9999.dist-info").mkdir()
    assert site._inputs() != from_checkout


def test_a_changed_sphinx_configuration_leaves_no_backup_of_its_build_info(
    tmp_path: Path, make_bundle: MakeBundle
) -> None:
    """Sphinx moves a `.buildinfo` of another configuration to `.buildinfo.bak`; the site is still a clean
    build's, file for file."""
    results = tmp_path / "results"
    make_bundle(results, "alpha")
    html = build_site(results, tmp_path / "site")
    info = html.resolve() / ".buildinfo"
    info.write_text(re.sub(r"config: \w+", "config: 0123456789abcdef", info.read_text()))
    make_bundle(results, "alpha", title="alpha after")
    build_site(results, tmp_path / "site")
    assert not (html / ".buildinfo.bak").exists()
    assert _site(html) == _site(build_site(results, tmp_path / "clean"))
