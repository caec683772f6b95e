"""Tests of reportgen.site.trees: listing a tree and bringing the other tree up to date with it."""

from __future__ import annotations

import os
from pathlib import Path

from reportgen.site.trees import listing, sync_tree

__all__: list[str] = []


def _write(path: Path, data: str, mtime_ns: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def test_listing_walks_files_without_following_links_and_leaves_out_what_it_is_told(tmp_path: Path) -> None:
    root = tmp_path / "src"
    _write(root / "index.md", "home", 1_000_000_000)
    _write(root / "reports" / "a" / "index.md", "report a")
    _write(root / "_build" / "html" / "index.html", "built")
    _write(tmp_path / "outside" / "secret.md", "not ours")
    (root / "reports" / "linked").symlink_to(tmp_path / "outside")
    found = listing(root, frozenset([root / "_build"]))
    assert set(found) == {"index.md", "reports/a/index.md", "reports/linked"}  # the link itself, not its files
    assert found["index.md"] == (4, 1_000_000_000)
    assert found["reports/linked"][0] == os.lstat(root / "reports" / "linked").st_size


def test_sync_copies_what_differs_removes_what_is_gone_and_keeps_the_rest_untouched(tmp_path: Path) -> None:
    source, dest = tmp_path / "a", tmp_path / "b"
    _write(source / "same.html", "same", 1_000_000_000)
    _write(source / "changed.html", "new!", 3_000_000_000)
    _write(source / "deep" / "new.html", "added", 4_000_000_000)
    _write(dest / "same.html", "same", 1_000_000_000)
    _write(dest / "changed.html", "old!", 2_000_000_000)  # same size, other mtime
    _write(dest / "gone" / "deeper" / "old.html", "removed")
    _write(dest / "kept" / "stale.html", "removed too")
    (dest / "kept" / "empty").mkdir()
    (source / "kept").mkdir()
    (dest / "link.html").symlink_to(tmp_path)
    _write(source / "link.html", "a file now")
    inode = (dest / "same.html").stat().st_ino
    sync_tree(source, dest)
    assert listing(dest) == listing(source)
    assert {p.relative_to(dest).as_posix() for p in dest.rglob("*")} == {
        "same.html",
        "changed.html",
        "deep",
        "deep/new.html",
        "link.html",
    }  # emptied directories go too, `kept` with them: a tree holds only what Sphinx writes
    assert (dest / "changed.html").read_text(encoding="utf-8") == "new!"
    assert not (dest / "link.html").is_symlink() and (dest / "link.html").read_text(encoding="utf-8") == "a file now"
    assert (dest / "same.html").stat().st_ino == inode  # not copied again
    assert (dest / "deep" / "new.html").stat().st_mtime_ns == 4_000_000_000  # Sphinx compares mtimes
    assert tmp_path.is_dir() and (tmp_path / "a").is_dir()  # the link's target was not followed
