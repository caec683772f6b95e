"""A bundle's history: the trend page (charts, a row per kept run linked to its report), the report's
History section and the index's sparkline, from the history index's records."""

from __future__ import annotations

from pathlib import Path

from reportgen.bundle import RunRecord
from reportgen.render.trends import history_page, history_section, run_page, sparkline, trend_chart

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


def test_one_run_without_a_comparison_has_no_history_section() -> None:
    assert history_section(RUNS[:1], None) == ""


def test_the_trend_page_links_every_run_to_its_report_newest_first(tmp_path: Path) -> None:
    runs = [
        r.model_copy(update={"busy_percent": {"fwd#0": 40.0 + i}, "kernel_count": 7 + i}) for i, r in enumerate(RUNS)
    ]
    chart = trend_chart(runs, tmp_path / "trend.png")
    assert chart.read_bytes().startswith(PNG)
    text = history_page("quickstart", runs, "trend.png")
    assert text.startswith("---\norphan: true\n---\n\n# quickstart: history\n\n3 runs of this bundle are kept")
    assert "```{figure} trend.png" in text
    rows = text.split("* - ")[2:]
    assert [row.split("\n")[0] for row in rows] == [
        "[2026\\-11\\-03 10\\:00](<index.md>) (this report)",
        "[2026\\-11\\-02 10\\:00](<reportgen-page:../quickstart~20261102T100000-00000002/index>)",
        "[2026\\-11\\-01 10\\:00](<reportgen-page:../quickstart~20261101T100000-00000001/index>)",
    ]
    assert "2\\.14.1" in rows[0] and "1.26×" in rows[0] and "fwd\\#0\u00a042" in rows[0] and "  - 9\n" in rows[0]
    assert run_page(RUNS[0]) == "quickstart~20261101T100000-00000001" and run_page(RUNS[2]) == "quickstart"


def test_the_history_section_links_the_trend_page() -> None:
    text = history_section(RUNS, None)
    assert text == "## History\n\n3 runs of this bundle are kept: [their trend](history.md) (`reportgen history`)."


def test_the_sparkline_is_a_small_png(tmp_path: Path) -> None:
    path = sparkline(RUNS, tmp_path / "spark.png")
    assert path.read_bytes().startswith(PNG)
    assert sparkline(RUNS[:2], tmp_path / "other.png").read_bytes() != path.read_bytes()


def test_the_chart_is_the_same_bytes_for_the_same_runs(tmp_path: Path) -> None:
    """Incremental builds rewrite a chart only when its bytes change."""
    first = trend_chart(RUNS, tmp_path / "a.png").read_bytes()
    assert trend_chart(RUNS, tmp_path / "b.png").read_bytes() == first
    assert trend_chart(RUNS[:2], tmp_path / "c.png").read_bytes() != first


def _png_height(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[20:24], "big")


def test_panels_without_a_value_in_any_run_are_left_out(tmp_path: Path) -> None:
    """CPU runs measure no peak memory: no empty panel. Steps, speedup, compile; then busy and kernels too."""
    bare = _png_height(trend_chart(RUNS, tmp_path / "bare.png"))
    fuller = [r.model_copy(update={"busy_percent": {"fwd#0": 40.0}, "kernel_count": 7}) for r in RUNS]
    assert _png_height(trend_chart(fuller, tmp_path / "fuller.png")) - bare == round(2 * 1.6 * 110)


def test_device_time_per_step_stands_beside_the_wall_step_time(tmp_path: Path) -> None:
    """What repeats (device time per step, launches) and what the host moves (wall step times), labelled."""
    runs = [
        RUNS[0],
        RUNS[1].model_copy(update={"device_eager_ms": 6.1, "device_compiled_ms": 2.275, "launches_compiled": 40.0}),
    ]
    text = history_page("quickstart", runs, None)
    header = text.split("* - run\n", 1)[1].split("* - ", 1)[0]
    assert header.startswith(
        "  - status\n  - torch\n  - device\n  - commit\n  - device eager ms\n  - device compiled ms\n"
    )
    assert "  - launches\n  - wall eager ms\n  - wall compiled ms\n" in header
    newest, oldest = text.split("* - ")[2:4]
    assert "  - 6.10\n  - 2.27\n  - 40\n  - 12.00\n  - 8.20\n" in newest  # device, launches, then wall
    assert "  - —\n  - —\n  - —\n  - 12.00\n  - 8.00\n" in oldest  # recorded before the figures
    assert "Device time per step (the GPU's clock over the profiled steps)" in text and "depend on the host" in text
    bare = _png_height(trend_chart(RUNS, tmp_path / "bare.png"))
    assert _png_height(trend_chart(runs, tmp_path / "device.png")) - bare == round(1.6 * 110)  # one panel more


def test_panels_print_their_values_not_an_offset() -> None:
    """Compile times of 10.6800 and 10.6805 s were labelled -0.0001/0.0000/0.0001 under a "+1.068e1" offset."""
    from matplotlib.figure import Figure

    from reportgen.render.trends import _line

    axes = Figure().subplots()
    _line(axes, [0, 1], [10.68, 10.6805], "compile (s)")
    formatter = axes.yaxis.get_major_formatter()
    formatter.set_locs(axes.get_yticks())
    assert formatter.get_offset() == ""
    assert all(label.startswith("10.6") for label in formatter.format_ticks(axes.get_yticks()))
