"""The History section: a trend chart and one row per kept run, from the history index's records."""

from __future__ import annotations

from pathlib import Path

from reportgen.bundle import RunRecord
from reportgen.render.trends import history_section, trend_chart

__all__: list[str] = []

PNG = b"\x89PNG\r\n\x1a\n"


def _record(day: int, torch: str, compiled_ms: float) -> RunRecord:
    return RunRecord(
        path="quickstart" if day == 3 else f".history/quickstart/2026110{day}T100000-0000000{day}",
        name="quickstart",
        recipe="quickstart",
        status="ok",
        started_at=f"2026-11-0{day}T10:00:00Z",
        recipe_sha256="0" * 64,
        model="models:SmallCNN",
        torch=torch,
        device="cpu",
        device_name="cpu",
        eager_ms=12.0,
        compiled_ms=compiled_ms,
        eager_iqr_ms=(11.5, 12.5),
        compiled_iqr_ms=(compiled_ms - 0.5, compiled_ms + 0.5),
        speedup=12.0 / compiled_ms,
        compile_s=30.0,
    )


RUNS = [_record(1, "2.13.0", 8.0), _record(2, "2.13.0", 8.2), _record(3, "2.14.1", 9.5)]


def test_one_run_has_no_history_section() -> None:
    assert history_section(RUNS[:1], "trend.png") == ""


def test_history_section_lists_every_run_oldest_first(tmp_path: Path) -> None:
    chart = trend_chart(RUNS, tmp_path / "trend.png")
    assert chart.read_bytes().startswith(PNG)
    text = history_section(RUNS, "trend.png")
    assert text.startswith("## History\n\n3 runs of this bundle are kept")
    assert "```{figure} trend.png" in text
    rows = text.split("* - ")[2:]
    assert [row.split("\n")[0] for row in rows] == [
        "2026\\-11\\-01 10\\:00",
        "2026\\-11\\-02 10\\:00",
        "2026\\-11\\-03 10\\:00",
    ]
    assert "`.history/quickstart/20261101T100000-00000001`" in rows[0] and "latest" in rows[2]
    assert "2\\.14.1" in rows[2] and "1.26×" in rows[2]


def test_the_chart_is_the_same_bytes_for_the_same_runs(tmp_path: Path) -> None:
    """Incremental builds rewrite a chart only when its bytes change."""
    first = trend_chart(RUNS, tmp_path / "a.png").read_bytes()
    assert trend_chart(RUNS, tmp_path / "b.png").read_bytes() == first
    assert trend_chart(RUNS[:2], tmp_path / "c.png").read_bytes() != first
