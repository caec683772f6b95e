"""Tests of reportgen.render.downloads: files next to a report page, and its "Downloads" section."""

from __future__ import annotations

import gzip
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from reportgen.bundle import RunStatus, load_bundle
from reportgen.pipeline import build as build_site
from reportgen.render.downloads import Download, downloads_section, write_downloads, write_modules_archive

MakeBundle = Callable[..., Path]
TRACE = {"traceEvents": [{"name": "ProfilerStep#1", "ph": "X", "ts": 0, "dur": 10}]}


def _with_trace_and_modules(bundle_dir: Path) -> Path:
    (bundle_dir / "trace.json.gz").write_bytes(gzip.compress(json.dumps(TRACE).encode()))
    (bundle_dir / "modules" / "wrappers").mkdir(parents=True)
    (bundle_dir / "modules" / "wrappers" / "cabc.py").write_text("def call(args): ...\n")
    (bundle_dir / "modules" / "kernels").mkdir()
    (bundle_dir / "modules" / "kernels" / "k0.py").write_text("# kernel\n")
    return bundle_dir


def test_write_downloads(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(_with_trace_and_modules(make_bundle(tmp_path / "results", "mixnet")))
    page_dir = tmp_path / "page"
    page_dir.mkdir()
    (page_dir / "recipe.yaml").write_text("name: mixnet\n")
    downloads = write_downloads(bundle, page_dir, "name: mixnet\n")
    files = ["reproduce.ipynb", "recipe.yaml", "trace.json.gz", "modules.tar.gz", "manifest.json"]
    assert [d.file for d in downloads] == files
    assert all(d.size_bytes == (page_dir / d.file).stat().st_size for d in downloads)
    assert json.loads(gzip.decompress((page_dir / "trace.json.gz").read_bytes())) == TRACE
    assert (page_dir / "manifest.json").read_bytes() == (bundle.path / "manifest.json").read_bytes()
    nbformat.validate(nbformat.read(page_dir / "reproduce.ipynb", as_version=4))
    with tarfile.open(page_dir / "modules.tar.gz") as tar:
        assert tar.getnames() == ["modules/kernels/k0.py", "modules/wrappers/cabc.py"]
        member = tar.extractfile("modules/wrappers/cabc.py")
        assert member is not None and member.read() == b"def call(args): ...\n"


def test_modules_archive_is_reproducible(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = _with_trace_and_modules(make_bundle(tmp_path, "mixnet"))
    files = sorted(p for p in (bundle_dir / "modules").rglob("*") if p.is_file())
    first = write_modules_archive(bundle_dir, files, tmp_path / "a.tar.gz").read_bytes()
    (bundle_dir / "modules" / "kernels" / "k0.py").touch()
    assert write_modules_archive(bundle_dir, files, tmp_path / "b.tar.gz").read_bytes() == first


def test_failed_run_without_trace_or_recipe(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(make_bundle(tmp_path / "results", "crash", status=RunStatus.failed))
    page_dir = tmp_path / "page"
    page_dir.mkdir()
    assert [d.file for d in write_downloads(bundle, page_dir, None)] == ["manifest.json"]
    assert sorted(p.name for p in page_dir.iterdir()) == ["manifest.json"]


def test_downloads_section() -> None:
    downloads = [
        Download("reproduce.ipynb", 5000, "a notebook"),
        Download("trace.json.gz", 3 * 2**20, "the trace"),
        Download("manifest.json", 900, "the manifest"),
    ]
    assert downloads_section(downloads) == (
        "## Downloads\n\n"
        "- {download}`reproduce.ipynb <reproduce.ipynb>` (4.9 KiB): a notebook\n"
        "- {download}`trace.json.gz <trace.json.gz>` (3.0 MiB): the trace\n"
        "- {download}`manifest.json <manifest.json>` (900 B): the manifest"
    )
    assert downloads_section([]) == ""


def test_downloads_section_builds(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, source = tmp_path / "results", tmp_path / "site"
    _with_trace_and_modules(make_bundle(results, "mixnet"))
    make_bundle(results, "crash", status=RunStatus.failed)
    html = build_site(results, source)
    page = (source / "reports" / "mixnet" / "index.md").read_text()
    environment, downloads, recipe = (page.index(h) for h in ("## Environment", "## Downloads", "## Recipe"))
    assert environment < downloads < recipe
    assert "open it in <https://ui.perfetto.dev> or `chrome://tracing`" in page
    report = (html / "reports" / "mixnet" / "index.html").read_text()
    for name in ("reproduce.ipynb", "trace.json.gz", "modules.tar.gz", "manifest.json", "recipe.yaml"):
        links = [href for href in _download_links(report) if href.endswith(f"/{name}")]
        assert links, name
        assert (html / "reports" / "mixnet" / links[0]).resolve().is_file()
    assert 'href="https://ui.perfetto.dev"' in report
    crash = (html / "reports" / "crash" / "index.html").read_text()
    assert [href.rsplit("/", 1)[-1] for href in _download_links(crash)] == [
        "reproduce.ipynb",
        "recipe.yaml",
        "manifest.json",
        "recipe.yaml",
    ]


def _download_links(html: str) -> list[str]:
    return re.findall(r'<a class="reference download internal" download="" href="([^"]+)"', html)


GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_the_published_trace_has_its_credentials_redacted(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A `record_function("token=ghp_…")` span and a URL password in an arg of a bundle made elsewhere."""
    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    events = [
        {"name": f"token={GHP}", "cat": "user_annotation", "ph": "X", "ts": 0, "dur": 10},
        {"name": "aten::mm", "ph": "X", "ts": 1, "dur": 2, "args": {"url": "https://u:hunter22@h/x"}},
    ]
    (bundle_dir / "trace.json.gz").write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    page_dir = tmp_path / "page"
    page_dir.mkdir()
    write_downloads(load_bundle(bundle_dir), page_dir, None)
    published = gzip.decompress((page_dir / "trace.json.gz").read_bytes())
    assert GHP.encode() not in published and b"hunter22" not in published
    assert json.loads(published)["traceEvents"][0]["name"] == "token=[redacted]"


def test_a_trace_past_the_bounds_is_not_published(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    bomb = b'{"traceEvents": [' + b" " * (40 << 20) + b"]}"  # 40 MiB without a string: ~40 KB gzipped
    (bundle_dir / "trace.json.gz").write_bytes(gzip.compress(bomb, compresslevel=1))
    page_dir = tmp_path / "page"
    page_dir.mkdir()
    downloads = write_downloads(load_bundle(bundle_dir), page_dir, None)
    assert "trace.json.gz" not in [d.file for d in downloads]
    assert not (page_dir / "trace.json.gz").exists()


def test_the_modules_archive_stops_at_the_bundle_budget(
    tmp_path: Path, make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bundle of many large modules (each under the per-file bound) is archived only up to the modules budget
    per bundle (`bundle.MAX_MODULES_BYTES`), with one warning; the archive used to hold them all, in memory."""
    import reportgen.bundle.confine as confine

    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    kernels = bundle_dir / "modules" / "kernels"
    kernels.mkdir(parents=True)
    for number in range(40):
        (kernels / f"k{number:02d}.py").write_bytes(b"# kernel\n" * 10_000)  # 90,000 bytes each
    monkeypatch.setattr(confine, "MAX_MODULES_BYTES", 10 * 90_000)
    page_dir = tmp_path / "page"
    page_dir.mkdir()
    with caplog.at_level("WARNING"):
        write_downloads(load_bundle(bundle_dir), page_dir, None)
    with tarfile.open(page_dir / "modules.tar.gz") as tar:
        assert len(tar.getnames()) == 10
    assert sum("the modules archive stops at 900000 bytes" in r.message for r in caplog.records) == 1
