"""A real history end to end: three recorded CPU runs of one recipe under two torch versions, one more run
made here, then `reportgen build` (trend page, kept runs' reports, comparison) and `reportgen compare`."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen.cli import main
from tests.data import CPU_HISTORY

__all__: list[str] = []

OLD, NEW = "2.13.0+cpu", "2.14.1+cu130"


def test_compare_between_torch_versions_prints_the_kernel_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = Path(shutil.copytree(CPU_HISTORY, tmp_path / "results"))
    assert main(["compare", str(results / "addmul"), "--markdown"]) == 0  # faster: no regression
    out = capsys.readouterr().out
    assert out.startswith(f"## `addmul`: torch {OLD} on cpu (AMD EPYC) → torch {NEW} on cpu (AMD EPYC)\n")
    # CPU runs: counts judged, device figures (CPU time) and one run's wall figures not
    assert (
        "**No regression**: no count grew beyond 5 %. Device figures not judged: on a CPU run they are CPU time" in out
    )
    assert "Wall figures (host-dependent) not judged: 1 run before, 1 run after" in out
    assert re.search(
        # the cells pass the Markdown boundary (`reportgen.escape.markdown_text`): brackets escaped, shown as typed
        r"\| compiled median +\| 11\.65 ms \\\[[^]]+\\\] +\| 0\.0348 ms \\\[[^]]+\\\] +\| -99\.7 % +\| not judged",
        out,
    )
    kernels = out.split("### Kernels that changed", 1)[1]
    assert re.search(
        r"\| `inference \(graph 0\)` +\| `graph_0_cpp_fused_add_mul_0` +\| `cpp_fused` +\| faster ", kernels
    )


@pytest.mark.slow
def test_a_new_run_joins_the_recorded_history_and_the_site_shows_it(tmp_path: Path, addmul_history: Path) -> None:
    """`addmul_history`: `reportgen run addmul.yaml` into a copy of `CPU_HISTORY` (a real run, shared)."""
    results = Path(shutil.copytree(addmul_history, tmp_path / "results"))
    assert (results / "addmul" / "comparison.json").is_file()  # the run keeps its comparison with the one before
    build = [sys.executable, "-m", "reportgen", "build", str(results), "--out", str(tmp_path / "site")]
    proc = subprocess.run(build, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reports = tmp_path / "site" / "_build" / "html" / "reports"
    kept = sorted(p.name for p in reports.iterdir() if p.name.startswith("addmul~"))
    assert len(kept) == 3  # the three recorded runs, each with its report
    trend = (reports / "addmul" / "history.html").read_text(encoding="utf-8")
    assert "4 runs of this bundle are kept" in trend
    rows = re.findall(r'<a class="reference (?:internal|external)" href="([^"]+)">', trend.split("<table", 1)[1])
    assert rows[0] == "#" or rows[0].endswith("index.html")  # newest first: this report
    assert [f"../{name}/index.html" for name in reversed(kept)] == rows[1:4]
    live = importlib.metadata.version("torch")  # the run made here: one more row of this version
    assert (trend.count(OLD), trend.count(NEW)) == (2 + (live == OLD), 1 + (live == NEW))
    assert (tmp_path / "site" / "reports" / "addmul" / "addmul-history.png").read_bytes().startswith(b"\x89PNG")
    assert "addmul-history.png" in trend
    for name in kept:
        page = (reports / name / "index.html").read_text(encoding="utf-8")
        assert "An earlier run, kept in the history of" in page
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert 'src="../_images/addmul-spark.png"' in index or "addmul-spark.png" in index
    assert 'href="addmul/compare.html"' in index and 'href="addmul/history.html"' in index
    compare = (reports / "addmul" / "compare.html").read_text(encoding="utf-8")
    assert f"torch {NEW}" in compare and "Kernels that changed" in compare
