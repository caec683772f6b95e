"""Step measurements: the CUDA-graph pool counted in a replayed step's peak memory."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from reportgen.run.measure import graph_pool_bytes


def test_graph_pool_bytes_sums_private_pool_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = [
        {"segment_pool_id": (0, 0), "total_size": 1 << 20},  # the default pool: not a graph's
        {"segment_pool_id": (1, 2), "total_size": 3 << 20},
        {"segment_pool_id": [1, 2], "total_size": 5 << 20},  # lists, as some versions give
        {"total_size": 7 << 20},  # no pool id: left out
    ]
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: snapshot)
    assert graph_pool_bytes() == 8 << 20


def test_time_interleaved_probes_the_host_before_each_pair_outside_the_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real (CPU) workload: one probe before each pair of blocks, never inside one, and its real duration kept."""
    from reportgen.recipe import Recipe
    from reportgen.run import measure
    from reportgen.run.workload import Workload

    calls: list[str] = []
    probe_s: list[float] = []
    real_probe = measure.host_probe

    def probe() -> float:
        calls.append("probe")
        probe_s.append(real_probe())
        return probe_s[-1]

    def fn(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
        def step(x: torch.Tensor) -> torch.Tensor:
            calls.append(name)
            return x * 2

        return step

    monkeypatch.setattr(measure, "host_probe", probe)
    recipe = Recipe.model_validate(
        {
            "name": "probe",
            "task": "infer",
            "model": {"ref": "torch.nn:Identity"},
            "inputs": {"tensors": [{"shape": [4]}]},
        }
    )
    work = Workload(device="cpu", recipe=recipe, model=fn("eager"), input_sets=((torch.ones(4),),))
    eager_t, compiled_t, probe_ms = measure.time_interleaved(
        work, fn("eager"), fn("compiled"), samples=4, block_steps=3
    )
    assert calls == (["probe"] + ["eager"] * 3 + ["compiled"] * 3) * 4
    assert len(eager_t.samples_ms) == len(compiled_t.samples_ms) == 4
    assert probe_ms == pytest.approx([s * 1e3 for s in probe_s])
    assert all(ms > 0 for ms in probe_ms)
