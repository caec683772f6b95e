"""Tests of reportgen.site.state and the strict build stamp: where a build keeps its state, its key, its seal."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from reportgen.pipeline import build as build_site
from reportgen.site import state as site_state
from reportgen.site.stamp import BuildStamp
from reportgen.site.state import KEY_BYTES, KEY_FILE, digest_files, open_state, state_dir, tree_digest

__all__: list[str] = []

MakeBundle = Callable[..., Path]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_build_state_is_private_and_outside_the_published_tree(tmp_path: Path, make_bundle: MakeBundle) -> None:
    make_bundle(tmp_path / "results", "alpha")
    html = build_site(tmp_path / "results", tmp_path / "site")
    build = tmp_path / "site" / "_build"
    assert sorted(p.name for p in build.iterdir()) == [".html-a", ".html-b", ".html-state", "html"]  # (b: a copy)
    assert state_dir(html) == build / ".html-state"
    assert _mode(build / ".html-state") == 0o700
    assert _mode(build / ".html-state" / KEY_FILE) == 0o600
    assert len((build / ".html-state" / KEY_FILE).read_bytes()) == KEY_BYTES == 32
    assert (build / ".html-state" / "html-a" / "doctrees" / "environment.pickle").is_file()
    assert (build / ".html-state" / "html-a" / "doctrees" / "reports" / "index.doctree").is_file()
    assert (build / ".html-state" / "html-a" / "doctrees" / "units" / "alpha.json").is_file()  # (site.units)
    published = html.resolve()
    dot_names = sorted(p.relative_to(published).as_posix() for p in published.rglob(".*"))
    assert dot_names == [".buildinfo"]  # Sphinx's config hash: text, and `serve` refuses dot names


@pytest.mark.parametrize("damage", ["group-readable", "link", "short", "directory"])
def test_a_key_that_is_not_private_is_replaced_and_the_next_build_is_clean(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """Anyone who could read the key could seal a stamp: a key file readable by others, a link, a key of the
    wrong length or not a file is replaced by a new key, so that no seal made under the old one holds."""
    results, source = tmp_path / "results", tmp_path / "site"
    make_bundle(results, "alpha")
    html = build_site(results, source)
    key = state_dir(html) / KEY_FILE
    old = key.read_bytes()
    if damage == "group-readable":
        key.chmod(0o640)
    elif damage == "link":
        (tmp_path / "their-key").write_bytes(old)
        key.unlink()
        key.symlink_to(tmp_path / "their-key")
    elif damage == "short":
        key.write_bytes(old[:16])
    else:
        key.unlink()
        key.mkdir()
    make_bundle(results, "alpha", title="alpha after")
    with caplog.at_level(logging.WARNING, logger="reportgen.site.state"):
        build_site(results, source)
    assert not key.is_symlink() and _mode(key) == 0o600 and len(key.read_bytes()) == KEY_BYTES
    assert key.read_bytes() != old
    assert caplog.messages == [
        f"{state_dir(html) / 'html-a' / 'stamp.json'}: not sealed by this site's key; building the HTML from scratch"
    ]
    assert "alpha after" in (html / "reports" / "alpha" / "index.html").read_text()


def test_a_stamp_larger_than_the_bound_is_not_read(
    tmp_path: Path, make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    make_bundle(tmp_path / "results", "alpha")
    html = build_site(tmp_path / "results", tmp_path / "site")
    stamp = state_dir(html) / "html-a" / "stamp.json"
    state = open_state(html)
    assert state.read(html.resolve()) is not None
    monkeypatch.setattr(site_state, "STAMP_MAX_BYTES", stamp.stat().st_size - 1)
    with caplog.at_level(logging.WARNING, logger="reportgen.site.state"):
        assert state.read(html.resolve()) is None
    assert caplog.messages == [f"{stamp}: not a build stamp of this site; building the HTML from scratch"]


def test_the_state_directory_is_made_private_whatever_stood_there(tmp_path: Path) -> None:
    html = tmp_path / "_build" / "html"
    html.parent.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (html.parent / ".html-state").symlink_to(tmp_path / "elsewhere")
    (html.parent / ".html-a").symlink_to(tmp_path / "elsewhere")
    state = open_state(html)
    assert not state.root.is_symlink() and _mode(state.root) == 0o700
    assert not (html.parent / ".html-a").exists()
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize(
    "sources",
    [
        {"../../victim.md": [1, 1]},
        {"/etc/victim.md": [1, 1]},
        {"a/../../b.md": [1, 1]},
        {"a//b.md": [1, 1]},
        {"a\0.md": [1, 1]},
        {"a.md": [-1, 1]},
        {"a.md": ["1", 1]},
        {"a.md": [1, 1, 1]},
    ],
)
def test_a_stamp_is_validated_strictly(sources: dict[str, list[object]]) -> None:
    with pytest.raises(ValidationError):
        BuildStamp.model_validate({"inputs": "0" * 64, "sources": sources})


def test_a_stamp_has_no_other_fields_and_a_bounded_inputs() -> None:
    with pytest.raises(ValidationError):
        BuildStamp.model_validate_json('{"inputs": "x", "sources": {}, "extra": 1}')
    with pytest.raises(ValidationError):
        BuildStamp.model_validate_json('{"inputs": "' + "x" * 129 + '", "sources": {}}')
    assert BuildStamp.model_validate_json('{"inputs": "x", "sources": {"a/b.md": [1, 2]}}').sources == {
        "a/b.md": (1, 2)
    }


def test_a_file_index_spares_reading_unchanged_files_and_misses_no_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "doctrees"
    (root / "reports").mkdir(parents=True)
    for name in ("environment.pickle", "reports/a.doctree", "reports/b.doctree"):
        (root / name).write_bytes(name.encode())
    found = digest_files(root, {})
    assert found is not None and found[0] == tree_digest(root)
    read: list[str] = []
    real = site_state._file_digest
    monkeypatch.setattr(site_state, "_file_digest", lambda path: read.append(path.name) or real(path))
    again = digest_files(root, found[1])
    assert again == found and read == []  # nothing changed: nothing read
    target = root / "reports" / "a.doctree"
    before = target.stat()
    target.write_bytes(b"reports/a.doctreX")  # same size, then the times set back: only ctime tells
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    tampered = digest_files(root, found[1])
    assert read == ["a.doctree"]
    assert tampered is not None and tampered[0] == tree_digest(root) != found[0]
    read.clear()
    other = {k: (v[0], v[1], v[2], v[3] + 1, v[4]) for k, v in tampered[1].items()}  # another file's inode
    assert digest_files(root, other) == tampered and len(read) == 3  # an entry counts only when all four match


def test_tree_digest_sees_every_change_and_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    root = tmp_path / "doctrees"
    (root / "reports").mkdir(parents=True)
    (root / "environment.pickle").write_bytes(b"env")
    (root / "reports" / "a.doctree").write_bytes(b"doc")
    first = tree_digest(root)
    assert first is not None and first == tree_digest(root)
    (root / "reports" / "a.doctree").write_bytes(b"dog")  # same size
    changed = tree_digest(root)
    assert changed not in (None, first)
    (root / "reports" / "b.doctree").write_bytes(b"")
    assert tree_digest(root) not in (None, first, changed)
    (root / "reports" / "b.doctree").unlink()
    (root / "reports" / "empty").mkdir()
    assert tree_digest(root) not in (None, first, changed)
    (root / "reports" / "empty").rmdir()
    assert tree_digest(root) == changed
    (root / "link.doctree").symlink_to(root / "environment.pickle")
    assert tree_digest(root) is None
    (root / "link.doctree").unlink()
    os.mkfifo(root / "pipe.doctree")
    assert tree_digest(root) is None
    (root / "pipe.doctree").unlink()
    (tmp_path / "linked").symlink_to(root)
    assert tree_digest(tmp_path / "linked") is None
    assert tree_digest(tmp_path / "missing") is None
