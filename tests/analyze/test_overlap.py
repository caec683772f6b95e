"""A distributed run's overlap (reportgen.analyze.overlap): derived again here from the raw events by brute force."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from reportgen.analyze.graphs import attribute_graphs
from reportgen.analyze.overlap import collective_kind, combine, rank_overlap, straggler
from reportgen.bundle import DistributedRun, RankRun, StepTimes
from reportgen.formats import read_trace
from reportgen.formats.trace import Trace
from tests.data import DDP_GLOO_TRACES, NCCL_TRACES

__all__: list[str] = []

_CPU_COMPUTE = ("aten::", "cpp_fused", "graph_")


def _covered(point: float, intervals: list[tuple[float, float]]) -> bool:
    return any(start <= point < end for start, end in intervals)


def _brute_force(
    intervals: dict[str, list[tuple[float, float]]], windows: list[tuple[float, float]]
) -> dict[str, float]:
    """Lengths covered by communication, compute and both inside the windows: every elementary segment between
    two consecutive boundaries, tested at its midpoint against every interval (no merging, no sweep)."""
    points = sorted({p for group in (*intervals.values(), windows) for interval in group for p in interval})
    found = {"comm": 0.0, "compute": 0.0, "both": 0.0}
    for low, high in itertools.pairwise(points):
        middle = (low + high) / 2
        if not _covered(middle, windows):
            continue
        comm, compute = _covered(middle, intervals["comm"]), _covered(middle, intervals["compute"])
        found["comm"] += (high - low) * comm
        found["compute"] += (high - low) * compute
        found["both"] += (high - low) * (comm and compute)
    return found


def _raw_gloo(path: Path) -> tuple[dict[str, list[tuple[float, float]]], list[tuple[float, float]]]:
    """From the raw JSON: gloo's collective spans, the CPU ops on the other threads, the profiler's step spans."""
    events: list[dict[str, Any]] = [
        e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"
    ]
    comm = [e for e in events if e["name"].startswith("gloo:")]
    comm_threads = {(e["pid"], e["tid"]) for e in comm}
    compute = [
        e
        for e in events
        if e.get("cat") == "cpu_op" and e["name"].startswith(_CPU_COMPUTE) and (e["pid"], e["tid"]) not in comm_threads
    ]
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    span = lambda e: (float(e["ts"]), float(e["ts"]) + float(e["dur"]))  # noqa: E731
    return {"comm": [span(e) for e in comm], "compute": [span(e) for e in compute]}, [span(e) for e in steps]


@pytest.mark.parametrize("rank", [0, 1])
def test_a_recorded_gloo_rank_overlaps_as_its_raw_events_say(rank: int) -> None:
    path = DDP_GLOO_TRACES[rank]
    trace = read_trace(path, "cpu")
    steps = attribute_graphs(trace, "cpu").steps
    overlap, calls = rank_overlap(trace, "cpu", steps, rank)
    intervals, step_spans = _raw_gloo(path)
    assert len(step_spans) == overlap.steps == 2
    windows = [(s.window_start_us, s.window_start_us + s.wall_us) for s in steps]
    for (start, end), (low, high) in zip(step_spans, windows, strict=True):  # the windows are the step spans here
        assert low == pytest.approx(start, abs=1.0) and high == pytest.approx(end, abs=1.0)
    expected = _brute_force(intervals, windows)
    assert expected["comm"] > 0 and expected["compute"] > 0 and 0 < expected["both"] < expected["comm"]
    assert overlap.communication_us == pytest.approx(expected["comm"] / 2, rel=1e-9)
    assert overlap.compute_us == pytest.approx(expected["compute"] / 2, rel=1e-9)
    assert overlap.overlapped_us == pytest.approx(expected["both"] / 2, rel=1e-9)
    assert overlap.exposed_us == pytest.approx((expected["comm"] - expected["both"]) / 2, rel=1e-9)
    spans = sorted(start for start, _ in intervals["comm"] if _covered(start, windows))
    assert [(c.kind, c.start_us, c.size_bytes) for c in calls] == [("all_reduce", start, None) for start in spans]


def _raw_nccl(path: Path) -> tuple[dict[str, list[tuple[float, float]]], int]:
    """From the raw JSON: the kernels launched while profiling (their correlation has a runtime launch), NCCL's
    apart; and how many kernels ran without such a launch."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    launched = {e["args"]["correlation"] for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    mine = [e for e in kernels if e["args"]["correlation"] in launched]
    span = lambda e: (float(e["ts"]), float(e["ts"]) + float(e["dur"]))  # noqa: E731
    comm = [span(e) for e in mine if e["name"].startswith("ncclDevKernel")]
    compute = [span(e) for e in mine if not e["name"].startswith("ncclDevKernel")]
    return {"comm": comm, "compute": compute}, len(kernels) - len(mine)


