"""The repository carries everything its tests, benchmarks, docs and sessions read: a fresh clone has nothing beside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.data import H100_FIXTURE

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["tests", "benchmarks", "docs", "reportgen", "noxfile.py", ".ci"]
# A path that climbs out of the checkout: `../<dir>`, `<root>.parent / "<dir>"`, or `parents[N].parent`
# from a file at the depth where that leaves the repository.
_SHARED = "sha" + "red"  # spelled apart so that this file does not match the checks it states
OUTSIDE = re.compile(rf"\.\./{_SHARED}|{_SHARED}/fixtures|\"{_SHARED}\"\s*/|parents\[\d\]\.parent\s*/")


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z", *CHECKED], cwd=ROOT, capture_output=True, check=True)
    names = [n for n in out.stdout.decode().split("\0") if n]
    return [ROOT / n for n in names if Path(n).suffix in {".py", ".md", ".toml", ".cfg", ".txt", ""}]


def test_no_file_refers_outside_the_repository() -> None:
    files = tracked_files()
    assert any(f.name == "noxfile.py" for f in files)
    offenders = []
    for path in files:
        if not path.is_file() or path == Path(__file__):
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize(
    "line", [f'X = ROOT.parent / "{_SHARED}" / "fixtures"', f"see ../{_SHARED}/fixtures", 'p.parents[1].parent / "x"']
)
def test_the_pattern_catches_outside_paths(line: str) -> None:
    assert OUTSIDE.search(line)


def test_the_gpu_fixture_is_in_the_repository() -> None:
    assert H100_FIXTURE.is_relative_to(ROOT)
    for name in ("trace.json.gz", "modules.tar.gz", "README.md"):
        assert (H100_FIXTURE / name).is_file()
    tracked = subprocess.run(
        ["git", "ls-files", str(H100_FIXTURE.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(tracked) == 3, "the fixture must be committed, not just present in this checkout"
