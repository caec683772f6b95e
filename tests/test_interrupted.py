"""Nothing lost: SIGKILL a run or a build part-way and the previous bundle, pages and HTML are intact.

Runs write into `.tmp-*` siblings and rename them into place, so a kill leaves at most a temporary
directory behind: never listed as a bundle, removed by the next writer (`recover_dir`). Builds render pages
in place and publish the HTML by switching a link between two trees, so a kill leaves the published site
as it was, and the next build equals a clean one.
Two builds into one site take turns on `<site>/.reportgen.lock`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from reportgen.bundle import LOCKS_DIR, bundle_lock, iter_bundles, load_bundle, recover_dir
from reportgen.pipeline import build as build_site
from reportgen.render import render_site_pages
from reportgen.run import sweep_work_dirs

__all__: list[str] = []

MakeBundle = Callable[..., Path]
RECIPES = Path(__file__).resolve().parent / "data" / "recipes"
_T = TypeVar("_T")


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root`, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _wait_for(probe: Callable[[], _T | None], timeout_s: float, what: str) -> _T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def _cli(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `reportgen ARGS` as the leader of its own process group (`env` added to ours)."""
    command = [sys.executable, "-m", "reportgen", *map(str, args)]
    return subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


@contextmanager
def _started(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """`_cli`, with its process group killed on the way out whatever happens."""
    proc = _cli(*args, cwd=cwd, env=env)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def _live_pids(match: Callable[[int, bytes], bool]) -> list[int]:
    """Processes (not zombies) for which `match(pid, cmdline)` holds."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline, stat = (entry / "cmdline").read_bytes(), (entry / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] != "Z" and match(int(entry.name), cmdline):
            pids.append(int(entry.name))
    return pids


def _group(leader: int) -> list[int]:
    """Live members of `leader`'s process group (the run's child and its compile workers)."""

    def member(pid: int, _: bytes) -> bool:
        try:
            return os.getpgid(pid) == leader
        except ProcessLookupError:
            return False

    return _live_pids(member)


# --- a killed run ----------------------------------------------------------------------------------


def _compiling(results: Path) -> Path | None:
    """The temporary bundle of a run whose child has started compiling."""
    for tmp in results.glob(".tmp-addmul-*"):
        log = tmp / "run.log"
        if log.is_file() and "compiling" in log.read_text(encoding="utf-8", errors="replace"):
            return tmp
    return None


@pytest.mark.slow
def test_a_run_killed_while_compiling_keeps_the_previous_bundle(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results, temp = tmp_path / "results", tmp_path / "temp"
    temp.mkdir()
    previous = make_bundle(results, "addmul", title="Previous run")
    before = _snapshot(previous)
    children: list[int] = []
    try:
        with _started("run", RECIPES / "addmul.yaml", "-o", results, cwd=tmp_path, env={"TMPDIR": str(temp)}) as proc:
            tmp_bundle = _wait_for(lambda: _compiling(results), 300, "the child to start compiling")
            children = _live_pids(lambda _, cmdline: str(tmp_bundle).encode() in cmdline)
            assert children, "the run's child process was not found"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        assert _snapshot(previous) == before
        assert list(iter_bundles(results)) == [previous]
        assert load_bundle(previous).manifest.recipe.display_title == "Previous run"
        assert tmp_bundle.is_dir()  # left behind, never taken for a bundle
        _wait_for(lambda: not any(_group(pid) for pid in children), 30, "the orphaned child to stop")
        progress = json.loads((tmp_bundle / "child-result.json").read_text(encoding="utf-8"))
        assert progress["stage"] != "done"  # it stopped with its parent instead of running to the end
        pages = render_site_pages(results, tmp_path / "site" / "reports")
        assert "Previous run" in pages[0].read_text(encoding="utf-8")
        recover_dir(previous)
        assert sorted(p.name for p in results.iterdir()) == [LOCKS_DIR, "addmul"]
        with bundle_lock(results, "addmul", timeout_s=0):  # the kernel dropped the killed run's lock
            pass
        (work,) = temp.glob("reportgen-addmul-*")  # the killed parent's work dir, its Inductor cache inside
        assert (work / "inductor").is_dir()
        assert sweep_work_dirs(temp) == [work] and not work.exists()  # what the next run does first
    finally:
        for pid in [member for child in children for member in _group(child)]:
            os.kill(pid, signal.SIGKILL)


# --- a killed build --------------------------------------------------------------------------------


@pytest.fixture
def built_site(tmp_path: Path, make_bundle: MakeBundle) -> Path:
    """A site built from four bundles; then a fifth bundle and a new title, not built yet."""
    results = tmp_path / "results"
    for name in ("alpha", "beta", "gamma", "delta"):
        make_bundle(results, name, title=f"{name.title()} before")
    build_site(results, tmp_path / "site")
    make_bundle(results, "epsilon", title="Epsilon after")
    make_bundle(results, "alpha", title="Alpha after")
    return tmp_path


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith((".tmp-", ".old-"))]


def test_a_build_killed_while_rendering_keeps_the_previous_html(built_site: Path) -> None:
    """Pages are rendered in place (unchanged files keep their mtime, so Sphinx rebuilds only what changed): a
    kill leaves some new and some old, the published HTML untouched, and the next build renders them again."""
    site = built_site / "site"
    html = _snapshot(site / "_build" / "html")
    with _started("build", "results", "--out", "site", cwd=built_site) as proc:
        _wait_for(lambda: (site / "reports" / "epsilon").is_dir(), 120, "the build to start rendering")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert _snapshot(site / "_build" / "html") == html
    _assert_next_build_completes(built_site)


def test_a_build_killed_in_sphinx_keeps_the_previous_html(built_site: Path) -> None:
    site = built_site / "site"
    html = _snapshot(site / "_build" / "html")
    with _started("build", "results", "--out", "site", cwd=built_site) as proc:
        _wait_for(lambda: _sphinx_running(proc.pid), 120, "sphinx-build to start")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert _snapshot(site / "_build" / "html") == html
    assert "Epsilon after" in (site / "reports" / "index.md").read_text(encoding="utf-8")  # pages were complete
    _assert_next_build_completes(built_site)


def _sphinx_running(leader: int) -> bool:
    return any(b"\0-m\0reportgen.site.sphinx_runner\0" in cmdline for _, cmdline in _group_cmdlines(leader))


def _group_cmdlines(leader: int) -> list[tuple[int, bytes]]:
    found = []
    for pid in _group(leader):
        try:
            found.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))
        except OSError:
            continue
    return found


def _assert_next_build_completes(work: Path) -> None:
    html = build_site(work / "results", work / "site")
    index = (html / "reports" / "index.html").read_text(encoding="utf-8")
    assert "Epsilon after" in index and "Alpha after" in index and "Alpha before" not in index
    assert _leftovers(work / "site") == []
    assert _site(html) == _site(build_site(work / "results", work / "clean"))  # equal to a site built from scratch


def _site(html: Path) -> dict[str, bytes]:
    """The files of a site, without Sphinx's cache (`.doctrees`) and reportgen's stamp of its sources' mtimes."""
    return {name: data for name, data in _snapshot(html).items() if not name.startswith((".doctrees", ".reportgen-"))}


# --- two builds at once ----------------------------------------------------------------------------


def test_two_builds_at_once_take_turns(built_site: Path) -> None:
    with (
        _started("build", "results", "--out", "site", cwd=built_site) as first,
        _started("build", "results", "--out", "site", cwd=built_site) as second,
    ):
        outputs = [first.communicate(timeout=300), second.communicate(timeout=300)]
        codes = [first.returncode, second.returncode]
    assert codes == [0, 0], outputs
    stderr = "".join(err for _, err in outputs)
    assert stderr.count("waiting for another build") == 1, stderr
    site = built_site / "site"
    index = (site / "_build" / "html" / "reports" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{name}/index.html"' in index for name in ("alpha", "beta", "gamma", "delta", "epsilon"))
    assert _leftovers(site) == []
