"""A distributed run's findings (reportgen.analyze.rank_findings): each fires on its numbers and stays quiet below."""

from __future__ import annotations

import pytest

from reportgen.analyze.findings import findings
from reportgen.analyze.rank_findings import (
    buckets,
    different_graphs,
    exposed_communication,
    host_kept_env,
    straggler_rank,
    waiting_for_rank,
)
from reportgen.bundle import (
    Analysis,
    CollectiveRow,
    DistributedAnalysis,
    DistributedRun,
    KernelTable,
    Manifest,
    RankOverlap,
    RankRun,
    Straggler,
)
from tests.analyze.test_findings import _manifest

__all__: list[str] = []


def _run(
    strategy: str = "ddp", splits: tuple[str, ...] = (), graphs: tuple[tuple[str, ...], ...] = (("a",), ("a",))
) -> Manifest:
    ranks = [RankRun(rank=i, status="ok", stage="done", graphs=list(g)) for i, g in enumerate(graphs)]
    run = DistributedRun(world_size=len(ranks), strategy=strategy, backend="nccl", ranks=ranks, splits=list(splits))  # type: ignore[arg-type]
    return _manifest().model_copy(update={"distributed": run})


def _analysis(
    *overlaps: RankOverlap, collectives: tuple[CollectiveRow, ...] = (), straggler: Straggler | None = None
) -> Analysis:
    table = KernelTable(device="cuda", profiled_steps=3, total_us=1000.0, kernels=[])
    found = DistributedAnalysis(ranks=list(overlaps), collectives=list(collectives), straggler=straggler)
    return Analysis(kernels=table, graphs=[], distributed=found)


def _overlap(rank: int, exposed_us: float, span_us: float = 1000.0) -> RankOverlap:
    return RankOverlap(
        rank=rank, steps=3, compute_us=600.0, communication_us=exposed_us + 100.0, overlapped_us=100.0, span_us=span_us
    )


def test_exposed_communication_names_the_worst_rank_above_a_tenth_of_its_step() -> None:
    finding = exposed_communication(_run(), _analysis(_overlap(0, 50.0), _overlap(1, 250.0)))
    assert finding is not None and finding.title == "Rank 1: 25 % of the step waits on communication"
    assert "0.250 ms per step" in finding.evidence and "bucket_cap_mb" in finding.suggestion
    fsdp = exposed_communication(_run("fsdp2"), _analysis(_overlap(0, 250.0)))
    assert fsdp is not None and "reshard_after_forward" in fsdp.suggestion
    assert exposed_communication(_run(), _analysis(_overlap(0, 100.0), _overlap(1, 99.0))) is None


@pytest.mark.parametrize(
    ("excess", "separated", "fires"), [(12.0, True, True), (12.0, False, False), (4.0, True, False)]
)
def test_a_straggler_fires_only_beyond_the_quartiles_and_five_percent(
    excess: float, separated: bool, fires: bool
) -> None:
    slow = Straggler(rank=3, fastest_rank=0, excess_percent=excess, separated=separated)
    finding = straggler_rank(_analysis(straggler=slow))
    assert (finding is not None) is fires
    if finding is not None:
        assert finding.title == "Rank 3 is a straggler (+12.0 %)"


def test_one_bucket_or_very_many_all_reduces_are_worth_a_note() -> None:
    one = buckets(_run(splits=("DDPOptimizer used bucket cap 26214400 and created 1 buckets.",)), _analysis())
    assert one is not None and "one gradient bucket" in one.title
    many = buckets(_run(), _analysis(collectives=(CollectiveRow(kind="all_reduce", calls=40, time_us=900.0),)))
    assert many is not None and many.title == "DDP: 40 all-reduces per step"
    few = _analysis(collectives=(CollectiveRow(kind="all_reduce", calls=4, time_us=900.0),))
    assert buckets(_run(splits=("created 4 buckets",)), few) is None
    assert buckets(_run("fsdp2", splits=("created 1 buckets",)), _analysis()) is None


def test_ranks_with_different_graphs_are_a_problem() -> None:
    finding = different_graphs(_run(graphs=(("a", "b"), ("a", "c"), ("a", "b"))))
    assert finding is not None and finding.severity == "problem"
    assert "ranks 0, 2: 2 wrappers; ranks 1: 2 wrappers" in finding.evidence
    assert different_graphs(_run()) is None


def test_the_distributed_findings_lead_the_others() -> None:
    manifest = _run(graphs=(("a",), ("b",)))
    rules = [f.rule for f in findings(manifest, None, _analysis(_overlap(0, 500.0)))]
    assert rules[:2] == ["different-graphs", "exposed-communication"]


def _waiting(rank: int, waiting_us: float | None) -> RankOverlap:
    return _overlap(rank, 0.0).model_copy(update={"communication_us": 450.0, "waiting_us": waiting_us})


def test_waiting_for_a_rank_names_the_one_that_waits_and_the_one_that_arrives_last() -> None:
    finding = waiting_for_rank(_analysis(_waiting(0, 400.0), _waiting(1, 3.0), _waiting(2, 150.0)))
    assert finding is not None and finding.rule == "waiting-for-rank"
    assert finding.title == "Rank 0 waits 40 % of its step for rank 1 at the collectives"
    assert "0.400 ms of it (40.0 % of its 1.000 ms step)" in finding.evidence
    assert "Rank 1 waits least (0.003 ms)" in finding.evidence
    assert waiting_for_rank(_analysis(_waiting(0, 100.0), _waiting(1, 0.0))) is None  # a tenth: not above it
    assert waiting_for_rank(_analysis(_waiting(0, None), _waiting(1, None))) is None  # calls did not pair up
    assert waiting_for_rank(_analysis(_waiting(0, 900.0))) is None  # one rank waits for no one


def test_a_recipes_nvlink_setting_the_host_overrode_is_said() -> None:
    manifest = _manifest()
    recipe = manifest.recipe.model_copy(update={"env": {"NCCL_NVLS_ENABLE": "1", "TORCHINDUCTOR_MAX_AUTOTUNE": "1"}})
    assert manifest.environment is not None
    ran = manifest.environment.model_copy(update={"env": {"NCCL_NVLS_ENABLE": "0", "TORCHINDUCTOR_MAX_AUTOTUNE": "1"}})
    finding = host_kept_env(manifest.model_copy(update={"recipe": recipe, "environment": ran}))
    assert finding is not None and finding.rule == "host-kept-env"
    assert "`NCCL_NVLS_ENABLE=0` (the recipe asked `1`)" in finding.evidence
    same = manifest.model_copy(update={"recipe": recipe.model_copy(update={"env": {"NCCL_NVLS_ENABLE": "0"}})})
    assert host_kept_env(same.model_copy(update={"environment": ran})) is None
    assert host_kept_env(manifest.model_copy(update={"recipe": recipe})) is None  # nothing recorded: no claim
