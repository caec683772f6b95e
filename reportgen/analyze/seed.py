"""PyTorch's own per-graph busy numbers (`python wrapper.py -p`), from a `GraphBenchmark`'s profiled trace.

Mirrors `parse_profile_event_list` in `torch/_inductor/wrapper_benchmark.py`:

- every device-side event counts with its self device time (a kernel, memcpy or memset: its duration);
  CPU events are ignored;
- bucket by name prefix: `triton_poi` -> pointwise, `triton_red` -> reduction, `triton_per` ->
  persistent_reduction, anything else (other `triton_*`, cuDNN, cuBLAS, ATen, memcpy) -> other
  (upstream's `triton_unknown` + `unknown`);
- per-call time = total ÷ the number of profiled calls; each bucket's percent = per-call time ÷ the
  unprofiled wall time per call x 100; busy percent = the buckets' sum (no overlap correction: can exceed 100).

One deliberate difference: GPU-side user annotations (cat `gpu_user_annotation`, e.g. torch 2.11's
`## Call CompiledFxGraph <key> ##` around every call) are spans, not work, and are excluded; upstream
counts them as `unknown` device time.

Matching benchmarks to the profiled step's graphs (`match_benchmarks`): within each kind, the n-th
`GraphBenchmark` in wrapper compile order (`GraphBenchmark.graph`) goes with the n-th graph of that kind in
order of first call in the trace. Graphs compile on their first call (backward graphs on the first backward,
in the order the backward pass reaches them), so both orders agree unless graphs were recompiled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reportgen.analyze.join import match_by_kind
from reportgen.bundle import SEED_BUCKETS, GraphAnalysis, GraphBenchmark
from reportgen.formats import GPU_WORK_CATS, Trace

__all__ = ["SeedBusy", "match_benchmarks", "seed_bucket", "seed_busy", "with_seed"]


_PREFIXES: tuple[tuple[str, str], ...] = (
    ("triton_poi", "pointwise"),
    ("triton_red", "reduction"),
    ("triton_per", "persistent_reduction"),
)


@dataclass(frozen=True)
class SeedBusy:
    """One graph's `wrapper.py -p` numbers, in percent of the unprofiled wall time per call."""

    busy_percent: float
    categories_percent: dict[str, float]
    wall_ms: float
    rounds_ms: tuple[float, ...] = ()


def seed_bucket(name: str) -> str:
    """Upstream's bucket of a device event, by name prefix."""
    return next((bucket for prefix, bucket in _PREFIXES if name.startswith(prefix)), "other")


def seed_busy(trace: Trace, benchmark: GraphBenchmark) -> SeedBusy | None:
    """The benchmark trace's device time per bucket, per call, ÷ the unprofiled wall time per call.

    :param trace: the benchmark's profiled trace (`benchmark.trace_file`)
    :param benchmark: its record: `profiled_calls` and `wall_ms_per_call`
    :returns: None when the record has no calls or no wall time
    """
    if benchmark.profiled_calls <= 0 or benchmark.wall_ms_per_call <= 0:
        return None
    total_us = dict.fromkeys(SEED_BUCKETS, 0.0)
    for event in trace.records():
        if event.cat not in GPU_WORK_CATS:
            continue
        name, dur = event.name, event.dur
        if name is not None and dur is not None and dur >= 0:
            total_us[seed_bucket(name)] += dur
    per_call_wall_us = benchmark.wall_ms_per_call * 1000.0 * benchmark.profiled_calls
    percents = {bucket: 100.0 * us / per_call_wall_us for bucket, us in total_us.items()}
    return SeedBusy(
        busy_percent=sum(percents.values()),
        categories_percent=percents,
        wall_ms=benchmark.wall_ms_per_call,
        rounds_ms=tuple(benchmark.rounds_ms),
    )


def match_benchmarks(
    graphs: Sequence[GraphAnalysis], benchmarks: Sequence[GraphBenchmark]
) -> dict[int, GraphBenchmark]:
    """Graph number -> its benchmark: the n-th of a kind in compile order ↔ the n-th of that kind in the trace."""
    return match_by_kind(graphs, sorted(benchmarks, key=lambda benchmark: benchmark.graph))


def with_seed(graph: GraphAnalysis, seed: SeedBusy) -> GraphAnalysis:
    """The graph with `busy_seed_percent` and `seed_categories_percent` filled in."""
    return graph.model_copy(
        update={
            "busy_seed_percent": seed.busy_percent,
            "seed_categories_percent": dict(seed.categories_percent),
            "unprofiled_wall_ms": seed.wall_ms,
            "unprofiled_rounds_ms": list(seed.rounds_ms),
        }
    )
