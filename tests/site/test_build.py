"""Tests of reportgen.site: a real `sphinx-build -W` of canned bundles."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import RunStatus
from reportgen.errors import SiteError
from reportgen.pipeline import build as build_site

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
