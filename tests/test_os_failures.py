"""OS-level failures in run and build are one line naming the file and what to do; nothing earlier is lost.

Each failure is real: a tmpfs that fills up (mounted in a user and mount namespace, `unshare -rm`), a
directory the user may not write (`setpriv` to `nobody` when the tests run as root), a file where a
directory should be.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from reportgen.bundle import read_manifest

__all__: list[str] = []

RECIPES = Path(__file__).resolve().parent / "data" / "recipes"
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def _can(command: Sequence[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture
def work() -> Iterator[Path]:
    """A working directory anyone may enter (tests may drop to `nobody`), with the raising recipe and a
    bundle of it from an earlier run in `prev/`."""
    path = Path(tempfile.mkdtemp(prefix="reportgen-os-"))
    try:
        path.chmod(0o755)
        for name in ("raising.yaml", "tiny_models.py"):
            shutil.copy(RECIPES / name, path / name)
        assert _reportgen(path, "run", "raising.yaml", "-o", "prev").returncode == 1  # a failed run: data
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _reportgen(cwd: Path, *args: str, prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    (cwd / ".mpl").mkdir(exist_ok=True)
    (cwd / ".mpl").chmod(0o777)  # matplotlib's cache, for whichever user runs
    env = {**os.environ, "HOME": str(cwd), "MPLCONFIGDIR": str(cwd / ".mpl")}
    command = [*prefix, sys.executable, "-m", "reportgen", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "No module named reportgen" not in proc.stderr, (
        "`nobody` cannot read this checkout or its virtualenv: make their parent directories world-traversable "
        "(chmod o+x), as .ci/run does for its clone"
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("reportgen: error: ")
    return line


DISK_FULL_SCRIPT = """
set -e
mount -t tmpfs -o size=256k tmpfs results
cp -r prev/raising results/
dd if=/dev/zero of=results/filler bs=4096 2>/dev/null || true
truncate -s -{free} results/filler
set +e
{python} -m reportgen run raising.yaml -o results
echo "exit $?" >&2
rm results/filler
cp -r results after
"""


@pytest.mark.skipif(not _can(["unshare", "-rm", "true"]), reason="needs user and mount namespaces")
@pytest.mark.parametrize("free", [0, 4096, 12288], ids=["full", "one-page", "three-pages"])
def test_a_disk_that_fills_during_a_run_is_one_line_and_keeps_the_previous_bundle(work: Path, free: int) -> None:
    """0 bytes: the lock file cannot be written; 4 KiB: the bundle's files; 12 KiB: the child's log fills the
    disk and the child fails, which is the disk's fault, not the recipe's: no bundle says otherwise."""
    (work / "results").mkdir()
    script = DISK_FULL_SCRIPT.format(free=free, python=sys.executable)
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=work, capture_output=True, text=True)
    lines = proc.stderr.splitlines()
    assert lines[-1] == "exit 2" and "Traceback" not in proc.stderr, proc.stderr
    assert lines[:-1] == [lines[0]] and lines[0].startswith("reportgen: error: results/")
    assert lines[0].endswith(": No space left on device (free space on that disk, or write somewhere else)")
    assert read_manifest(work / "after" / "raising") == read_manifest(work / "prev" / "raising")
    for name in ("recipe.yaml", "run.log"):
        assert (work / "after" / "raising" / name).read_bytes() == (work / "prev" / "raising" / name).read_bytes()
    assert sorted(p.name for p in (work / "after").iterdir()) == [".locks", "raising"]


def _unwritable(work: Path, name: str) -> list[str]:
    """A directory `name` the test's reportgen may not write, and the prefix that runs it so."""
    (work / name).mkdir()
    (work / name).chmod(0o555)
    if os.geteuid() != 0:
        return []
    if not _can([*NOBODY, "true"]):
        pytest.skip("runs as root and cannot drop to nobody")
    return NOBODY


def test_a_results_dir_without_write_permission_is_one_line(work: Path) -> None:
    prefix = _unwritable(work, "results")
    line = _one_line(_reportgen(work, "run", "raising.yaml", "-o", "results", prefix=prefix))
    assert line == (
        "reportgen: error: results/.locks: cannot lock bundle 'raising': Permission denied "
        "(check its permissions, or write somewhere else)"
    )


def test_a_site_without_write_permission_is_one_line(work: Path) -> None:
    prefix = _unwritable(work, "site")
    line = _one_line(_reportgen(work, "build", "prev", "--out", "site", prefix=prefix))
    assert line == (
        "reportgen: error: site/.reportgen.lock: cannot take the build lock: Permission denied "
        "(check that the --out directory is writable)"
    )


def test_a_file_where_a_directory_should_be_is_one_line(work: Path) -> None:
    (work / "afile").write_text("in the way")
    line = _one_line(_reportgen(work, "run", "raising.yaml", "-o", "afile/results"))
    assert line == (
        "reportgen: error: afile/results/.locks: cannot lock bundle 'raising': Not a directory "
        "(a part of that path is a file, not a directory; check the path)"
    )
    line = _one_line(_reportgen(work, "build", "prev", "--out", "site", "--html", "afile/html"))
    assert line == (  # the build state goes beside the link `html` first (`site.state`)
        "reportgen: error: afile/.html-state: cannot write the HTML site 'html': Not a directory "
        "(a part of that path is a file, not a directory; check the path)"
    )
