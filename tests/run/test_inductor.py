"""The private Inductor hooks reportgen relies on, and their fallbacks (`reportgen.run.inductor`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch
import torch._inductor.utils as inductor_utils

from reportgen.run import inductor

__all__: list[str] = []


def test_each_timing_of_print_performance_runs_inside_its_own_context_and_is_kept() -> None:
    entered: list[tuple[str, int]] = []

    @contextlib.contextmanager
    def around(k: int) -> Iterator[None]:
        entered.append(("in", k))
        yield
        entered.append(("out", k))

    calls: list[int] = []
    original = inductor_utils.timed
    with inductor.each_timing(around) as each:
        took = inductor_utils.print_performance(lambda: calls.append(1) or torch.zeros(1), (), 3, 4, device="cpu")
    assert inductor_utils.timed is original  # put back
    assert each is not None and len(each) == 4 and len(calls) == 12  # 4 timings of 3 calls each
    assert entered == [(side, k) for k in range(4) for side in ("in", "out")]
    # print_performance returns torch.median of the timings / times: the lower middle of an even count
    assert took == pytest.approx(sorted(each)[1] / 3, rel=1e-6)


def test_without_the_private_timed_nothing_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(inductor_utils, "timed")
    with inductor.each_timing(lambda k: contextlib.nullcontext()) as each:
        assert each is None
    assert not hasattr(inductor_utils, "timed")
