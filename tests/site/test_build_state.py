"""A build directory nobody can plant code in (issue 26, item 2): real builds (`pipeline.build`, Sphinx in a
subprocess) after a file was planted where a build keeps its state.

Each attack plants its file both where reportgen kept the build state before (inside the HTML trees:
`.html-a/.doctrees/`, `.html-a/.reportgen-build.json`) and where it keeps it now (`.html-state/html-a/`), in the
published tree's state and in the one about to be built; the names are written out here, not taken from the
code under test. A planted pickle runs `open(marker, "w")` when unpickled.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.pipeline import build as build_site

__all__: list[str] = []

MakeBundle = Callable[..., Path]

_TREES = (".html-a", ".html-b")
_STATE = ".html-state"


class _Plant:
    """Unpickled, creates `marker` (the stand-in for any code an attacker's pickle runs)."""

    def __init__(self, marker: Path) -> None:
        self.code = f"open({str(marker)!r}, 'w').close()"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (self.code,))


def _payload(marker: Path, size: int = 0) -> bytes:
    """A pickle that creates `marker`, padded after its STOP opcode to `size` bytes (pickle ignores the rest)."""
    data = pickle.dumps(_Plant(marker))
    return data + b"\0" * max(size - len(data), 0)


def _doctree_dirs(html: Path) -> list[Path]:
    """Every place a build kept or keeps Sphinx's doctrees: inside each tree (before) and in the state (now)."""
    return [html.parent / tree / ".doctrees" for tree in _TREES] + [
        html.parent / _STATE / tree.lstrip(".") / "doctrees" for tree in _TREES
    ]


def _stamp_files(html: Path) -> list[Path]:
    return [html.parent / tree / ".reportgen-build.json" for tree in _TREES] + [
        html.parent / _STATE / tree.lstrip(".") / "stamp.json" for tree in _TREES
    ]


