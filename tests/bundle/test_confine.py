"""Bundles are untrusted: nothing outside a bundle is read, and no link or special file is followed."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

import pytest

from reportgen.bundle import (
    MAX_WALK_DEPTH,
    bundle_digest,
    bundle_file,
    load_bundle,
    read_log_tail,
    read_recipe_text,
    walk_entries,
)
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


def test_a_walk_follows_no_link_and_lists_it(bundle: Path, caplog: pytest.LogCaptureFixture) -> None:
    (bundle / "sub" / "root").symlink_to("/", target_is_directory=True)
    (bundle / "modules").symlink_to("/", target_is_directory=True)
    with caplog.at_level(logging.WARNING):
        entries = walk_entries(bundle, "test walk")
        assert walk_entries(bundle / "modules", "test walk") == []
    assert [relative for relative, _, _ in entries] == ["data.json", "modules", "sub/file.py", "sub/root"]
    assert [r.getMessage() for r in caplog.records] == [
        f"{bundle / 'modules'}: test walk: a symbolic link, not followed"
    ]


def test_modules_linked_to_the_root_cost_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """`modules -> /` walked the whole file system (574,836 warnings, 80 s) when the site published the modules
    archive and hashed the bundle."""
    from reportgen.render.downloads import _module_files

    results = tmp_path / "results"
    bundle = results / "hostile"
    shutil.copytree(BUNDLES_DIR / "fused_add_mul", bundle)
    shutil.rmtree(bundle / "modules", ignore_errors=True)
    (bundle / "modules").symlink_to("/", target_is_directory=True)
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING):
        assert _module_files(bundle) == []
        bundle_digest(bundle)
    assert time.perf_counter() - started < 5
    assert len(caplog.records) == 1


def test_a_walk_is_bounded_in_depth_and_count(
    bundle: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = bundle / "deep"
    for level in range(MAX_WALK_DEPTH + 3):
        deep = deep / f"d{level}"
        deep.mkdir(parents=True)
        (deep / "f.txt").write_text("x")
    with caplog.at_level(logging.WARNING):
        entries = [relative for relative, _, _ in walk_entries(bundle, "test walk")]
    files = [r for r in entries if r.startswith("deep/")]
    assert len(files) == MAX_WALK_DEPTH - 1  # deep/ is level 1, its files are within the bound to level 8
    [warning] = [r.getMessage() for r in caplog.records]
    assert "test walk cut short" in warning and f"deeper than {MAX_WALK_DEPTH} levels" in warning
    caplog.clear()
    monkeypatch.setattr("reportgen.bundle.confine.MAX_WALK_ENTRIES", 40)
    for n in range(100):
        (bundle / f"many-{n}").write_text("x")
    with caplog.at_level(logging.WARNING):
        entries = [relative for relative, _, _ in walk_entries(bundle, "test walk")]
    assert len(entries) <= 40
    [warning] = [r.getMessage() for r in caplog.records]
    assert "over 40 entries" in warning


def test_a_site_of_several_hostile_results_directories_holds_nothing_from_outside(
    tmp_path: Path, outside: Path
) -> None:
    """A bundle directory linked to an outside bundle, a linked `.history`, and a hard link that the merge of
    several results directories would launder: the site publishes none of them."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(BUNDLES_DIR / "fused_add_mul", elsewhere / "secret")
    (elsewhere / "secret" / "recipe.yaml").write_bytes(b"# " + SECRET + b"\n")
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(BUNDLES_DIR / "fused_add_mul", a / "fused_add_mul")
    (a / "secret").symlink_to(elsewhere / "secret", target_is_directory=True)
    (a / ".history").symlink_to(elsewhere, target_is_directory=True)
    shutil.copytree(BUNDLES_DIR / "fused_add_mul", b / "other")
    (b / "other" / "run.log").unlink(missing_ok=True)
    os.link(outside, b / "other" / "run.log")
    html = build([a, b], tmp_path / "site")
    assert (html / "reports" / "fused_add_mul" / "index.html").is_file()
    leaked = [p for p in (tmp_path / "site").rglob("*") if p.is_file() and SECRET in p.read_bytes()]
    assert leaked == []
    assert not (html / "reports" / "secret").exists()
