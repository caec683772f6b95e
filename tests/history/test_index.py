"""The history: every run kept under `.history/`, and the SQLite index over them (rebuilt, never trusted)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from reportgen.bundle import (
    HISTORY_DIR,
    HISTORY_INDEX_FILE,
    MANIFEST_FILE,
    Manifest,
    RunStatus,
    iter_bundles,
    write_bundle,
)
from reportgen.cli import main
from reportgen.history import HistoryIndex, find_bundles, previous_run
from tests.conftest import make_manifest

__all__: list[str] = []


def _run(results: Path, name: str, started: str, torch: str = "2.13.0", compiled_ms: float = 80.0) -> Path:
    """A run of bundle `name` written as `reportgen run` writes one (replacing the previous run)."""

    def populate(tmp: Path) -> Manifest:
        manifest = make_manifest(name, RunStatus.ok, None)
        assert manifest.environment is not None and manifest.metrics.compiled is not None
        env = manifest.environment.model_copy(
            update={"versions": manifest.environment.versions.model_copy(update={"torch": torch})}
        )
        compiled = manifest.metrics.compiled.model_copy(update={"median_ms": compiled_ms})
        return manifest.model_copy(
            update={
                "started_at": started,
                "environment": env,
                "metrics": manifest.metrics.model_copy(update={"compiled": compiled}),
            }
        )

    return write_bundle(results, name, populate)


def test_a_new_run_keeps_the_one_it_replaces(tmp_path: Path) -> None:
    first = _run(tmp_path, "mixnet_l--default", "2026-11-01T10:00:00Z", compiled_ms=80.0)
    _run(tmp_path, "mixnet_l--default", "2026-11-02T10:00:00Z", compiled_ms=70.0)
    assert list(iter_bundles(tmp_path)) == [first]  # the site sees the latest run only
    [kept] = list((tmp_path / HISTORY_DIR / "mixnet_l--default").iterdir())
    assert kept.name.startswith("20261101T100000-")
    assert json.loads((kept / MANIFEST_FILE).read_text())["metrics"]["compiled"]["median_ms"] == 80.0
    assert previous_run(first) == kept
    assert [p.relative_to(tmp_path).as_posix() for p in find_bundles(tmp_path)] == [
        "mixnet_l--default",
        f"{HISTORY_DIR}/mixnet_l--default/{kept.name}",
    ]


def test_index_is_incremental_and_answers_queries(tmp_path: Path) -> None:
    _run(tmp_path, "quickstart", "2026-11-01T10:00:00Z", torch="2.13.0")
    _run(tmp_path, "quickstart", "2026-11-02T10:00:00Z", torch="2.13.0")
    _run(tmp_path, "quickstart", "2026-11-03T10:00:00Z", torch="2.14.1", compiled_ms=90.0)
    _run(tmp_path, "other", "2026-11-02T12:00:00Z")
    with HistoryIndex(tmp_path) as index:
        first = index.update()
        assert (first.added, first.updated, first.removed, first.unchanged) == (4, 0, 0, 0)
        again = index.update()
        assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 4)
        runs = index.runs(name="quickstart")
        assert [(r.started_at[:10], r.torch, r.compiled_ms) for r in runs] == [
            ("2026-11-01", "2.13.0", 80.0),
            ("2026-11-02", "2.13.0", 80.0),
            ("2026-11-03", "2.14.1", 90.0),
        ]
        assert [r.torch for r in index.runs(recipe="quickstart", torch="2.14.1")] == ["2.14.1"]
        assert index.previous("quickstart") == (runs[1], runs[2])
    # A run removed from disk leaves the index; a new one enters it.
    for kept in (tmp_path / HISTORY_DIR / "quickstart").iterdir():
        if kept.name.startswith("20261101"):
            for f in sorted(kept.rglob("*"), reverse=True):
                f.unlink() if f.is_file() else f.rmdir()
            kept.rmdir()
    _run(tmp_path, "other", "2026-11-04T12:00:00Z")
    with HistoryIndex(tmp_path) as index:
        update = index.update()
        assert (update.added, update.removed) == (1, 1)
        assert len(index.runs()) == 4


@pytest.mark.parametrize("damage", [b"not a database at all" * 100, b""])
def test_a_damaged_index_is_rebuilt_from_the_bundles(tmp_path: Path, damage: bytes) -> None:
    _run(tmp_path, "quickstart", "2026-11-01T10:00:00Z")
    _run(tmp_path, "quickstart", "2026-11-02T10:00:00Z")
    (tmp_path / HISTORY_INDEX_FILE).write_bytes(damage)
    with HistoryIndex(tmp_path) as index:
        assert index.update().added == 2
        assert len(index.runs(name="quickstart")) == 2


def test_an_unreadable_manifest_is_left_out_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, "quickstart", "2026-11-01T10:00:00Z")
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / MANIFEST_FILE).write_text("{not json")
    assert main(["history", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "left out of the history" in captured.err and "broken" in captured.err
    assert "quickstart" in captured.out and "2.13.0" in captured.out


def test_compare_with_one_bundle_takes_the_run_it_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latest = _run(tmp_path, "quickstart", "2026-11-01T10:00:00Z")
    assert main(["compare", str(latest)]) == 2
    assert "no earlier run of this bundle" in capsys.readouterr().err
    _run(tmp_path, "quickstart", "2026-11-02T10:00:00Z", compiled_ms=120.0)
    main(["compare", str(latest), "--json"])
    [data] = json.loads(capsys.readouterr().out)
    compiled = {m["name"]: m for m in data["metrics"]}["compiled median"]
    assert (compiled["before"], compiled["after"], compiled["kind"]) == (80.0, 120.0, "wall")


def test_index_over_500_bundles_is_fast(tmp_path: Path) -> None:
    """Not a benchmark (see the closing note for timings): a guard that the index stays linear and light."""
    for day in range(1, 26):
        for name in (f"recipe{i}" for i in range(20)):
            _run(tmp_path, name, f"2026-10-{day:02d}T10:00:00Z")
    started = time.perf_counter()
    with HistoryIndex(tmp_path) as index:
        assert index.update().added == 500
    assert time.perf_counter() - started < 60


def test_report_pages_show_the_kept_runs(tmp_path: Path) -> None:
    """The pipeline hands each bundle's kept runs to render: once a second run exists, the report links a trend
    page and the comparison with the run before (kept in the bundle), the earlier run gets a report of its own,
    the index a sparkline; the page is rendered again when a run is added (its render key includes them)."""
    from reportgen.compare import refresh_comparisons
    from reportgen.pipeline import kept_runs
    from reportgen.render import render_site_pages

    results, reports = tmp_path / "results", tmp_path / "reports"
    _run(results, "quickstart", "2026-11-01T10:00:00Z", torch="2.13.0")
    render_site_pages(results, reports, kept_runs(results))
    assert "## History" not in (reports / "quickstart" / "index.md").read_text()
    _run(results, "quickstart", "2026-11-02T10:00:00Z", torch="2.14.1", compiled_ms=90.0)
    history = kept_runs(results)
    assert refresh_comparisons(results, history) == 1
    assert refresh_comparisons(results, history) == 0  # kept: compared with the same run before
    render_site_pages(results, reports, history)
    page = (reports / "quickstart" / "index.md").read_text()
    assert "## History\n\n2 runs of this bundle are kept: [their trend](history.md)" in page
    assert "[Compared with the run before](compare.md): " in page
    trend = (reports / "quickstart" / "history.md").read_text()
    [kept] = [p.name for p in reports.iterdir() if p.name.startswith("quickstart~")]
    assert f"(<reportgen-page:../{kept}/index>)" in trend and "2\\.14.1" in trend
    assert (reports / "quickstart" / "quickstart-history.png").read_bytes().startswith(b"\x89PNG")
    assert "An earlier run, kept in the history of [quickstart]" in (reports / kept / "index.md").read_text()
    compare = (reports / "quickstart" / "compare.md").read_text()
    assert "* - compiled median\n  - 80\\.00 ms" in compare and "\\+12.5 \\%" in compare
    index = (reports / "index.md").read_text()
    assert "(<quickstart/quickstart-spark.png>)](<reportgen-page:quickstart/history>)" in index
    assert "[compiled +12.5 %, " in index and kept not in index


SECRET = "outside-secret-a41c77"


def _plant(results: Path, key: str, path: str, name: str | None = None) -> None:
    """Change the record of run `key` in the index file as a shipped index may hold it: its stamp unchanged."""
    db = sqlite3.connect(results / HISTORY_INDEX_FILE)
    with db:
        [record] = db.execute("SELECT record FROM runs WHERE path = ?", (key,)).fetchone()
        data = json.loads(record)
        data["path"] = path
        if name is not None:
            data["name"] = name
            db.execute("UPDATE runs SET name = ? WHERE path = ?", (name, key))
        db.execute("UPDATE runs SET record = ? WHERE path = ?", (json.dumps(data), key))
        fake = {**data, "path": "../../elsewhere/secret", "name": "quickstart"}
        db.execute(
            "INSERT INTO runs (path, mtime_ns, size, analysis_mtime_ns, name, recipe, started_at, record) "
            "VALUES (?, 1, 1, 0, 'quickstart', 'quickstart', '2026-11-03', ?)",
            ("../../elsewhere/secret", json.dumps(fake)),
        )
    db.close()


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_a_path_stored_in_a_shipped_index_is_never_followed(tmp_path: Path, where: str) -> None:
    """A results directory shipped with its index, whose kept run's record points outside it (its stamp matches,
    so the row looks unchanged): the kept run published is the one walked, never the outside bundle."""
    from reportgen.pipeline import kept_runs
    from reportgen.render import render_site_pages

    outside = _run(tmp_path / "elsewhere", "secret", "2026-11-01T09:00:00Z")
    (outside / "recipe.yaml").write_text(f"# {SECRET}\n")
    (outside / "run.log").write_text(SECRET)
    results = tmp_path / "results"
    _run(results, "quickstart", "2026-11-01T10:00:00Z")
    _run(results, "quickstart", "2026-11-02T10:00:00Z")
    [kept] = (results / HISTORY_DIR / "quickstart").iterdir()
    key = f"{HISTORY_DIR}/quickstart/{kept.name}"
    kept_runs(results)  # writes the index file
    _plant(results, key, "../elsewhere/secret" if where == "relative" else str(outside))
    history = kept_runs(results)
    assert [run.path for run in history["quickstart"]] == [key, "quickstart"]
    render_site_pages(results, tmp_path / "reports", history)
    leaked = [p for p in (tmp_path / "reports").rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []
    with HistoryIndex(results) as index:  # not brought up to date: still only what the walk finds
        assert {(r.path, r.name) for r in index.runs()} == {(key, "quickstart"), ("quickstart", "quickstart")}


def test_a_run_name_stored_in_a_shipped_index_is_not_trusted(tmp_path: Path) -> None:
    """A record's name becomes a page directory (`<name>~<run id>`): the name is the walked directory's."""
    from reportgen.pipeline import kept_runs

    results = tmp_path / "results"
    _run(results, "quickstart", "2026-11-01T10:00:00Z")
    _run(results, "quickstart", "2026-11-02T10:00:00Z")
    [kept] = (results / HISTORY_DIR / "quickstart").iterdir()
    key = f"{HISTORY_DIR}/quickstart/{kept.name}"
    kept_runs(results)
    _plant(results, key, key, name="../../x")
    history = kept_runs(results)
    assert list(history) == ["quickstart"] and {r.name for r in history["quickstart"]} == {"quickstart"}


@pytest.mark.parametrize("suffix", ["", "-journal", "-wal"])
def test_a_planted_link_at_the_index_path_is_not_written_through(tmp_path: Path, suffix: str) -> None:
    """A results directory from elsewhere may carry `.reportgen-history.sqlite` (or SQLite's journal beside it)
    as a link to a file outside: SQLite would create or write that file. The link is removed, the outside file
    untouched, and the index works."""
    from reportgen.bundle import HISTORY_INDEX_FILE
    from reportgen.history import HistoryIndex

    results = tmp_path / "results"
    results.mkdir()
    outside = tmp_path / "outside" / "victim.db"
    outside.parent.mkdir()
    (results / f"{HISTORY_INDEX_FILE}{suffix}").symlink_to(outside)
    with HistoryIndex(results) as index:
        index.update()
        assert index.runs() == []
    assert not outside.exists()
    assert not (results / f"{HISTORY_INDEX_FILE}{suffix}").is_symlink()


def test_a_fifo_at_the_index_path_does_not_block(tmp_path: Path) -> None:
    """A FIFO planted as the index: opening it for the schema check used to block forever."""
    import os
    import subprocess
    import sys

    from reportgen.bundle import HISTORY_INDEX_FILE

    results = tmp_path / "results"
    results.mkdir()
    os.mkfifo(results / HISTORY_INDEX_FILE)
    script = f"from pathlib import Path; from reportgen.history import HistoryIndex; HistoryIndex(Path({str(results)!r})).update()"
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30)
    assert (results / HISTORY_INDEX_FILE).is_file()