@pytest.mark.parametrize("rank", [0, 1])
def test_a_gpu_ranks_overlap_counts_only_the_kernels_launched_while_profiling(rank: int) -> None:
    """Rank 0 of `ddp-skew` ran two all-reduces launched before its profiler started, inside its first step window:
    left out, as HTA leaves them out, the overlap is that of the kernels the profiled steps launched."""
    path = NCCL_TRACES["ddp-skew"][rank]
    trace = read_trace(path, "cuda")
    steps = attribute_graphs(trace, "cuda").steps
    overlap, calls = rank_overlap(trace, "cuda", steps, rank)
    intervals, unlaunched = _raw_nccl(path)
    windows = [(s.window_start_us, s.window_start_us + s.wall_us) for s in steps]
    expected = _brute_force(intervals, windows)
    assert overlap.steps == 3 and (unlaunched > 0) == (rank == 0)
    assert overlap.communication_us == pytest.approx(expected["comm"] / 3, rel=1e-9)
    assert overlap.compute_us == pytest.approx(expected["compute"] / 3, rel=1e-9)
    assert overlap.overlapped_us == pytest.approx(expected["both"] / 3, rel=1e-9)
    assert len(calls) == 21  # 5 all-reduces and 2 broadcasts a step, on both ranks


def _event(name: str, cat: str, ts: float, dur: float, tid: int = 7) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": tid, "ts": ts, "dur": dur}


def test_nccl_kernels_against_the_other_kernels_on_a_gpu() -> None:
    """Compute [0, 100) and [150, 250) on one stream, an all-reduce [80, 180) on another: 20 + 30 us overlapped."""
    events = [
        _event("triton_poi_fused_add_0", "kernel", 0, 100),
        _event("nvjet_sm90_tst_128x256", "kernel", 150, 100),
        _event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", 80, 100, tid=20),
        _event("aten::add", "cpu_op", 0, 400, tid=1),  # host work is not the device's compute
        _event("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 100, 50, tid=9),  # nor is a copy (as HTA counts)
    ]
    overlap, calls = rank_overlap(Trace(path=Path("gpu.json"), events=events), "cuda", [], 3)
    assert (overlap.rank, overlap.steps, overlap.span_us) == (3, 1, 250.0)
    assert (overlap.compute_us, overlap.communication_us, overlap.overlapped_us) == (200.0, 100.0, 50.0)
    assert overlap.exposed_us == 50.0 and overlap.overlap_percent == 50.0 and overlap.busy_percent == 100.0
    assert [(c.kind, c.start_us, c.dur_us) for c in calls] == [("all_reduce", 80.0, 100.0)]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "all_reduce"),
        ("ncclDevKernel_AllGather_RING_LL", "all_gather"),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "reduce_scatter"),
        ("ncclDevKernel_SendRecv", "send_recv"),
        ("ncclDevKernel_Broadcast_RING_LL", "broadcast"),
        ("gloo:all_reduce", "all_reduce"),
        ("gloo:barrier", "barrier"),
        ("ncclDevKernel_Something", "other"),
    ],
)
def test_collective_kinds_are_named_from_nccl_and_gloo_names(name: str, kind: str) -> None:
    assert collective_kind(name) == kind


def _times(median: float, q1: float, q3: float) -> StepTimes:
    return StepTimes(samples_ms=[q1, median, q3], median_ms=median, q1_ms=q1, q3_ms=q3, min_ms=q1, max_ms=q3)


