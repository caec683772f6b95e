"""Bytecode kept for a run's processes where an install's own is not (reportgen.run.bytecode): real imports in fresh
processes, the `.pyc` files looked for where Python writes them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen.run.bytecode import PREFIX_VARIABLE, default_cache, keep_bytecode

__all__: list[str] = []

_TAG = sys.implementation.cache_tag


def _package(root: Path, name: str = "slowpkg") -> Path:
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from .part import VALUE\n")
    (package / "part.py").write_text("VALUE = 42\n")
    return package


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package importable here and in a child (`PYTHONPATH`), never imported yet: no bytecode beside it."""
    root = tmp_path / "site"
    _package(root)
    monkeypatch.syspath_prepend(str(root))
    return root


def _import(root: Path, env: dict[str, str]) -> None:
    env = {**env, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-c", "import slowpkg; assert slowpkg.VALUE == 42"], env=env, check=True)


def test_a_package_without_bytecode_gets_a_private_cache_that_the_next_process_reads(
    on_path: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop(PREFIX_VARIABLE, None)
    cache = tmp_path / "cache" / "pycache"
    assert keep_bytecode(env, cache, package="slowpkg")
    assert env[PREFIX_VARIABLE] == str(cache) and "PYTHONDONTWRITEBYTECODE" not in env
    assert cache.stat().st_mode & 0o777 == 0o700
    _import(on_path, env)
    mirror = cache / on_path.resolve().relative_to("/") / "slowpkg"
    written = sorted(p.name for p in mirror.glob("*.pyc"))
    assert written == [f"__init__.{_TAG}.pyc", f"part.{_TAG}.pyc"]
    assert not (on_path / "slowpkg" / "__pycache__").exists()  # the install is not written to
    stamps = {p: p.stat().st_mtime_ns for p in mirror.glob("*.pyc")}
    _import(on_path, env)  # read, not written again
    assert {p: p.stat().st_mtime_ns for p in mirror.glob("*.pyc")} == stamps


def test_bytecode_beside_the_source_or_a_prefix_the_user_chose_leaves_the_environment_alone(
    on_path: Path, tmp_path: Path
) -> None:
    chosen = {"PYTHONPYCACHEPREFIX": "/somewhere/mine"}
    assert not keep_bytecode(chosen, tmp_path / "c", package="slowpkg") and chosen == {
        "PYTHONPYCACHEPREFIX": "/somewhere/mine"
    }
    env = {k: v for k, v in os.environ.items() if k not in (PREFIX_VARIABLE, "PYTHONDONTWRITEBYTECODE")}
    _import(on_path, env)  # Python writes the package's bytecode beside it
    assert (on_path / "slowpkg" / "__pycache__" / f"__init__.{_TAG}.pyc").is_file()
    before = dict(env)
    assert not keep_bytecode(env, tmp_path / "c", package="slowpkg") and env == before
    assert not keep_bytecode({}, tmp_path / "c", package="no_such_package_here")


def test_a_cache_folder_others_can_write_is_not_used(on_path: Path, tmp_path: Path) -> None:
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    env: dict[str, str] = {}
    assert not keep_bytecode(env, cache, package="slowpkg") and env == {}


def test_the_cache_is_the_users_own() -> None:
    assert default_cache({"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"}) == Path("/x/cache/reportgen/pycache")
    assert default_cache({"HOME": "/home/u"}) == Path("/home/u/.cache/reportgen/pycache")
    assert default_cache({}) is None
