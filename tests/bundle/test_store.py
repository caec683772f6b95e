"""Tests of reportgen.bundle.store: atomic writes, validated reads, listing."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import (
    DAMAGED_DIR,
    HISTORY_DIR,
    MANIFEST_FILE,
    Manifest,
    RunStatus,
    iter_bundles,
    load_bundle,
    read_analysis,
    read_analysis_error,
    read_log_tail,
    read_manifest,
    read_recipe_text,
    recover_dir,
    replace_dir,
    write_analysis,
    write_bundle,
)
from reportgen.errors import BundleError

MakeBundle = Callable[..., Path]


def test_write_and_load_round_trip(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path, "mixnet", title="Mixnet")
    bundle = load_bundle(bundle_dir)
    assert bundle.name == "mixnet"
    assert bundle.manifest.recipe.display_title == "Mixnet"
    assert bundle.manifest.metrics.speedup == pytest.approx(1.5)
    assert bundle.analysis is not None
    assert bundle.analysis.kernels.kernels[0].name.startswith("triton_per_fused")
    assert json.loads((bundle_dir / "manifest.json").read_text())["schema_version"] == 1
    assert read_recipe_text(bundle_dir) is not None
    assert [p.name for p in tmp_path.iterdir()] == ["mixnet"]


def test_failing_populate_keeps_previous_bundle(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path, "mixnet", title="First")

    def populate(tmp: Path) -> Manifest:
        (tmp / "partial.txt").write_text("half a bundle")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        write_bundle(tmp_path, "mixnet", populate)
    assert read_manifest(bundle_dir).recipe.display_title == "First"
    assert not (bundle_dir / "partial.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["mixnet"]


def test_rewrite_replaces_bundle(tmp_path: Path, make_bundle: MakeBundle) -> None:
    make_bundle(tmp_path, "mixnet", title="First")
    bundle_dir = make_bundle(tmp_path, "mixnet", status=RunStatus.failed, title="Second")
    manifest = read_manifest(bundle_dir)
    assert (manifest.recipe.display_title, manifest.status) == ("Second", RunStatus.failed)
    assert read_analysis(bundle_dir) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_DIR, "mixnet"]  # no leftover; the first run kept
    [first] = (tmp_path / HISTORY_DIR / "mixnet").iterdir()
    assert read_manifest(first).recipe.display_title == "First"
    assert read_analysis(first) is not None


def test_an_old_bundle_left_by_an_interrupted_swap_is_archived_not_deleted(
    tmp_path: Path, make_bundle: MakeBundle
) -> None:
    """Killed after the new bundle was renamed into place but before the old one was archived: the next write
    archives the one left beside it."""
    first = make_bundle(tmp_path, "mixnet", title="First")
    left = Path(shutil.copytree(first, tmp_path / ".old-mixnet-0123abcd"))
    manifest = json.loads((left / MANIFEST_FILE).read_text())
    (left / MANIFEST_FILE).write_text(json.dumps({**manifest, "started_at": "2024-12-31T00:00:00Z"}))
    make_bundle(tmp_path, "mixnet", title="Second")
    kept = sorted((tmp_path / HISTORY_DIR / "mixnet").iterdir())
    assert [read_manifest(k).started_at for k in kept] == ["2024-12-31T00:00:00Z", "2025-01-01T00:00:00Z"]
    assert read_manifest(tmp_path / "mixnet").recipe.display_title == "Second"
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_DIR, "mixnet"]


def test_recover_restores_old_dir_after_interrupted_swap(tmp_path: Path) -> None:
    old = tmp_path / ".old-site-0123abcd"
    old.mkdir()
    (old / "index.md").write_text("previous")
    (tmp_path / ".tmp-site-89abcdef").mkdir()
    (tmp_path / ".tmp-site-other-89abcdef").mkdir()
    recover_dir(tmp_path / "site")
    assert (tmp_path / "site" / "index.md").read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tmp-site-other-89abcdef", "site"]


def test_replace_dir_returns_populate_result(tmp_path: Path) -> None:
    result = replace_dir(tmp_path / "out", lambda tmp: (tmp / "a.txt").write_text("abc"))
    assert result == 3
    assert (tmp_path / "out" / "a.txt").read_text() == "abc"


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "..", "index.md", 'a"b', "a b", "/abs"])
def test_write_bundle_refuses_bad_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(BundleError, match="invalid bundle name"):
        write_bundle(tmp_path, name, lambda tmp: pytest.fail("populate called"))


def test_read_manifest_missing(tmp_path: Path) -> None:
    with pytest.raises(BundleError) as info:
        read_manifest(tmp_path)
    assert info.value.message == "missing manifest.json"
    assert info.value.path == str(tmp_path / "manifest.json")


def test_read_manifest_invalid_json(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{\n  "name": ,\n}')
    with pytest.raises(BundleError) as info:
        read_manifest(tmp_path)
    assert info.value.message == "invalid JSON: Expecting value"
    assert (info.value.line, info.value.column) == (2, 11)


def test_read_manifest_unknown_schema(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"schema_version": 7}')
    with pytest.raises(BundleError) as info:
        read_manifest(tmp_path)
    assert info.value.message == "unknown schema_version 7 (this reportgen reads 1)"


def test_read_manifest_validation_error(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path, "mixnet")
    data = json.loads((bundle_dir / "manifest.json").read_text())
    data["status"] = "exploded"
    del data["wall_time_s"]
    (bundle_dir / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(BundleError) as info:
        read_manifest(bundle_dir)
    assert info.value.message.startswith("invalid manifest.json: status: Input should be 'ok'")
    assert "wall_time_s: Field required" in info.value.message


def test_write_analysis_is_atomic_and_readable(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path, "mixnet", status=RunStatus.failed)
    assert read_analysis(bundle_dir) is None
    source = load_bundle(make_bundle(tmp_path, "other")).analysis
    assert source is not None
    write_analysis(bundle_dir, source)
    assert read_analysis(bundle_dir) == source
    assert sorted(p.name for p in bundle_dir.iterdir()) == [
        "analysis.json",
        "manifest.json",
        "recipe.yaml",
        "run.log",
    ]


def test_read_analysis_invalid(tmp_path: Path) -> None:
    (tmp_path / "analysis.json").write_text('{"schema_version": 1, "kernels": []}')
    with pytest.raises(BundleError, match=r"invalid analysis\.json: kernels: Input should be"):
        read_analysis(tmp_path)


def test_iter_bundles_sorted_skipping_hidden_and_incomplete(tmp_path: Path, make_bundle: MakeBundle) -> None:
    make_bundle(tmp_path, "zeta")
    make_bundle(tmp_path, "alpha")
    (tmp_path / ".tmp-beta-0123abcd").mkdir()
    (tmp_path / ".tmp-beta-0123abcd" / "manifest.json").write_text("{}")
    (tmp_path / "no-manifest").mkdir()
    (tmp_path / "file.txt").write_text("")
    assert [p.name for p in iter_bundles(tmp_path)] == ["alpha", "zeta"]
    assert list(iter_bundles(tmp_path / "missing")) == []


def test_read_log_tail(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path, "mixnet")
    tail = read_log_tail(bundle_dir, lines=3)
    assert tail == "log line 97\nlog line 98\nlog line 99"
    assert read_log_tail(bundle_dir, "../../etc/passwd") is None
    assert read_log_tail(bundle_dir, "missing.log") is None


def test_a_bundle_directory_that_is_a_link_to_an_outside_one_is_skipped(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    outside = make_bundle(tmp_path / "elsewhere", "secret")
    results = tmp_path / "results"
    make_bundle(results, "quickstart")
    (results / "secret").symlink_to(outside, target_is_directory=True)
    with caplog.at_level(logging.WARNING):
        assert [p.name for p in iter_bundles(results)] == ["quickstart"]
    [warning] = [r.getMessage() for r in caplog.records]
    assert str(results) in warning and "'secret'" in warning and "symbolic link" in warning


def test_a_manifest_that_is_a_link_or_a_fifo_makes_no_bundle(tmp_path: Path, make_bundle: MakeBundle) -> None:
    outside = make_bundle(tmp_path / "elsewhere", "secret")
    for name in ("linked", "fifo"):
        (tmp_path / "results" / name).mkdir(parents=True)
    (tmp_path / "results" / "linked" / MANIFEST_FILE).symlink_to(outside / MANIFEST_FILE)
    os.mkfifo(tmp_path / "results" / "fifo" / MANIFEST_FILE)
    assert list(iter_bundles(tmp_path / "results")) == []


@pytest.mark.parametrize("manifest", [None, b"{not json", b"[]"])
def test_a_damaged_bundle_directory_is_moved_aside_not_deleted(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture, manifest: bytes | None
) -> None:
    """A new run of the recipe replaces the directory; the user's files in it are kept, and one warning says
    where."""
    damaged = tmp_path / "mixnet"
    damaged.mkdir()
    (damaged / "my-notes.txt").write_text("the user's own notes")
    if manifest is not None:
        (damaged / MANIFEST_FILE).write_bytes(manifest)
    with caplog.at_level(logging.WARNING):
        make_bundle(tmp_path, "mixnet")
    [aside] = (tmp_path / DAMAGED_DIR).iterdir()
    assert aside.name.startswith("mixnet-") and (aside / "my-notes.txt").read_text() == "the user's own notes"
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert str(aside) in warning and "moved aside" in warning
    assert read_manifest(tmp_path / "mixnet").name == "mixnet"
    assert not (tmp_path / HISTORY_DIR).exists()
    (tmp_path / "mixnet" / "other.txt").write_text("more")
    (tmp_path / "mixnet" / MANIFEST_FILE).write_bytes(b"")
    make_bundle(tmp_path, "mixnet")  # most likely within the same second: a second place, not a merge
    assert len(list((tmp_path / DAMAGED_DIR).iterdir())) == 2


def test_a_stored_recipe_is_read_under_the_policy_it_ran_with(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """An earlier run whose recipe set a variable a later policy gates (`CXX`), or whose title holds a control
    character, stays readable: the run policy applies to recipes that run, not to kept results (they are escaped
    wherever shown)."""
    bundle_dir = make_bundle(tmp_path, "mixnet", title="Mixnet")
    data = json.loads((bundle_dir / MANIFEST_FILE).read_text())
    data["recipe"]["env"] = {"CXX": "/usr/bin/g++", "TORCH_COMPILE_DEBUG_DIR": "/tmp/x"}
    data["recipe"]["title"] = "Mixnet \x1b[31m"
    (bundle_dir / MANIFEST_FILE).write_text(json.dumps(data))
    manifest = read_manifest(bundle_dir)
    assert manifest.recipe.env["CXX"] == "/usr/bin/g++"
    assert manifest.recipe.title == "Mixnet \x1b[31m"
    from reportgen.recipe import Recipe

    with pytest.raises(ValueError, match="control character"):  # the same recipe, to run: refused
        Recipe.model_validate(data["recipe"])
    with pytest.raises(ValueError, match="allow_env"):
        Recipe.model_validate({**data["recipe"], "title": "Mixnet"})


def test_an_oversized_analysis_error_is_not_read_whole(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """The analysis error a page shows is read within 64 KiB: a 4 MiB one (a foreign bundle's) is one line."""
    from reportgen.bundle import ANALYSIS_ERROR_FILE, ANALYSIS_FILE

    bundle_dir = make_bundle(tmp_path, "mixnet")
    (bundle_dir / ANALYSIS_FILE).unlink()
    (bundle_dir / ANALYSIS_ERROR_FILE).write_text("x" * (4 << 20))
    message = read_analysis_error(bundle_dir)
    assert message is not None and len(message) < 1000 and "bound" in message
