"""Bundles between results directories: packed and unpacked (a remote run's way home), merged (shards, hosts)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from reportgen.bundle import (
    HISTORY_DIR,
    MANIFEST_FILE,
    MAX_WALK_DEPTH,
    iter_kept_runs,
    merge_results,
    pack_bundle,
    read_manifest,
    unpack_bundle,
)
from reportgen.errors import BundleError
from tests.conftest import MakeBundle

__all__: list[str] = []


def _restart(bundle: Path, started_at: str, device: str) -> None:
    """Make `bundle` another run: another start time and device (another host)."""
    path = bundle / MANIFEST_FILE
    data = json.loads(path.read_text())
    data["started_at"] = started_at
    data["environment"]["device_name"] = device
    path.write_text(json.dumps(data))


def test_a_packed_bundle_replaces_the_old_one_which_is_archived(tmp_path: Path, make_bundle: MakeBundle) -> None:
    remote = make_bundle(tmp_path / "remote", "quickstart")
    _restart(remote, "2025-02-01T00:00:00+00:00", "NVIDIA H200")
    old = make_bundle(tmp_path / "results", "quickstart")
    unpack_bundle(pack_bundle(remote), tmp_path / "results", "quickstart")
    assert read_manifest(old).started_at == "2025-02-01T00:00:00+00:00"
    assert [n for n, _ in iter_kept_runs(tmp_path / "results")] == ["quickstart", "quickstart"]  # the old one kept
    assert (old / "run.log").read_bytes() == (remote / "run.log").read_bytes()
    assert not list((tmp_path / "results").glob(".tmp-*"))


def test_a_packed_bundle_of_another_name_is_refused(tmp_path: Path, make_bundle: MakeBundle) -> None:
    data = pack_bundle(make_bundle(tmp_path / "remote", "other"))
    with pytest.raises(BundleError, match="the packed bundle is not 'quickstart'"):
        unpack_bundle(data, tmp_path / "results", "quickstart")
    assert not (tmp_path / "results" / "quickstart").exists()


def test_merged_shards_keep_every_run_and_the_newest_is_the_latest(tmp_path: Path, make_bundle: MakeBundle) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_bundle(a, "resnet")
    make_bundle(b, "mixnet")
    _restart(make_bundle(a, "quickstart"), "2025-03-01T00:00:00+00:00", "NVIDIA H100")  # one run on each host
    _restart(make_bundle(b, "quickstart"), "2025-04-01T00:00:00+00:00", "NVIDIA H200")
    make_bundle(tmp_path / "copy", "resnet")  # the very same run of a, copied: counted once
    (tmp_path / "copy" / "resnet" / MANIFEST_FILE).write_bytes((a / "resnet" / MANIFEST_FILE).read_bytes())
    merged = tmp_path / "merged"
    assert merge_results([a, b, tmp_path / "copy"], merged) == {"mixnet": 1, "quickstart": 2, "resnet": 1}
    latest = read_manifest(merged / "quickstart")
    assert latest.environment is not None and latest.environment.device_name == "NVIDIA H200"
    (older,) = (merged / HISTORY_DIR / "quickstart").iterdir()
    assert read_manifest(older).started_at == "2025-03-01T00:00:00+00:00"
    kept = (merged / "resnet" / MANIFEST_FILE).stat().st_ino
    assert merge_results([a], merged) == {"quickstart": 1, "resnet": 1}  # replaced whole: b's runs are gone
    assert sorted(p.name for p in merged.iterdir()) == ["quickstart", "resnet"]
    assert (merged / "resnet" / MANIFEST_FILE).stat().st_ino == kept  # an unchanged copy is moved, not copied
    (a / "resnet" / "run.log").write_text("changed")
    merge_results([a], merged)
    assert (merged / "resnet" / "run.log").read_text() == "changed"


SECRET = b"outside-secret-5d1e0b"


def _leaks(root: Path) -> list[Path]:
    """Files under `root` (links not followed) that hold the outside secret."""
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and SECRET in p.read_bytes()]


def test_a_merge_copies_plain_files_only(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    """A hard link to an outside file, copied, would no longer show as one (`st_nlink` 1): the merge leaves it
    out, and links and special files too; the rest of the bundle is merged, one warning says what was not."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(SECRET)
    a, b = tmp_path / "a", tmp_path / "b"
    bundle = make_bundle(a, "quickstart")
    make_bundle(b, "resnet")
    (bundle / "run.log").unlink()
    os.link(outside, bundle / "run.log")  # laundered by a copy
    (bundle / "modules" / "kernels").mkdir(parents=True)
    os.link(outside, bundle / "modules" / "kernels" / "k.py")
    (bundle / "modules" / "wrappers").symlink_to(tmp_path, target_is_directory=True)
    (bundle / "graphs.json").symlink_to(outside)
    os.mkfifo(bundle / "fifo")  # a copy would block on it
    merged = tmp_path / "merged"
    with caplog.at_level(logging.WARNING):
        assert merge_results([a, b], merged) == {"quickstart": 1, "resnet": 1}
    assert _leaks(merged) == []
    copied = sorted(p.relative_to(merged).as_posix() for p in merged.rglob("*") if not p.is_dir())
    assert copied == sorted(
        [f"{n}/{f}" for n in ("quickstart", "resnet") for f in ("analysis.json", MANIFEST_FILE, "recipe.yaml")]
        + ["resnet/run.log"]
    )
    assert all(p.stat().st_nlink == 1 for p in merged.rglob("*") if p.is_file())
    [warning] = [r.getMessage() for r in caplog.records if "not merged" in r.getMessage()]
    assert str(bundle) in warning and "5 entries" in warning
    assert read_manifest(merged / "quickstart").name == "quickstart"


