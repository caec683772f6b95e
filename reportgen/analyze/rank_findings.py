"""Findings of a distributed run: communication left exposed, a straggler, ranks waiting for a late one at the
collectives, DDP buckets too few or too many, ranks that compiled different graphs; and a recipe's NVLink setting
that the host's safety setting overrode."""

from __future__ import annotations

import re
from typing import Final

from reportgen.bundle import Analysis, Finding, GraphBreak, Manifest
from reportgen.recipe import HOST_KEPT

__all__ = [
    "EXPOSED_SHARE",
    "MANY_BUCKETS",
    "STRAGGLER_PERCENT",
    "WAITING_SHARE",
    "buckets",
    "different_graphs",
    "exposed_communication",
    "host_kept_env",
    "in_wrapper",
    "straggler_rank",
    "waiting_for_rank",
    "wrapper_breaks",
]

EXPOSED_SHARE: Final = 0.10
"""Communication with no compute beside it above this share of a rank's step is worth hiding."""
STRAGGLER_PERCENT: Final = 5.0
"""A rank whose compiled step median is this much above the fastest rank's (and beyond the quartiles) holds the
others back: every collective waits for it."""
WAITING_SHARE: Final = 0.10
"""Collectives waiting for another rank above this share of a rank's step: a late rank holds the others back."""
MANY_BUCKETS: Final = 32
"""More all-reduces per step than this: each pays the collective's latency; larger buckets would pay it less often."""
_BUCKETS = re.compile(r"created (\d+) buckets?")
_WRAPPER_CODE = re.compile(r"torch/(?:nn/parallel|distributed)/")
_WRAPPER_MODULE = re.compile(r"\bmodule: torch\.(?:nn\.parallel|distributed)\b")
_STRATEGY_NAMES = {"ddp": "DDP", "fsdp2": "FSDP2"}


def in_wrapper(graph_break: GraphBreak) -> bool:
    """A break in PyTorch's own DDP or FSDP code, which Dynamo leaves untraced on purpose: at a line of it
    (`torch/nn/parallel/distributed.py`, `torch/distributed/fsdp/...`), or calling a function of it that Dynamo
    skips (`module: torch.nn.parallel.distributed, qualname: DistributedDataParallel._inside_ddp_forward`)."""
    return bool(_WRAPPER_CODE.search(graph_break.location or "") or _WRAPPER_MODULE.search(graph_break.reason))


def wrapper_breaks(manifest: Manifest, breaks: list[GraphBreak]) -> Finding:
    """The breaks at the distributed wrapper's own code, when they are all the run has: by design, nothing to fix."""
    total = sum(b.count for b in breaks)
    run = manifest.distributed
    wrapper = _STRATEGY_NAMES.get(run.strategy, run.strategy) if run is not None else "the wrapper"
    places = sorted({b.location for b in breaks if b.location})
    return Finding(
        rule="graph-breaks",
        severity="info",
        title=f"{total} graph break{'s' if total != 1 else ''} in {wrapper}'s own code, by design",
        evidence=f"Every graph break is in PyTorch's {wrapper} code, which Dynamo does not trace: "
        + (", ".join(_code(p) for p in places) or "the skipped function is the wrapper's")
        + ". The model inside the wrapper is compiled; the compile diagnostics list each break.",
        suggestion="Nothing in the model's code to change for these. Breaks of your own code would be listed "
        "apart, as a warning.",
    )


def exposed_communication(manifest: Manifest, analysis: Analysis) -> Finding | None:
    """The rank whose exposed communication is the largest share of its step, when above `EXPOSED_SHARE`."""
    found = analysis.distributed
    if found is None or not found.ranks or manifest.distributed is None:
        return None
    worst = max(found.ranks, key=lambda o: o.exposed_us / o.span_us if o.span_us > 0 else 0.0)
    if worst.span_us <= 0 or worst.exposed_us / worst.span_us <= EXPOSED_SHARE:
        return None
    share = 100.0 * worst.exposed_us / worst.span_us
    overlapped = f"{worst.overlap_percent:.1f} %" if worst.overlap_percent is not None else "none"
    if manifest.distributed.strategy == "ddp":
        how = (
            "DDP starts a bucket's all-reduce when its last gradient is ready: smaller buckets (`bucket_cap_mb`) start "
            "sooner, and DDPOptimizer splits the compiled backward at their boundaries so compute runs beside them."
        )
    else:
        how = (
            "FSDP2 prefetches the next unit's all-gather while the current one computes: shard finer units (each "
            "block apart), or keep parameters gathered after forward (`reshard_after_forward=False`) for fewer gathers."
        )
    return Finding(
        rule="exposed-communication",
        severity="warning",
        title=f"Rank {worst.rank}: {share:.0f} % of the step waits on communication",
        evidence=f"Rank {worst.rank} spends {worst.exposed_us / 1000:.3f} ms per step in collectives with no compute "
        f"beside them ({share:.1f} % of its {worst.span_us / 1000:.3f} ms step); {overlapped} of its "
        f"{worst.communication_us / 1000:.3f} ms of communication overlapped compute.",
        suggestion=how,
    )


def straggler_rank(analysis: Analysis) -> Finding | None:
    """A rank slower than the fastest by more than `STRAGGLER_PERCENT`, beyond the quartiles."""
    found = analysis.distributed
    slow = found.straggler if found is not None else None
    if slow is None or not slow.separated or slow.excess_percent <= STRAGGLER_PERCENT:
        return None
    return Finding(
        rule="straggler",
        severity="warning",
        title=f"Rank {slow.rank} is a straggler (+{slow.excess_percent:.1f} %)",
        evidence=f"Rank {slow.rank}'s median compiled step is {slow.excess_percent:.1f} % longer than rank "
        f"{slow.fastest_rank}'s, and their inter-quartile ranges do not overlap: every collective waits for it.",
        suggestion="Compare the two ranks' pages: a rank that compiled different graphs, recompiled, or shares its GPU "
        "or cores with other work is slower; so is one on a throttled or differently-linked GPU.",
    )


