"""Tests of reportgen.bundle.lock: one writer per bundle name, others wait or get a clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reportgen.bundle import bundle_lock, bundle_lock_path, iter_bundles
from reportgen.errors import BundleError

__all__: list[str] = []


def test_the_lock_lives_beside_the_bundles_and_names_its_holder(tmp_path: Path) -> None:
    with bundle_lock(tmp_path, "x--fast"):
        assert bundle_lock_path(tmp_path, "x--fast").read_text() == f"{os.getpid()}\n"
    assert bundle_lock_path(tmp_path, "x--fast") == tmp_path / ".locks" / "x--fast.lock"
    assert list(iter_bundles(tmp_path)) == []  # never mistaken for a bundle


def test_a_second_writer_of_the_same_bundle_times_out_clearly(tmp_path: Path) -> None:
    with bundle_lock(tmp_path, "x"), pytest.raises(BundleError) as info, bundle_lock(tmp_path, "x", timeout_s=0):
        pass
    assert str(info.value) == (
        f"{tmp_path}/.locks/x.lock: another run of x (pid {os.getpid()}) is still writing it "
        "(wait for it to finish, or write into another results directory)"
    )


def test_writers_of_different_bundles_do_not_wait(tmp_path: Path) -> None:
    with bundle_lock(tmp_path, "x"), bundle_lock(tmp_path, "x--fast", timeout_s=0):
        pass


def test_a_results_dir_that_cannot_exist_is_one_located_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(BundleError) as info, bundle_lock(tmp_path / "file" / "results", "x"):
        pass
    assert str(info.value) == (
        f"{tmp_path}/file/results/.locks: cannot lock bundle 'x': Not a directory "
        "(a part of that path is a file, not a directory; check the path)"
    )
