"""Bundles are untrusted: nothing outside a bundle is read, and no link or special file is followed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from reportgen.bundle import bundle_file, load_bundle, read_log_tail, read_recipe_text
from reportgen.errors import BundleError
from reportgen.pipeline import build
from tests.data import BUNDLES_DIR

SECRET = b"outside-secret-7f3a9c"


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    path = tmp_path / "b"
    path.mkdir()
    (path / "data.json").write_text("{}")
    (path / "sub").mkdir()
    (path / "sub" / "file.py").write_text("x = 1\n")
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_bytes(SECRET)
    return path


def test_a_regular_file_inside(bundle: Path) -> None:
    assert bundle_file(bundle, "sub/file.py") == bundle / "sub" / "file.py"


@pytest.mark.parametrize(
    ("relative", "message"),
    [
        ("../outside.txt", "leads outside the bundle"),
        ("/etc/passwd", "leads outside the bundle"),
        ("sub/../../outside.txt", "leads outside the bundle"),
        ("", "leads outside the bundle"),
        ("missing.json", "missing missing.json"),
        ("sub", "not a regular file"),
    ],
)
def test_paths_that_are_refused(bundle: Path, relative: str, message: str) -> None:
    with pytest.raises(BundleError, match=message):
        bundle_file(bundle, relative)


def test_links_special_files_and_size(bundle: Path, outside: Path) -> None:
    (bundle / "link.json").symlink_to(outside)
    (bundle / "linkdir").symlink_to(outside.parent)
    os.link(outside, bundle / "hard.json")
    os.mkfifo(bundle / "fifo.log")
    with pytest.raises(BundleError, match="symbolic link"):
        bundle_file(bundle, "link.json")
    with pytest.raises(BundleError, match="symbolic link"):
        bundle_file(bundle, "linkdir/outside.txt")
    with pytest.raises(BundleError, match="2 hard links"):
        bundle_file(bundle, "hard.json")
    with pytest.raises(BundleError, match="not a regular file"):
        bundle_file(bundle, "fifo.log")
    with pytest.raises(BundleError, match="over the 1-byte bound"):
        bundle_file(bundle, "data.json", max_bytes=1)
    assert read_log_tail(bundle, "fifo.log") is None  # no hang on a FIFO
    assert read_log_tail(bundle, "link.json") is None


def test_a_site_from_a_hostile_bundle_holds_nothing_from_outside(tmp_path: Path, outside: Path) -> None:
    results = tmp_path / "results"
    bundle = results / "hostile"
    shutil.copytree(BUNDLES_DIR / "fused_add_mul", bundle)
    (bundle / "trace.json.gz").unlink()
    (bundle / "trace.json.gz").symlink_to(outside)  # the trace download
    (bundle / "recipe.yaml").unlink()
    os.link(outside, bundle / "recipe.yaml")  # the recipe copy and notebook
    (bundle / "run.log").unlink()
    os.mkfifo(bundle / "run.log")
    (bundle / "modules" / "wrappers").mkdir(parents=True)
    (bundle / "modules" / "wrappers" / "evil.py").symlink_to(outside)  # the modules archive
    assert read_recipe_text(bundle) is None
    assert load_bundle(bundle).manifest.name
    html = build(results, tmp_path / "site")
    assert (html / "reports" / "hostile" / "index.html").is_file()
    leaked = [p for p in (tmp_path / "site").rglob("*") if p.is_file() and SECRET in p.read_bytes()]
    assert leaked == []
    for name in ("trace.json.gz", "recipe.yaml"):
        assert not (tmp_path / "site" / "reports" / "hostile" / name).exists()
