"""Tests of reportgen.console: plain lines, the live display, and tailing a running child's log."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from reportgen.bundle import RunStatus, read_manifest
from reportgen.console import LiveProgress, PrintProgress, _LogTail, summary_rows
from reportgen.pipeline import RunOutcome

MakeBundle = Callable[..., Path]


def _outcomes(results: Path, make_bundle: MakeBundle) -> list[RunOutcome]:
    ok, crash = make_bundle(results, "mixnet"), make_bundle(results, "crash", status=RunStatus.failed)
    return [
        RunOutcome(ok, read_manifest(ok)),
        RunOutcome(crash, read_manifest(crash)),
        RunOutcome(ok, read_manifest(ok), analysis_error="trace.json.gz: truncated"),
    ]


def test_summary_rows(tmp_path: Path, make_bundle: MakeBundle) -> None:
    assert summary_rows(_outcomes(tmp_path, make_bundle)) == [
        ("mixnet", "ok", "1.50×", "300.0 s"),
        ("crash", "failed", "—", "300.0 s"),
        ("mixnet", "analysis failed", "1.50×", "300.0 s"),
    ]


def test_print_progress_lines(tmp_path: Path, make_bundle: MakeBundle) -> None:
    lines: list[str] = []
    progress = PrintProgress(lines.append)
    outcomes = _outcomes(tmp_path, make_bundle)
    progress.run_started("mixnet", Path("recipes/mixnet.yaml"), 1, 3)
    progress.run_finished(outcomes[2])
    progress.runs_done(outcomes[:2])
    progress.build_stage("sphinx-build")
    progress.site_built(Path("docs/_build/html"))
    assert lines == [
        "running mixnet (recipes/mixnet.yaml) [1/3]",
        f"mixnet: ok in 300.0 s -> {tmp_path / 'mixnet'}",
        "mixnet: analysis failed: trace.json.gz: truncated",
        "bundle  status  speedup  wall time",
        "mixnet  ok      1.50×    300.0 s",
        "crash   failed  —        300.0 s",
        "build: sphinx-build",
        "site: docs/_build/html/index.html",
    ]


def test_live_progress_prints_outcomes_table_and_site(tmp_path: Path, make_bundle: MakeBundle) -> None:
    out = io.StringIO()
    outcomes = _outcomes(tmp_path, make_bundle)
    with LiveProgress(tmp_path, Console(file=out, force_terminal=True, width=120, color_system=None)) as progress:
        progress.run_started("mixnet", Path("recipes/mixnet.yaml"), 1, 2)
        progress.run_finished(outcomes[0])
        progress.run_started("crash", Path("recipes/crash.yaml"), 2, 2)
        progress.run_finished(outcomes[1])
        progress.runs_done(outcomes[:2])
        progress.build_stage("sphinx-build")
        progress.site_built(Path("docs/_build/html"))
    text = out.getvalue()
    assert f"✓ mixnet: ok in 300.0 s -> {tmp_path / 'mixnet'}" in text
    assert f"✗ crash: failed in 300.0 s -> {tmp_path / 'crash'}" in text
    assert "│ mixnet │ ok     │ 1.50×   │ 300.0 s   │" in text
    assert "site: docs/_build/html/index.html" in text


def test_live_progress_shows_every_run_under_way_with_its_gpu(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A matrix runs one run per GPU: each has its own line, with its GPU and its stage, until it ends."""
    outcomes = _outcomes(tmp_path, make_bundle)
    live = LiveProgress(tmp_path, Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None))
    with live as progress:
        progress.run_started("mixnet", Path("recipes/mixnet.yaml"), 1, 2, "gpu 0")
        progress.run_started("crash", Path("recipes/crash.yaml"), 2, 2, "gpu 1")
        lines = [task.description for task in live._progress.tasks]
        assert lines[1:] == ["[cyan]gpu 0[/] [bold]mixnet[/]: starting", "[cyan]gpu 1[/] [bold]crash[/]: starting"]
        progress.run_finished(outcomes[1])
        assert [task.description for task in live._progress.tasks][1:] == [lines[1]]
        progress.run_finished(outcomes[0])
        assert len(live._progress.tasks) == 1  # the bar over the runs


def test_print_progress_says_where_a_run_goes() -> None:
    lines: list[str] = []
    PrintProgress(lines.append).run_started("mixnet", Path("recipes/mixnet.yaml"), 3, 12, "gpu 1")
    assert lines == ["running mixnet (recipes/mixnet.yaml) on gpu 1 [3/12]"]


def test_log_tail_reports_stage_lines_of_the_right_run(tmp_path: Path) -> None:
    other = tmp_path / ".tmp-mixnet--default-0123abcd"  # a variant's run: not `mixnet`'s log
    other.mkdir()
    (other / "run.log").write_text("[reportgen 01:00:00] not this one\n")
    stages: list[str] = []
    tail = _LogTail(tmp_path, "mixnet", stages.append)
    tail.start()
    run_dir = tmp_path / ".tmp-mixnet-89abcdef"
    run_dir.mkdir()
    with (run_dir / "run.log").open("w", encoding="utf-8") as log:
        log.write("[reportgen 01:29:09] eager warm-up\nsome warning\n[reportgen 01:29:19] compiling")
        log.flush()
        time.sleep(1.2)
        log.write(" (first call)\n")
        log.flush()
        time.sleep(1.2)
    tail.stop()
    assert stages == ["eager warm-up", "compiling (first call)"]


def test_stage_line_lists_the_child_stages_then_the_analysis(tmp_path: Path) -> None:
    from reportgen.bundle import Manifest, Metrics, RunStatus
    from reportgen.console import stage_line
    from reportgen.progress import RunOutcome
    from reportgen.recipe import Recipe

    recipe = Recipe.model_validate({"name": "x", "model": {"ref": "m:f"}, "inputs": {"tensors": [{"shape": [1]}]}})
    metrics = Metrics(stages_s={"environment": 1.25, "compile": 140.0, "graph benchmarks": 20.04})
    manifest = Manifest(
        name="x", recipe=recipe, recipe_sha256="0", recipe_path="x.yaml", status=RunStatus.ok,
        started_at="", finished_at="", wall_time_s=1.0, metrics=metrics,
    )  # fmt: skip
    outcome = RunOutcome(tmp_path / "x", manifest, analysis_s=11.0)
    assert stage_line(outcome) == "x: environment 1.2 s, compile 140.0 s, graph benchmarks 20.0 s, analysis 11.0 s"
    assert stage_line(RunOutcome(tmp_path / "x", manifest.model_copy(update={"metrics": Metrics()}))) == ""
