"""Bundles between results directories: packed and unpacked (a remote run's way home), merged (shards, hosts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.bundle import (
    HISTORY_DIR,
    MANIFEST_FILE,
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
