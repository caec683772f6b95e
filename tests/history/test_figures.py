"""The history index keeps the repeatable figures (device time and counts per step, from analysis.json `figures`)
in columns of their own beside the wall ones, NULL for runs analysed before them; an index of the schema before
them is rebuilt."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from reportgen.bundle import HISTORY_INDEX_FILE, Figures, RunStatus, StepFigures, write_analysis, write_bundle
from reportgen.history import SCHEMA, HistoryIndex
from tests.conftest import DEFAULT_KERNELS, make_analysis, make_manifest

__all__: list[str] = []

FIGURES = Figures(
    device="cuda",
    eager=StepFigures(profiled_steps=3, device_us=[6080.0, 6100.0, 6120.0], active_us=[4100.0] * 3),
    compiled=StepFigures(
        profiled_steps=3,
        device_us=[2270.0, 2280.0, 2290.0],
        active_us=[2280.0] * 3,
        counts={"launches": [40, 40, 40], "aten_ops": [300, 300, 303], "graphs": [2, 2, 2]},
    ),
)
COLUMNS = "device_eager_ms, device_compiled_ms, launches_compiled, aten_ops_compiled, graphs_compiled, compiled_ms"


def _bundle(results: Path, name: str, figures: Figures | None) -> None:
    bundle = write_bundle(results, name, lambda tmp: make_manifest(name, RunStatus.ok, None))
    write_analysis(bundle, make_analysis(DEFAULT_KERNELS).model_copy(update={"figures": figures}))


def test_the_figures_have_columns_and_the_records_carry_them(tmp_path: Path) -> None:
    _bundle(tmp_path, "new", FIGURES)
    _bundle(tmp_path, "old", None)
    with HistoryIndex(tmp_path) as index:
        assert index.update().added == 2
        records = {r.name: r for r in index.runs()}
    db = sqlite3.connect(tmp_path / HISTORY_INDEX_FILE)
    rows = {row[0]: row[1:] for row in db.execute(f"SELECT name, {COLUMNS} FROM runs")}
    db.close()
    # medians 6.10 and 2.28 ms; launches 40; ATen ops (300 + 300 + 303) / 3 = 301; graphs 2; the wall median 80 ms
    assert rows["new"] == (6.1, 2.28, 40.0, 301.0, 2.0, 80.0)
    assert rows["old"] == (None, None, None, None, None, 80.0)
    assert (records["new"].device_compiled_ms, records["new"].launches_compiled) == (2.28, 40.0)
    assert records["old"].device_compiled_ms is None


def test_an_index_of_the_schema_before_the_figures_is_rebuilt(tmp_path: Path) -> None:
    _bundle(tmp_path, "new", FIGURES)
    db = sqlite3.connect(tmp_path / HISTORY_INDEX_FILE)
    with db:
        db.execute("CREATE TABLE runs (path TEXT PRIMARY KEY, record TEXT NOT NULL)")
        db.execute("PRAGMA user_version = 4")
    db.close()
    with HistoryIndex(tmp_path) as index:
        assert index.update().added == 1
        [record] = index.runs()
    assert record.device_eager_ms == 6.1
    db = sqlite3.connect(tmp_path / HISTORY_INDEX_FILE)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA == 5
    assert db.execute("SELECT device_compiled_ms FROM runs").fetchone() == (2.28,)
    db.close()
