"""Tests of reportgen.sphinx_ext.locate: bundle paths, dependency files and version keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reportgen.bundle import read_manifest
from reportgen.sphinx_ext.locate import bundle_files, bundle_key, resolve_bundle_dir

BUNDLE = Path(__file__).parents[1] / "data" / "bundles" / "fused_add_mul"


@pytest.mark.parametrize(
    ("argument", "root", "expected"),
    [
        ("b", "", "/src/docs/b"),
        ("../results/b", "", "/src/docs/../results/b"),
        ("b", "../results", "/src/../results/b"),
        ("/results/b", "../elsewhere", "/src/results/b"),
    ],
)
def test_resolve_bundle_dir(argument: str, root: str, expected: str) -> None:
    assert resolve_bundle_dir(argument, Path("/src/docs"), Path("/src"), root) == Path(expected)


def test_bundle_files_lists_existing_files_and_always_the_manifest(tmp_path: Path) -> None:
    names = [p.name for p in bundle_files(BUNDLE, read_manifest(BUNDLE))]
    assert names == ["manifest.json", "analysis.json", "recipe.yaml", "capture.json", "run.log"]
    assert bundle_files(tmp_path, None) == [tmp_path / "manifest.json"]


def test_bundle_key_follows_file_changes(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}", encoding="utf-8")
    before = bundle_key(tmp_path, [manifest])
    assert bundle_key(tmp_path, [manifest]) == before
    os.utime(manifest, ns=(1, 1))
    assert bundle_key(tmp_path, [manifest]) != before
