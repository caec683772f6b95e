"""Step measurements: the CUDA-graph pool counted in a replayed step's peak memory."""

from __future__ import annotations

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
