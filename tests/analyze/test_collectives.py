"""A distributed run's collectives across ranks (reportgen.analyze.collectives): sizes and bus bandwidth by nccl-tests'
formulas counted by hand, and on two real H200 runs, derived again from the raw NCCL kernel events."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from reportgen.analyze.collectives import Call, bus_factor, call_bytes, paired, waiting_us
from reportgen.analyze.graphs import attribute_graphs
from reportgen.analyze.overlap import combine, rank_overlap
from reportgen.bundle import DistributedRun, RankRun
from reportgen.formats import CollectiveArgs, load_trace, read_trace
from reportgen.formats.trace import collective_args
from tests.data import NCCL_TRACES

__all__: list[str] = []


@pytest.mark.parametrize(
    ("kind", "ranks", "factor"),
    [
        ("all_reduce", 2, 1.0),
        ("all_reduce", 8, 1.75),
        ("all_gather", 4, 0.75),
        ("reduce_scatter", 2, 0.5),
        ("all_to_all", 8, 0.875),
        ("broadcast", 8, 1.0),
        ("barrier", 8, None),
    ],
)
def test_bus_factors_are_nccl_tests(kind: str, ranks: int, factor: float | None) -> None:
    assert bus_factor(kind, ranks) == factor


@pytest.mark.parametrize(
    ("kind", "args", "size"),
    [
        ("all_reduce", CollectiveArgs("allreduce", 2048000, 2048000, 2, "Float"), 8_192_000),
        ("all_gather", CollectiveArgs("_allgather_base", 1576192, 3152384, 2, "Float"), 12_609_536),  # the output
        ("reduce_scatter", CollectiveArgs("_reduce_scatter_base", 5130, 2565, 2, "Float"), 20_520),  # the input
        ("all_reduce", CollectiveArgs("allreduce", 100, 100, 2, "BFloat16"), 200),
        ("broadcast", CollectiveArgs("broadcast", 53, 53, 2, "Long"), 424),
        ("all_reduce", CollectiveArgs("allreduce", 100, 100, 2, "Float9"), None),  # an unknown type: no guess
        ("all_reduce", None, None),
    ],
)
def test_a_calls_size_is_its_buffer_or_the_whole_gathered_or_scattered_tensor(
    kind: str, args: CollectiveArgs | None, size: float | None
) -> None:
    assert call_bytes(kind, args) == size


def test_malformed_collective_args_become_none_and_long_strings_are_cut() -> None:
    assert collective_args({"Collective name": 5}) is None and collective_args("x") is None
    found = collective_args({"Collective name": "a" * 500, "In msg nelems": -1, "Out msg nelems": True, "dtype": 7})
    assert found == CollectiveArgs("a" * 64, None, None, None, None)


def _call(kind: str, dur: float, size: float | None = 8.0) -> Call:
    return Call(kind, 0.0, dur, size, 2)


def test_a_call_cut_off_at_the_profiles_edge_on_one_rank_is_left_out_and_the_rest_pair_up() -> None:
    steps = [_call("all_gather", 50.0), _call("all_reduce", 10.0, 16.0)] * 5
    rank0 = [_call("reduce_scatter", 900.0, None), *steps]
    rank1 = [_call("all_gather", 5.0), _call("all_reduce", 30.0, 16.0)] * 5
    assert paired([rank0, rank1]) == [(i + 1, i) for i in range(10)]
    assert waiting_us([rank0, rank1]) == [5 * 45.0, 5 * 20.0]  # 50 - 5 on rank 0; 30 - 10 on rank 1; five times
    assert paired([steps, [_call("broadcast", 1.0), _call("barrier", 1.0)] * 5]) is None  # under 90 % pair up
    assert paired([rank0]) is None


def _raw_collectives(path: Path) -> list[dict[str, Any]]:
    """The NCCL kernels that record their collective, in launch (correlation) order, from the raw JSON."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "Collective name" in e.get("args", {})]
    return sorted(kernels, key=lambda e: e["args"]["correlation"])


_BYTES = {"Float": 4, "BFloat16": 2, "Half": 2, "Long": 8}
_FACTOR = {"allreduce": 1.0, "_allgather_base": 0.5, "_reduce_scatter_base": 0.5, "broadcast": 1.0}  # two ranks
_KIND = {"allreduce": "all_reduce", "_allgather_base": "all_gather", "_reduce_scatter_base": "reduce_scatter"}


@pytest.mark.parametrize("strategy", ["ddp", "fsdp2"])
def test_real_nccl_ranks_wait_and_move_data_as_their_raw_kernels_say(strategy: str) -> None:
    raw = [_raw_collectives(path) for path in NCCL_TRACES[strategy]]
    signature = [[(e["args"]["Collective name"], e["args"]["In msg nelems"]) for e in rank] for rank in raw]
    assert signature[0] == signature[1] and len(raw[0]) >= 21  # the same calls in the same order on both ranks
    shortest = [min(a["dur"], b["dur"]) for a, b in zip(*raw, strict=True)]
    waits = [sum(e["dur"] - low for e, low in zip(rank, shortest, strict=True)) for rank in raw]
    found = []
    for rank, path in enumerate(NCCL_TRACES[strategy]):
        trace = read_trace(path)
        found.append(rank_overlap(trace, "cuda", attribute_graphs(trace, "cuda").steps, rank))
    assert [overlap.steps for overlap, _ in found] == [3, 3]
    run = DistributedRun(
        world_size=2,
        strategy=strategy,  # type: ignore[arg-type]
        backend="nccl",
        ranks=[RankRun(rank=r, status="ok", stage="done") for r in (0, 1)],
    )
    analysis = combine(found, run)
    assert [o.waiting_us for o in analysis.ranks] == pytest.approx([w / 3 for w in waits], rel=1e-9)
    for row in analysis.collectives:
        mine = [(e, low) for e, low in zip(raw[0], shortest, strict=True) if row.kind == _kind(e)]
        sizes = [e["args"]["In msg nelems"] if _kind(e) == "all_reduce" else _whole(e) for e, _ in mine]
        moved = [n * _BYTES[e["args"]["dtype"]] for n, (e, _) in zip(sizes, mine, strict=True)]
        assert row.bytes == pytest.approx(sum(moved) / 3, rel=1e-9)
        bus = sum(m * _FACTOR[e["args"]["Collective name"]] for m, (e, _) in zip(moved, mine, strict=True))
        assert row.bus_gbps == pytest.approx(bus / sum(low for _, low in mine) / 1e3, rel=1e-9)
    top = max(analysis.ranks, key=lambda o: o.waiting_us or 0.0)
    assert (top.waiting_us or 0.0) <= top.communication_us  # waiting is part of the communication


def _kind(event: dict[str, Any]) -> str:
    return _KIND.get(event["args"]["Collective name"], event["args"]["Collective name"])


def _whole(event: dict[str, Any]) -> int:
    return max(event["args"]["In msg nelems"], event["args"]["Out msg nelems"])


def test_the_streaming_reader_keeps_the_same_collective_args_as_the_full_loader() -> None:
    path = NCCL_TRACES["fsdp2"][0]
    streamed, loaded = read_trace(path).collective_calls(), load_trace(path).collective_calls()
    assert streamed == loaded and len(streamed) == len(_raw_collectives(path)) == 54
