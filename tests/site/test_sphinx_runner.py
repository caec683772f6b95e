"""Tests of reportgen.site.sphinx_runner: sphinx-build that records the images and downloads its pages use."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.pipeline import build as build_site
from reportgen.site import ensure_project, stamp
from reportgen.site.sphinx_runner import OUTPUTS_FILE, install_hooks, quick_copyfile
from reportgen.site.state import state_dir

__all__: list[str] = []

MakeBundle = Callable[..., Path]
GPU_BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundles" / "fused_add_mul"
_USED = re.compile(r'(?:src|href)="(?:\.\./)*(_images/[^"#?]+|_downloads/[^"#?]+)"')


def _referenced(html: Path) -> tuple[set[str], set[str]]:
    """The images and downloads the published pages link to, read from their HTML."""
    found: set[str] = set()
    for page in html.resolve().rglob("*.html"):
        found.update(_USED.findall(page.read_text(encoding="utf-8")))
    return {f for f in found if f.startswith("_images/")}, {f for f in found if f.startswith("_downloads/")}


def test_the_build_records_what_its_pages_use_and_prunes_by_it(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results = tmp_path / "results"
    make_bundle(results, "alpha")
    shutil.copytree(GPU_BUNDLE, results / "h200-fused_add_mul")
    html = build_site(results, tmp_path / "site")
    doctrees = state_dir(html) / html.resolve().name.lstrip(".") / "doctrees"
    records = [doctrees / OUTPUTS_FILE, *(doctrees / "units").glob("*[!h].json")]  # the site's own, each unit's
    assert len(records) == 3
    recorded = [json.loads(path.read_text(encoding="utf-8")) for path in records]
    images, downloads = _referenced(html)
    assert images and downloads
    assert ({i for r in recorded for i in r["images"]}, {d for r in recorded for d in r["downloads"]}) == (
        images,
        downloads,
    )
    shutil.rmtree(results / "h200-fused_add_mul")
    html = build_site(results, tmp_path / "site")
    tree = html.resolve()
    present = {p.relative_to(tree).as_posix() for d in ("_images", "_downloads") for p in (tree / d).rglob("*")}
    images, downloads = _referenced(html)
    assert {p for p in present if (tree / p).is_file()} == images | downloads  # the removed bundle's are gone


def test_without_the_record_the_environment_is_read(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A Sphinx whose `build.Sphinx` moved writes no record: pruning falls back to Sphinx's environment."""
    html = build_site(make_bundle(tmp_path / "results", "alpha").parent, tmp_path / "site")
    doctrees = state_dir(html) / html.resolve().name.lstrip(".") / "doctrees"
    from_record = stamp._env_outputs(doctrees)
    (doctrees / OUTPUTS_FILE).unlink()
    from_environment = stamp._env_outputs(doctrees)
    assert from_record is not None and from_record[0]
    assert from_environment == from_record
    (doctrees / OUTPUTS_FILE).write_text('{"images": "not a list", "downloads": []}', encoding="utf-8")
    assert stamp._env_outputs(doctrees) == from_record  # a malformed record is not trusted either


def test_a_copy_with_its_sources_size_and_mtime_is_not_read_again(tmp_path: Path) -> None:
    copied: list[str] = []

    def copy(source: Path, dest: Path, **kwargs: object) -> None:
        copied.append(Path(dest).name)
        Path(dest).unlink(missing_ok=True)
        shutil.copy2(source, dest)

    quick = quick_copyfile(copy)
    source, dest = tmp_path / "trace.json.gz", tmp_path / "copy.json.gz"
    source.write_bytes(b"new trace")
    quick(source, dest, force=True)  # no copy yet
    assert copied == ["copy.json.gz"] and dest.read_bytes() == b"new trace"
    quick(source, dest, force=True)  # same size and mtime: kept, not read
    assert copied == ["copy.json.gz"]
    source.write_bytes(b"old trace")  # same size, a new mtime: copied
    os.utime(source, ns=(source.stat().st_atime_ns, dest.stat().st_mtime_ns + 1))
    quick(source, dest, force=True)
    assert copied == ["copy.json.gz"] * 2 and dest.read_bytes() == b"old trace"
    dest.unlink()
    dest.symlink_to(source)  # a link where the copy belongs is never taken for the copy
    quick(source, dest, force=True)
    assert copied == ["copy.json.gz"] * 3


def test_the_runner_hooks_the_names_this_sphinx_has(monkeypatch: pytest.MonkeyPatch) -> None:
    import sphinx.builders.html as html
    import sphinx.cmd.build as build

    monkeypatch.setattr(build, "Sphinx", build.Sphinx)  # restored after the test
    monkeypatch.setattr(html, "copyfile", html.copyfile)
    assert install_hooks() == ["sphinx.cmd.build.Sphinx", "sphinx.builders.html.copyfile"]
    monkeypatch.delattr(build, "Sphinx")
    monkeypatch.delattr(html, "copyfile")
    assert install_hooks() == []  # a Sphinx that moved them: the build runs as Sphinx alone would


def test_a_record_that_is_a_link_or_a_fifo_is_not_read(tmp_path: Path, make_bundle: MakeBundle) -> None:
    html = build_site(make_bundle(tmp_path / "results", "alpha").parent, tmp_path / "site")
    doctrees = state_dir(html) / html.resolve().name.lstrip(".") / "doctrees"
    expected = stamp._env_outputs(doctrees)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"images": [], "downloads": []}', encoding="utf-8")
    (doctrees / OUTPUTS_FILE).unlink()
    (doctrees / OUTPUTS_FILE).symlink_to(elsewhere)
    assert stamp._env_outputs(doctrees) == expected  # the environment, not the link's target
    (doctrees / OUTPUTS_FILE).unlink()
    os.mkfifo(doctrees / OUTPUTS_FILE)
    assert stamp._env_outputs(doctrees) == expected  # no wait on a FIFO


@pytest.mark.parametrize("schemes", ['["http", "https"]', '{"https": None, "gh": "https://github.com/{{path}}"}'])
def test_links_between_runs_are_pages_whatever_url_schemes_the_site_sets(
    tmp_path: Path, make_bundle: MakeBundle, schemes: str
) -> None:
    """A site's conf.py may set `myst_url_schemes` (a list or a dict); `reportgen-page:` links still become the
    HTML pages, and the site's own schemes still work."""
    results, source = tmp_path / "results", tmp_path / "site"
    make_bundle(results, "alpha")
    ensure_project(source)
    conf = source / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + f"myst_url_schemes = {schemes}\n", encoding="utf-8")
    (source / "extra.md").write_text("---\norphan: true\n---\n# Extra\n\n[home](https://example.org/)\n")
    html = build_site(results, source)
    assert 'href="alpha/index.html"' in (html / "reports" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://example.org/"' in (html / "extra.html").read_text(encoding="utf-8")