def waiting_for_rank(analysis: Analysis) -> Finding | None:
    """The rank whose collectives wait longest for the others (above `WAITING_SHARE` of its step), and the rank that
    waits least: the one that reaches the collectives last."""
    found = analysis.distributed
    timed = [o for o in found.ranks if o.waiting_us is not None and o.span_us > 0] if found is not None else []
    if len(timed) < 2:
        return None
    worst = max(timed, key=lambda o: (o.waiting_us or 0.0) / o.span_us)
    late = min(timed, key=lambda o: (o.waiting_us or 0.0, o.rank))
    wait = worst.waiting_us or 0.0
    if wait / worst.span_us <= WAITING_SHARE or late.rank == worst.rank:
        return None
    share = 100.0 * wait / worst.span_us
    return Finding(
        rule="waiting-for-rank",
        severity="warning",
        title=f"Rank {worst.rank} waits {share:.0f} % of its step for rank {late.rank} at the collectives",
        evidence=f"Rank {worst.rank}'s collectives took {worst.communication_us / 1000:.3f} ms per step, "
        f"{wait / 1000:.3f} ms of it ({share:.1f} % of its {worst.span_us / 1000:.3f} ms step) waiting for the other "
        f"ranks to reach the same calls (each call's time beyond its shortest copy on any rank). Rank {late.rank} "
        f"waits least ({(late.waiting_us or 0.0) / 1000:.3f} ms): it reaches the collectives last.",
        suggestion=f"A collective makes every rank's step as long as the latest one's, so the step times match and "
        f"no straggler shows there. Compare rank {late.rank}'s page with the others': host work before the collectives "
        "that only it does, a busier CPU core, more kernels on its GPU. On a launch-bound step (little compute per "
        "step), CUDA graphs (`mode: reduce-overhead`) cut the host time in which ranks drift apart.",
    )


def buckets(manifest: Manifest, analysis: Analysis) -> Finding | None:
    """DDP with one bucket (nothing to overlap) or very many (each all-reduce's latency paid often)."""
    run = manifest.distributed
    if run is None or run.strategy != "ddp":
        return None
    counts = [int(m.group(1)) for line in run.splits if (m := _BUCKETS.search(line))]
    calls = (
        sum(c.calls for c in analysis.distributed.collectives if c.kind == "all_reduce") if analysis.distributed else 0
    )
    if counts and max(counts) == 1:
        return Finding(
            rule="ddp-buckets",
            severity="info",
            title="DDP: one gradient bucket, no overlap possible",
            evidence="DDPOptimizer created 1 bucket: the whole backward runs before the one all-reduce can start.",
            suggestion="Lower `distributed.bucket_cap_mb` below the model's gradient size (DDP's default is 25 MiB) "
            "so that all-reduces start while backward still computes.",
        )
    if calls > MANY_BUCKETS:
        return Finding(
            rule="ddp-buckets",
            severity="info",
            title=f"DDP: {calls} all-reduces per step",
            evidence=f"Each rank runs {calls} all-reduces per step: each pays the collective's fixed latency.",
            suggestion="Raise `distributed.bucket_cap_mb` for fewer, larger buckets.",
        )
    return None


def _code(text: str) -> str:
    """`text` as a code span of a finding's evidence (its own backticks dropped: they are the span's marks)."""
    return "`" + text.replace("`", "") + "`"


def host_kept_env(manifest: Manifest) -> Finding | None:
    """A value the recipe's `env` gave a host safety setting (`recipe.HOST_KEPT`) that the run did not get: the
    host's own value won (the run's recorded environment says which)."""
    recorded = manifest.environment.env if manifest.environment is not None else {}
    asked = manifest.recipe.env
    kept = [name for name in HOST_KEPT if name in asked and name in recorded and recorded[name] != asked[name]]
    if not kept:
        return None
    listed = ", ".join(f"{_code(f'{name}={recorded[name]}')} (the recipe asked {_code(asked[name])})" for name in kept)
    return Finding(
        rule="host-kept-env",
        severity="info",
        title="The host's NVLink safety settings overrode the recipe's",
        evidence=f"The run had {listed}: this host sets them for every process, whatever a recipe says.",
        suggestion="Multicast over NVLink can take shared GPUs out of service on such hosts; measure it on a machine "
        "of your own, where reportgen's environment does not set these variables.",
    )


def different_graphs(manifest: Manifest) -> Finding | None:
    """Ranks that compiled different graphs (their wrappers differ): they run different code."""
    run = manifest.distributed
    if run is None or run.same_graphs is not False:
        return None
    groups: dict[tuple[str, ...], list[int]] = {}
    for rank, keys in zip(run.ranks, run.graph_keys(), strict=True):
        groups.setdefault(tuple(keys), []).append(rank.rank)
    listed = "; ".join(
        f"ranks {', '.join(map(str, ranks))}: {len(graphs)} wrappers" for graphs, ranks in groups.items()
    )
    return Finding(
        rule="different-graphs",
        severity="problem",
        title="The ranks compiled different graphs",
        evidence=f"The compiled wrappers the ranks loaded differ ({listed}): the ranks run different code, and their "
        "collectives may not line up.",
        suggestion="Look for rank-dependent Python in the model (branches on the rank, data-dependent shapes); each "
        "rank's page lists its wrappers.",
    )