def test_a_merge_follows_no_linked_bundle_or_history(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """Bundle directories, `.history` and its runs that are links to outside directories are not merged."""
    elsewhere = tmp_path / "elsewhere"
    secret = make_bundle(elsewhere, "secret")
    (secret / "run.log").write_bytes(SECRET)
    a = tmp_path / "a"
    make_bundle(a, "quickstart")
    (a / "secret").symlink_to(secret, target_is_directory=True)
    (a / HISTORY_DIR).symlink_to(elsewhere, target_is_directory=True)  # .history/secret/<run> would be secret
    b = tmp_path / "b"
    make_bundle(b, "resnet")
    (b / HISTORY_DIR / "resnet").mkdir(parents=True)
    (b / HISTORY_DIR / "resnet" / "20250101T000000-0123abcd").symlink_to(secret, target_is_directory=True)
    (b / HISTORY_DIR / "secret").symlink_to(elsewhere / "secret", target_is_directory=True)
    merged = tmp_path / "merged"
    assert merge_results([a, b], merged) == {"quickstart": 1, "resnet": 1}
    assert _leaks(merged) == [] and not (merged / HISTORY_DIR).exists()
    assert [n for n, _ in iter_kept_runs(a)] == ["quickstart"] and [n for n, _ in iter_kept_runs(b)] == ["resnet"]


def test_a_laundered_copy_left_by_an_earlier_merge_is_not_reused(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """An earlier merge's copy of a hard-linked file (same size and mtime as the link) is not moved over as an
    unchanged copy: the new merge leaves the linked file out."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(SECRET)
    a = tmp_path / "a"
    bundle = make_bundle(a, "quickstart")
    (bundle / "run.log").unlink()
    os.link(outside, bundle / "run.log")
    merged = tmp_path / "merged"
    (merged / "quickstart").mkdir(parents=True)
    for path in bundle.iterdir():  # what a merge of an earlier reportgen left: a plain copy of everything
        (merged / "quickstart" / path.name).write_bytes(path.read_bytes())
        os.utime(merged / "quickstart" / path.name, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    merge_results([a], merged)
    assert _leaks(merged) == [] and (merged / "quickstart" / MANIFEST_FILE).is_file()


def test_a_merge_of_a_deep_or_huge_bundle_is_bounded(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    """A bundle whose `modules` leads to `/`, or holds directories deeper than the walk bound, costs one warning
    each, not a walk of the file system."""
    a = tmp_path / "a"
    bundle = make_bundle(a, "quickstart")
    (bundle / "modules").symlink_to("/", target_is_directory=True)
    deep = bundle / "graphs"
    for _ in range(MAX_WALK_DEPTH + 2):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "far.txt").write_text("far")
    with caplog.at_level(logging.WARNING):
        merge_results([a], tmp_path / "merged")
    assert not (tmp_path / "merged" / "quickstart" / "modules").exists()
    assert not list((tmp_path / "merged").rglob("far.txt"))
    assert len(caplog.records) <= 3, [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("name", ["../escaped", "/abs", "a b", "index.md"])
def test_a_packed_bundle_under_a_hostile_name_is_refused(tmp_path: Path, make_bundle: MakeBundle, name: str) -> None:
    data = pack_bundle(make_bundle(tmp_path / "remote", "quickstart"))
    with pytest.raises(BundleError, match="invalid bundle name"):
        unpack_bundle(data, tmp_path / "results" / "sub", name)
    assert not (tmp_path / "results").exists() and not (tmp_path / "escaped").exists()
