"""A distributed recipe end to end on the CPU: `reportgen report` of a tiny DDP model on two gloo ranks (launched by
`torch.distributed.run`) and of one whose rank 1 raises. Real processes, real collectives, a real Sphinx build."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reportgen.bundle import Analysis, RunStatus, read_manifest
from reportgen.formats import read_trace
from tests.analyze.test_overlap import _brute_force, _raw_gloo
from tests.site.test_browser import assert_page_is_whole

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[1]
FAILING = ROOT / "tests" / "data" / "recipes" / "ddp_rank_fails.yaml"


@dataclass(frozen=True)
class Report:
    work: Path
    proc: subprocess.CompletedProcess[str]

    def bundle(self, name: str) -> Path:
        return self.work / "results" / name

    def page(self, name: str, page: str = "index") -> str:
        """The visible text of a page of run `name`: tags removed, entities decoded, whitespace collapsed."""
        path = self.work / "site" / "_build" / "html" / "reports" / name / f"{page}.html"
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))).split())


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    work = tmp_path_factory.mktemp("distributed")
    recipes = [str(ROOT / "recipes" / "ddp_tiny.yaml"), str(ROOT / "recipes" / "fsdp_tiny.yaml"), str(FAILING)]
    command = [sys.executable, "-m", "reportgen", "report", *recipes, "-o", "results", "--out", "site"]
    return Report(work, subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900))


@pytest.mark.slow
def test_the_report_builds_and_says_one_run_failed(report: Report) -> None:
    assert report.proc.returncode == 1, report.proc.stdout + report.proc.stderr
    assert "site: " in report.proc.stdout


@pytest.mark.slow
def test_every_rank_of_the_ddp_run_recorded_its_steps_and_trace(report: Report) -> None:
    bundle = report.bundle("ddp_tiny")
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.ok, manifest.error
    run = manifest.distributed
    assert run is not None and (run.world_size, run.strategy, run.backend) == (2, "ddp", "gloo")
    assert [(r.rank, r.status) for r in run.ranks] == [(0, "ok"), (1, "ok")]
    assert [r.trace_file for r in run.ranks] == ["trace.json.gz", "ranks/1/trace.json.gz"]
    assert all(r.compiled is not None and r.eager is not None and r.graphs for r in run.ranks)
    assert run.same_graphs is True
    assert any("DDPOptimizer" in line and "bucket" in line for line in run.splits)
    assert not list((bundle / "ranks").rglob("child-result.json"))


@pytest.mark.slow
@pytest.mark.parametrize("rank", [0, 1])
def test_each_ranks_overlap_is_what_its_raw_trace_says(report: Report, rank: int) -> None:
    bundle = report.bundle("ddp_tiny")
    analysis = Analysis.model_validate_json((bundle / "analysis.json").read_text(encoding="utf-8"))
    assert analysis.distributed is not None
    overlap = analysis.distributed.ranks[rank]
    trace = bundle / ("trace.json.gz" if rank == 0 else "ranks/1/trace.json.gz")
    read_trace(trace, "cpu")  # readable as a trace of its own
    intervals, steps = _raw_gloo(trace)
    expected = _brute_force(intervals, steps)
    assert overlap.rank == rank and overlap.steps == len(steps) == 2
    assert expected["comm"] > 0 and expected["compute"] > 0
    assert overlap.communication_us == pytest.approx(expected["comm"] / 2, rel=0.02)
    assert overlap.overlapped_us == pytest.approx(expected["both"] / 2, rel=0.02, abs=1.0)
    assert [c.kind for c in analysis.distributed.collectives] == ["all_reduce"]


@pytest.mark.slow
def test_analysing_again_reads_each_ranks_trace_once_and_finds_the_same(
    report: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rank 0's trace is the bundle's own: its overlap comes from the same reading as the kernel table."""
    import reportgen.analyze as analyze_package

    bundle = report.bundle("ddp_tiny")
    reads: list[str] = []

    def counted(path: Path, device: str) -> object:
        reads.append(Path(path).relative_to(bundle).as_posix())
        return read_trace(path, device)  # type: ignore[arg-type]

    monkeypatch.setattr(analyze_package, "read_trace", counted)
    again = analyze_package.analyze(bundle, read_manifest(bundle))
    kept = Analysis.model_validate_json((bundle / "analysis.json").read_text(encoding="utf-8"))
    assert sorted(r for r in reads if "trace.json" in r) == ["ranks/1/trace.json.gz", "trace.json.gz"]
    assert again.distributed == kept.distributed


@pytest.mark.slow
def test_the_page_leads_with_the_ranks_and_each_rank_has_a_page(report: Report) -> None:
    text = report.page("ddp_tiny")
    assert text.index("Distributed run") < text.index("Findings")
    assert "2 ranks, DDP (DistributedDataParallel) over gloo" in text
    assert "Every rank compiled the same graphs" in text and "DDPOptimizer used bucket cap" in text
    for rank in (0, 1):
        page = report.page("ddp_tiny", f"rank-{rank}")
        assert f"rank {rank}" in page and "ok" in page
    assert "ranks/1/trace.json.gz" in report.page("ddp_tiny", "rank-1")


@pytest.mark.slow
def test_a_rank_that_raises_fails_the_run_and_its_page_names_the_rank(report: Report) -> None:
    manifest = read_manifest(report.bundle("ddp_rank_fails"))
    assert manifest.status is RunStatus.failed
    assert manifest.error is not None and manifest.error.startswith("rank 1 of 2 failed: RuntimeError: planted failure")
    assert manifest.distributed is not None and manifest.distributed.failed_rank is not None
    assert manifest.distributed.failed_rank.rank == 1
    text = report.page("ddp_rank_fails")
    assert "Rank 1 failed first" in text and "planted failure on rank 1" in text
    assert "planted failure on rank 1" in report.page("ddp_rank_fails", "rank-1")


@pytest.mark.slow
def test_fsdp2_gathers_parameters_on_every_rank(report: Report) -> None:
    bundle = report.bundle("fsdp_tiny")
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.ok, manifest.error
    assert manifest.distributed is not None and manifest.distributed.strategy == "fsdp2"
    assert manifest.distributed.same_graphs is True
    analysis = Analysis.model_validate_json((bundle / "analysis.json").read_text(encoding="utf-8"))
    assert analysis.distributed is not None and [o.rank for o in analysis.distributed.ranks] == [0, 1]
    kinds = {c.kind: c.calls for c in analysis.distributed.collectives}
    assert kinds.get("all_gather", 0) >= 2  # at least one per shard unit and step
    assert "2 ranks, FSDP2 ( fully_shard ) over gloo" in report.page("fsdp_tiny")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize(
    "path", ["ddp_tiny/index.html", "ddp_tiny/rank-1.html", "fsdp_tiny/index.html", "ddp_rank_fails/index.html"]
)
def test_the_distributed_pages_load_in_a_browser(report: Report, browser: Browser, path: str) -> None:
    assert_page_is_whole(browser, report.work / "site" / "_build" / "html", f"reports/{path}")