def _run(*ranks: RankRun) -> DistributedRun:
    return DistributedRun(world_size=len(ranks), strategy="ddp", backend="nccl", ranks=list(ranks))


def test_the_straggler_is_the_slowest_median_and_says_whether_the_quartiles_separate() -> None:
    run = _run(
        RankRun(rank=0, status="ok", stage="done", compiled=_times(10.0, 9.8, 10.2)),
        RankRun(rank=1, status="ok", stage="done", compiled=_times(12.5, 12.1, 12.9)),
        RankRun(rank=2, status="ok", stage="done", compiled=_times(10.1, 9.0, 11.0)),
    )
    found = straggler(run)
    assert found is not None
    assert (found.rank, found.fastest_rank, found.separated) == (1, 0, True)
    assert found.excess_percent == pytest.approx(25.0)
    close = _run(run.ranks[0], run.ranks[2])
    assert straggler(close) is not None and straggler(close).separated is False  # type: ignore[union-attr]
    assert straggler(_run(run.ranks[0], RankRun(rank=1, status="failed", stage="compile"))) is None


def test_the_rank_that_failed_first_is_the_cause() -> None:
    run = _run(
        RankRun(rank=0, status="failed", stage="compile", error="Connection closed by peer", failed_at=105.0),
        RankRun(rank=1, status="failed", stage="model", error="RuntimeError: rank one refuses", failed_at=100.0),
        RankRun(rank=2, status="running", stage="compile"),
    )
    assert run.failed_rank is not None and run.failed_rank.rank == 1
    assert _run(RankRun(rank=0, status="ok", stage="done")).failed_rank is None


def test_the_ranks_compiled_the_same_graphs_only_when_every_rank_names_the_same_wrappers() -> None:
    a, b = ["ca.py", "cb.py"], ["ca.py", "cc.py"]
    same = _run(
        RankRun(rank=0, status="ok", stage="done", graphs=a), RankRun(rank=1, status="ok", stage="done", graphs=a)
    )
    differ = _run(
        RankRun(rank=0, status="ok", stage="done", graphs=a), RankRun(rank=1, status="ok", stage="done", graphs=b)
    )
    unknown = _run(
        RankRun(rank=0, status="ok", stage="done", graphs=a), RankRun(rank=1, status="failed", stage="model")
    )
    assert (same.same_graphs, differ.same_graphs, unknown.same_graphs) == (True, False, None)
    gpus = _run(  # each rank's wrappers name its own GPU, so their files differ; their device-neutral digests do not
        RankRun(rank=0, status="ok", stage="done", graphs=a, graph_digests=["d1", "d2"]),
        RankRun(rank=1, status="ok", stage="done", graphs=b, graph_digests=["d1", "d2"]),
    )
    assert gpus.same_graphs is True
    assert _run(gpus.ranks[0], gpus.ranks[1].model_copy(update={"graph_digests": ["d1", "d3"]})).same_graphs is False


def test_combine_averages_the_collectives_over_the_ranks_read() -> None:
    events = [_event("k", "kernel", 0, 10), _event("ncclDevKernel_AllReduce_Sum", "kernel", 5, 20, tid=9)]
    one = rank_overlap(Trace(path=Path("a.json"), events=events), "cuda", [], 0)
    events2 = [_event("k", "kernel", 0, 10), _event("ncclDevKernel_AllReduce_Sum", "kernel", 5, 40, tid=9)]
    two = rank_overlap(Trace(path=Path("b.json"), events=events2), "cuda", [], 1)
    run = _run(RankRun(rank=0, status="ok", stage="done"), RankRun(rank=1, status="ok", stage="done"))
    found = combine([two, one], run, ["rank 2's trace was not read"])
    assert [o.rank for o in found.ranks] == [0, 1]
    assert [(c.kind, c.calls, c.time_us) for c in found.collectives] == [("all_reduce", 1, 30.0)]
    assert [o.waiting_us for o in found.ranks] == [0.0, 20.0]  # rank 1's all-reduce took 20 us beyond rank 0's
    assert found.notes == ["rank 2's trace was not read"]
