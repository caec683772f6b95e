"""MyST text of a distributed run: the summary that leads its page (ranks, overlap, straggler), and one page per rank."""

from __future__ import annotations

from reportgen.bundle import DistributedAnalysis, DistributedRun, RankOverlap, RankRun, StepTimes
from reportgen.render.markup import MISSING, code_block, code_span, doc_link, escape_md, figure, list_table, plural

__all__ = ["RANK_HEADER", "distributed_section", "rank_docname", "rank_page"]

RANK_HEADER = [
    "Rank",
    "Status",
    "Compiled step (ms)",
    "Eager step (ms)",
    "Compute (ms)",
    "Communication (ms)",
    "Overlapped (%)",
    "Exposed (ms)",
    "Waiting (ms)",
    "Busy (%)",
    "Peak memory (GiB)",
]
_STRATEGY = {"ddp": "DDP (DistributedDataParallel)", "fsdp2": "FSDP2 (`fully_shard`)"}


def rank_docname(rank: int) -> str:
    """The page of one rank, next to the report page."""
    return f"rank-{rank}"


def _steps(times: StepTimes | None) -> str:
    return f"{times.median_ms:.3f} [{times.q1_ms:.3f}, {times.q3_ms:.3f}]" if times is not None else MISSING


def _ms(us: float | None) -> str:
    return f"{us / 1000:.3f}" if us is not None else MISSING


def _mb(value: float | None) -> str:
    return f"{value / 1e6:.3g}" if value is not None else MISSING


def _gbps(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else MISSING


def _pct(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else MISSING


def _status(rank: RankRun) -> str:
    if rank.status == "running":
        return f"stopped after {code_span(rank.stage)}"
    return rank.status


def _row(rank: RankRun, overlap: RankOverlap | None, link: bool) -> list[str]:
    label = doc_link(f"rank {rank.rank}", rank_docname(rank.rank)) if link else f"rank {rank.rank}"
    return [
        label,
        _status(rank),
        _steps(rank.compiled),
        _steps(rank.eager),
        _ms(overlap.compute_us if overlap else None),
        _ms(overlap.communication_us if overlap else None),
        _pct(overlap.overlap_percent if overlap else None),
        _ms(overlap.exposed_us if overlap else None),
        _ms(overlap.waiting_us if overlap else None),
        _pct(overlap.busy_percent if overlap else None),
        f"{rank.peak_memory_bytes / 2**30:.2f}" if rank.peak_memory_bytes else MISSING,
    ]


def _headline(run: DistributedRun, analysis: DistributedAnalysis | None) -> str:
    parts = [f"{plural(run.world_size, 'rank')}, {_STRATEGY[run.strategy]} over {code_span(run.backend)}."]
    failed = run.failed_rank
    if failed is not None:
        first = (failed.error or "no error recorded").strip().splitlines()[0]
        parts.append(f"**Rank {failed.rank} failed first** (after stage {code_span(failed.stage)}): {escape_md(first)}")
    if analysis is not None and analysis.ranks:
        exposed = max(analysis.ranks, key=lambda o: o.exposed_us)
        parts.append(
            f"Most exposed communication: rank {exposed.rank}, {_ms(exposed.exposed_us)} ms per step "
            f"({_pct(exposed.overlap_percent)} % of its communication overlapped by compute)."
        )
    if analysis is not None and analysis.straggler is not None:
        s = analysis.straggler
        noise = "beyond the host's noise" if s.separated else "within the ranks' inter-quartile ranges (noise)"
        parts.append(
            f"Slowest rank: {s.rank}, its median compiled step {s.excess_percent:+.1f} % against rank "
            f"{s.fastest_rank}'s, {noise}."
        )
    same = run.same_graphs
    if same is not None:
        parts.append(
            "Every rank compiled the same graphs."
            if same
            else "**The ranks compiled different graphs** (their wrappers differ): each rank's page lists its own."
        )
    return " ".join(parts)


def distributed_section(
    run: DistributedRun | None, analysis: DistributedAnalysis | None, link: bool = True, chart: str | None = None
) -> str:
    """ "## Distributed run": the headline, a row per rank, the ranks' timeline (`chart`), the collectives,
    DDPOptimizer's splits ("" when the run is not distributed). `link`: the rank labels link their pages."""
    if run is None:
        return ""
    overlaps = {o.rank: o for o in analysis.ranks} if analysis is not None else {}
    rows = [_row(rank, overlaps.get(rank.rank), link) for rank in run.ranks]
    blocks = [
        "## Distributed run",
        _headline(run, analysis),
        list_table(RANK_HEADER, rows, title="Ranks: step medians [quartiles]; per profiled step"),
        "Compute and communication are unions of intervals on each rank's timeline (NCCL kernels against the other "
        "kernels on a GPU; gloo's collective spans against the ATen ops and Inductor kernels on the CPU); "
        "*overlapped* is the share of communication with compute beside it, as HTA defines it; *exposed* is the "
        "communication time with none; *waiting* is the part of the communication spent waiting for the other ranks "
        "to reach the same call (a call's time beyond its shortest copy on any rank).",
    ]
    if chart is not None:
        blocks.append(
            figure(
                chart,
                "Each rank's compute and communication",
                "Compute and communication of each rank in its first "
                "profiled step, one above the other; each rank's time runs from its own step's start.",
            )
        )
    if analysis is not None and analysis.collectives:
        table = [
            [code_span(c.kind), str(c.calls), _ms(c.time_us), _mb(c.bytes), _gbps(c.bus_gbps)]
            for c in analysis.collectives
        ]
        header = ["Collective", "Calls", "Time (ms)", "Data (MB)", "Bus bandwidth (GB/s)"]
        blocks.append(list_table(header, table, title="Collectives per step per rank"))
        blocks.append(
            "Data and bus bandwidth follow nccl-tests' conventions (all-reduce moves 2(n-1)/n of its buffer over the "
            "bus, all-gather and reduce-scatter (n-1)/n of the whole); bus bandwidth is taken over each call's "
            "shortest copy on any rank, the transfer without the wait."
        )
    if run.splits:
        blocks.append("DDPOptimizer's graph splits (rank 0's log):\n\n" + code_block("\n\n".join(run.splits)))
    if analysis is not None and analysis.notes:
        blocks.append("\n".join(f"- {escape_md(note)}" for note in analysis.notes))
    return "\n\n".join(blocks)


def rank_page(title: str, rank: RankRun, overlap: RankOverlap | None) -> str:
    """One rank's page: its record, its overlap, its error and the compiled modules it loaded."""
    blocks = [
        f"# {escape_md(title)}: rank {rank.rank}",
        list_table(RANK_HEADER, [_row(rank, overlap, link=False)]),
    ]
    if rank.error:
        blocks.append("Its error:\n\n" + code_block(rank.error))
    if rank.trace_file:
        blocks.append(f"Its profiled compiled steps: {code_span(rank.trace_file)} in the bundle.")
    if rank.graphs:
        blocks.append(
            "Compiled graphs it loaded (wrapper modules):\n\n" + "\n".join(f"- {code_span(g)}" for g in rank.graphs)
        )
    return "\n\n".join(blocks) + "\n"