def _plant(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.write_bytes(data)


def _files(html: Path) -> dict[str, bytes]:
    root = html.resolve()
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


_EXTRA = "---\norphan: true\n---\n# Extra\n\nA page of the site's own: no change ever makes Sphinx read it again.\n"


def _two_bundles(tmp_path: Path, make_bundle: MakeBundle) -> tuple[Path, Path, Path]:
    results, source = tmp_path / "results", tmp_path / "site"
    source.mkdir()
    (source / "extra.md").write_text(_EXTRA)
    make_bundle(results, "alpha", title="alpha before")
    make_bundle(results, "beta", title="beta before")
    return results, source, build_site(results, source)


def _assert_rebuilt(html: Path, results: Path, clean: Path, marker: Path) -> None:
    assert not marker.exists(), "a planted pickle ran"
    assert "beta after" in (html / "reports" / "beta" / "index.html").read_text()
    clean.mkdir(exist_ok=True)
    (clean / "extra.md").write_text(_EXTRA)
    assert _files(html) == _files(build_site(results, clean))  # a clean build's site, file for file
    for tree in _TREES:
        assert not (html.parent / tree / ".doctrees").exists()
        assert not (html.parent / tree / ".reportgen-build.json").exists()


def _rebuild_reading_extra(
    tmp_path: Path, make_bundle: MakeBundle, results: Path, source: Path, html: Path, marker: Path
) -> None:
    """Build after a change with the site's page `extra` gone from the published tree (Sphinx then writes it again
    from its doctree): no planted pickle runs, and the site is a clean build's."""
    (html / "extra.html").unlink()
    make_bundle(results, "beta", title="beta after")
    try:
        build_site(results, source)
    finally:
        assert not marker.exists(), "a planted pickle ran"
    _assert_rebuilt(html, results, tmp_path / "clean", marker)


def test_a_planted_environment_pickle_does_not_run(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    results, source, html = _two_bundles(tmp_path, make_bundle)
    marker = tmp_path / "marker"
    for doctrees in _doctree_dirs(html):
        _plant(doctrees / "environment.pickle", _payload(marker))
    make_bundle(results, "beta", title="beta after")
    with caplog.at_level(logging.WARNING):
        build_site(results, source)
    assert not marker.exists(), "a planted pickle ran"
    assert [r.getMessage() for r in caplog.records if r.name.startswith("reportgen.site")] == [
        f"{html.parent / _STATE / 'html-b' / 'doctrees'}: differs from what the last build left; "
        "building the HTML from scratch"
    ]
    _assert_rebuilt(html, results, tmp_path / "clean", marker)


def test_a_planted_doctree_does_not_run(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A `*.doctree` is a pickle too: Sphinx reads it to write a page it did not re-read (here: `extra`, whose
    page is missing from the published tree)."""
    results, source, html = _two_bundles(tmp_path, make_bundle)
    marker = tmp_path / "marker"
    for doctrees in _doctree_dirs(html):
        _plant(doctrees / "extra.doctree", _payload(marker))
    _rebuild_reading_extra(tmp_path, make_bundle, results, source, html, marker)


def test_a_plant_that_looks_unchanged_to_the_sync_does_not_run(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """In the tree about to be built, a pickle with the size and mtime of the published tree's copy: the sync
    (size and mtime) keeps it, the digest of the doctrees does not."""
    results, source, html = _two_bundles(tmp_path, make_bundle)
    marker = tmp_path / "marker"
    shutil.copytree(html.resolve(), html.parent / _TREES[1], dirs_exist_ok=True)  # (as the clean build left it)
    published, other = _doctree_dirs(html)[0::2], _doctree_dirs(html)[1::2]
    for mine, theirs in zip(published, other, strict=True):
        if not (mine / "environment.pickle").is_file():
            continue
        status = (mine / "environment.pickle").stat()
        shutil.copytree(mine, theirs, dirs_exist_ok=True)
        _plant(theirs / "environment.pickle", _payload(marker, status.st_size))
        os.utime(theirs / "environment.pickle", ns=(status.st_atime_ns, status.st_mtime_ns))
    make_bundle(results, "beta", title="beta after")
    build_site(results, source)
    _assert_rebuilt(html, results, tmp_path / "clean", marker)


def test_a_plant_that_keeps_every_stat_of_the_file_index_but_its_ctime_does_not_run(
    tmp_path: Path, make_bundle: MakeBundle
) -> None:
    """After two builds each tree has a sealed file index. A doctree of the tree about to be built, overwritten
    in place with its size and times kept: the sync keeps it (size, mtime), the index would too (size, mtime,
    inode); the ctime the write moved does not."""
    results, source, html = _two_bundles(tmp_path, make_bundle)
    make_bundle(results, "beta", title="beta middle")
    build_site(results, source)
    marker = tmp_path / "marker"
    other = next(html.parent / t for t in _TREES if (html.parent / t).resolve() != html.resolve())
    doctree = html.parent / _STATE / other.name.lstrip(".") / "doctrees" / "extra.doctree"
    status = doctree.stat()
    payload = _payload(marker, status.st_size)
    assert len(payload) == status.st_size
    with doctree.open("r+b") as handle:
        handle.write(payload)
    os.utime(doctree, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert (doctree.stat().st_size, doctree.stat().st_mtime_ns, doctree.stat().st_ino) == (
        status.st_size,
        status.st_mtime_ns,
        status.st_ino,
    )
    _rebuild_reading_extra(tmp_path, make_bundle, results, source, html, marker)


def test_a_forged_stamp_deletes_nothing_outside_the_tree(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A stamp naming a removed source `../../../victim.md` would have the build delete `victim.html` beside the
    site; a stamp not sealed by the site is not read (a clean build)."""
    results, source, html = _two_bundles(tmp_path, make_bundle)
    victim = tmp_path / "victim.html"
    victim.write_text("the user's file")
    stamp = {"inputs": "0" * 64, "sources": {"../../../victim.md": [1, 1], "/etc/victim.md": [1, 1]}}
    sealed = {"stamp": stamp, "doctrees": "0" * 64, "mac": "0" * 64}  # a seal made without the site's key
    for path in _stamp_files(html):
        _plant(path, json.dumps(stamp if path.name.startswith(".") else sealed).encode())
    make_bundle(results, "beta", title="beta after")
    build_site(results, source)
    assert victim.read_text() == "the user's file"
    _assert_rebuilt(html, results, tmp_path / "clean", tmp_path / "no-marker")


def test_a_site_of_an_older_reportgen_is_rebuilt_without_reading_its_doctrees(
    tmp_path: Path, make_bundle: MakeBundle
) -> None:
    """A plain `_build/html` holding `.doctrees/` and `.reportgen-build.json` (reportgen before the build state):
    its planted pickle does not run, its state is gone after the build."""
    results, source = tmp_path / "results", tmp_path / "site"
    make_bundle(results, "alpha")
    html = source / "_build" / "html"
    (html / ".doctrees").mkdir(parents=True)
    (html / "index.html").write_text("<p>old</p>")
    marker = tmp_path / "marker"
    (html / ".doctrees" / "environment.pickle").write_bytes(_payload(marker))
    (html / ".reportgen-build.json").write_text('{"inputs": "x", "sources": {}}')
    build_site(results, source)
    assert not marker.exists()
    assert html.is_symlink()
    assert not list(html.parent.glob(".html-*/.doctrees")) and not list(html.parent.glob(".html-*/.reportgen-*"))


@pytest.mark.parametrize("garbage", [b"", b"{", b"[" * 100_000, b"\xff\xfe", b'{"inputs": 1, "sources": []}'])
def test_a_damaged_stamp_is_a_clean_build(tmp_path: Path, make_bundle: MakeBundle, garbage: bytes) -> None:
    results, source, html = _two_bundles(tmp_path, make_bundle)
    for path in _stamp_files(html):
        _plant(path, garbage)
    make_bundle(results, "beta", title="beta after")
    build_site(results, source)
    _assert_rebuilt(html, results, tmp_path / "clean", tmp_path / "no-marker")


def test_fifos_in_the_build_state_neither_hang_nor_fail_the_build(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """`reportgen build` (a real process, 120 s at most) after FIFOs were planted as the stamps and in the
    doctrees: reading one would wait forever, copying one fails."""
    results, source, html = _two_bundles(tmp_path, make_bundle)
    for path in _stamp_files(html) + [d / "extra.doctree" for d in _doctree_dirs(html)]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    make_bundle(results, "beta", title="beta after")
    command = [sys.executable, "-m", "reportgen", "build", str(results), "--out", str(source)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    _assert_rebuilt(html, results, tmp_path / "clean", tmp_path / "no-marker")


def test_a_tree_that_is_a_link_is_not_built_through(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """`.html-b` (the tree the next build writes) planted as a link to another directory: the build writes a
    tree of its own, nothing through the link."""
    results, source, html = _two_bundles(tmp_path, make_bundle)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(html.parent / _TREES[1])  # (the clean build left a copy of the published tree there)
    (html.parent / _TREES[1]).symlink_to(outside)
    make_bundle(results, "beta", title="beta after")
    build_site(results, source)
    assert list(outside.iterdir()) == []
    assert not (html.parent / _TREES[1]).is_symlink()
    assert html.resolve() == html.parent / _TREES[1]
    _assert_rebuilt(html, results, tmp_path / "clean", tmp_path / "no-marker")
