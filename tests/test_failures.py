"""Failure isolation: one `reportgen report` of five recipes, four of which fail in different ways.

raise in model code → failed, hang past the timeout → timeout, `os.abort()` → killed, a data-dependent
branch under `fullgraph: true` → failed (at compile), and one good recipe → ok. The site still builds:
one report, four failure pages, all five on the index; the exit code is non-zero. Running out of
memory (its own status, `oom`) is checked on its own.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from reportgen.bundle import HISTORY_INDEX_FILE, LOCKS_DIR, RunStatus, iter_bundles, read_manifest
from reportgen.recipe import load_recipe
from reportgen.run import run_recipe

__all__: list[str] = []

RECIPES = Path(__file__).resolve().parent / "data" / "recipes"
EXPECTED = {
    "raising": (RunStatus.failed, "ValueError: planted failure in model code"),
    "sleeper": (RunStatus.timeout, "run exceeded its timeout"),
    "aborter": (RunStatus.killed, "run process was killed by SIGABRT"),
    "compile_error": (RunStatus.failed, "Data-dependent branching"),
    "addmul": (RunStatus.ok, None),
}
FAILURES = [name for name, (status, _) in EXPECTED.items() if status is not RunStatus.ok]
LOG_TAIL_MARKERS = {
    "raising": "ValueError: planted failure in model code",
    "sleeper": "eager warm-up",
    "aborter": "eager warm-up",
    "compile_error": "torch._dynamo.exc.Unsupported: Data-dependent branching",
}


@dataclass(frozen=True)
class Matrix:
    """The working directory of the report and the finished process."""

    work: Path
    proc: subprocess.CompletedProcess[str]

    @property
    def html(self) -> Path:
        return self.work / "site" / "_build" / "html" / "reports"


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    work = tmp_path_factory.mktemp("failures")
    recipes = [str(RECIPES / f"{name}.yaml") for name in EXPECTED]
    command = [sys.executable, "-m", "reportgen", "report", *recipes, "-o", "results", "--out", "site"]
    env = {**os.environ, "NOX_CURRENT_SESSION": "report"}  # as under `nox -s report`: a name that says SESSION
    proc = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=1200, env=env)
    return Matrix(work, proc)


def _text(path: Path) -> str:
    """The visible text of an HTML page: tags removed, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))).split())


@pytest.mark.slow
def test_exit_code_is_nonzero_and_the_site_builds(matrix: Matrix) -> None:
    assert matrix.proc.returncode == 1, matrix.proc.stdout + matrix.proc.stderr
    assert "Traceback" not in matrix.proc.stderr
    assert "site: " in matrix.proc.stdout
    assert (matrix.html / "index.html").is_file()


@pytest.mark.slow
def test_every_recipe_leaves_a_bundle_with_its_status(matrix: Matrix) -> None:
    bundles = {path.name: read_manifest(path) for path in iter_bundles(matrix.work / "results")}
    assert sorted(bundles) == sorted(EXPECTED)
    for name, (status, error) in EXPECTED.items():
        manifest = bundles[name]
        assert manifest.status is status, (name, manifest.error)
        if error is None:
            assert manifest.error is None
        else:
            assert manifest.error is not None and error in manifest.error
    assert "stage after 'eager'" in (bundles["compile_error"].error or "")
    dot_names = sorted(p.name for p in (matrix.work / "results").glob(".*"))
    assert dot_names == sorted([LOCKS_DIR, HISTORY_INDEX_FILE])  # no temporaries left; the history index


@pytest.mark.slow
def test_the_index_shows_all_five_with_their_statuses(matrix: Matrix) -> None:
    index = (matrix.html / "index.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr[^>]*>.*?</tr>", index, re.S)
    for name, (status, _) in EXPECTED.items():
        row = next((r for r in rows if f'href="{name}/index.html"' in r), None)
        assert row is not None, name
        cells = [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in re.findall(r"<td.*?</td>", row, re.S)]
        assert status.value in cells, (name, cells)


@pytest.mark.slow
@pytest.mark.parametrize("name", FAILURES)
def test_each_failure_has_its_own_page(matrix: Matrix, name: str) -> None:
    status, error = EXPECTED[name]
    text = _text(matrix.html / name / "index.html")
    assert f"The run ended with status {status.value}" in text
    assert error is not None and error in text
    assert "Log tail" in text
    assert LOG_TAIL_MARKERS[name] in text.split("Log tail", 1)[1]


@pytest.mark.slow
def test_a_failure_page_keeps_every_word_of_its_log_under_nox(matrix: Matrix) -> None:
    """nox names its session in `NOX_CURRENT_SESSION` (`report`): no credential, so no "report" of a path becomes
    [redacted] (`/tmp/.../[redacted]gen/run/child.py` before)."""
    text = _text(matrix.html / "raising" / "index.html")
    assert "reportgen/run/child.py" in text
    assert "[redacted]gen" not in text


@pytest.mark.slow
def test_the_good_recipe_has_a_complete_report(matrix: Matrix) -> None:
    bundle = matrix.work / "results" / "addmul"
    assert (bundle / "analysis.json").is_file()
    text = _text(matrix.html / "addmul" / "index.html")
    assert "cpp_fused_add_mul_0" in text
    assert "Failure" not in text
    images = re.findall(r'<img [^>]*src="([^"]+)"', (matrix.html / "addmul" / "index.html").read_text())
    assert len(images) >= 3


def test_running_out_of_memory_is_its_own_status(tmp_path: Path) -> None:
    path = RECIPES / "oom.yaml"
    manifest = read_manifest(run_recipe(load_recipe(path), path, tmp_path))
    assert manifest.status is RunStatus.oom
    assert manifest.error is not None
    assert manifest.error.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB")
