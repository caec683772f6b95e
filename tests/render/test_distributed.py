"""A distributed run's section and rank pages (reportgen.render.distributed): rows, headline, hostile errors."""

from __future__ import annotations

from pathlib import Path

from docutils.core import publish_string
from myst_parser.parsers.docutils_ import Parser

from reportgen.bundle import (
    CollectiveRow,
    DistributedAnalysis,
    DistributedRun,
    RankOverlap,
    RankRun,
    StepTimes,
    Straggler,
)
from reportgen.render.distributed import distributed_section, rank_page
from reportgen.render.graph_charts import ranks_chart

__all__: list[str] = []

HOSTILE = "RuntimeError: ```{raw} html\n<script>alert(1)</script>\n```"


def _times(median: float) -> StepTimes:
    return StepTimes(samples_ms=[median], median_ms=median, q1_ms=median - 0.1, q3_ms=median + 0.1, min_ms=1, max_ms=20)


def _html(myst: str) -> str:
    return str(publish_string(myst, parser=Parser(), writer="html5", settings_overrides={"output_encoding": "unicode"}))


def _run(error: str | None = None) -> DistributedRun:
    ranks = [
        RankRun(rank=0, status="ok", stage="done", compiled=_times(10.0), eager=_times(12.0), graphs=["a.py"]),
        RankRun(
            rank=1,
            status="failed" if error else "ok",
            stage="compile",
            error=error,
            failed_at=1.0 if error else None,
            compiled=None if error else _times(11.0),
            graphs=["a.py"],
            peak_memory_bytes=3 << 30,
        ),
    ]
    return DistributedRun(world_size=2, strategy="fsdp2", backend="nccl", ranks=ranks, splits=["created 2 buckets"])


def test_the_section_has_a_row_per_rank_with_its_overlap_and_a_headline() -> None:
    analysis = DistributedAnalysis(
        ranks=[
            RankOverlap(rank=0, steps=3, compute_us=8000, communication_us=2000, overlapped_us=1500, span_us=10000),
            RankOverlap(rank=1, steps=3, compute_us=8000, communication_us=3000, overlapped_us=1000, span_us=11000),
        ],
        straggler=Straggler(rank=1, fastest_rank=0, excess_percent=10.0, separated=True),
    )
    text = distributed_section(_run(), analysis, chart="r-ranks.png")
    assert text.startswith("## Distributed run\n\n2 ranks, FSDP2 (`fully_shard`) over `nccl`.")
    assert "Most exposed communication: rank 1, 2.000 ms per step (33.3 % of its communication overlapped" in text
    assert "Slowest rank: 1, its median compiled step +10.0 % against rank 0's, beyond the host's noise." in text
    assert "Every rank compiled the same graphs." in text and "r-ranks.png" in text
    rows = text.split("* - ")[2:]
    assert rows[0].startswith("{doc}`rank 0 <rank-0>`\n  - ok\n  - 10.000 [9.900, 10.100]\n  - 12.000")
    assert "  - 8.000\n  - 2.000\n  - 75.0\n  - 0.500\n  - —\n  - 85.0\n  - —" in rows[0]  # busy: 8 + 2 - 1.5 of 10 ms
    assert "  - 3.00\n" in rows[1]  # GiB
    assert distributed_section(None, analysis) == ""


def test_the_collectives_table_gives_data_and_bus_bandwidth_and_ranks_their_waiting() -> None:
    analysis = DistributedAnalysis(
        ranks=[
            RankOverlap(
                rank=0, steps=3, compute_us=3000, communication_us=44000, overlapped_us=3000, span_us=45000,
                waiting_us=42700,
            ),
        ],
        collectives=[
            CollectiveRow(kind="all_gather", calls=12, time_us=13036.0, bytes=100.9e6, bus_gbps=139.92),
            CollectiveRow(kind="broadcast", calls=2, time_us=12.0),
        ],
    )  # fmt: skip
    text = distributed_section(_run(), analysis)
    assert "  - 41.000\n  - 42.700\n" in text.split("* - ")[2]  # exposed, then waiting
    assert "* - `all_gather`\n  - 12\n  - 13.036\n  - 101\n  - 139.9" in text
    assert "* - `broadcast`\n  - 2\n  - 0.012\n  - —\n  - —" in text  # no sizes recorded: no guess
    assert "nccl-tests' conventions" in text


def test_a_failed_rank_leads_the_headline_and_a_hostile_error_stays_text() -> None:
    text = distributed_section(_run(HOSTILE), None)
    assert "**Rank 1 failed first** (after stage `compile`): RuntimeError\\: \\`\\`\\`" in text
    html = _html(text)
    assert "<script>" not in html and "&lt;script&gt;" not in html.split("failed first", 1)[0]
    page = rank_page("A title", _run(HOSTILE).ranks[1], None)
    assert page.startswith("# A title: rank 1")
    rendered = _html(page)
    assert "<script>" not in rendered and "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered


def test_the_ranks_chart_draws_each_rank(tmp_path: Path) -> None:
    overlaps = [
        RankOverlap(rank=r, steps=1, compute_us=1, communication_us=1, overlapped_us=0, span_us=2,
                    compute_strip=[(0.0, 100.0), (150.0, 300.0)], communication_strip=[(80.0, 200.0)])
        for r in (0, 1)
    ]  # fmt: skip
    path = ranks_chart(overlaps, tmp_path / "ranks.png")
    assert path.is_file() and path.stat().st_size > 5000
