"""Which run outcomes make `reportgen run` exit non-zero (reportgen.progress.RunOutcome)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import RunStatus, read_manifest
from reportgen.progress import RunOutcome

__all__: list[str] = []

MakeBundle = Callable[..., Path]


@pytest.mark.parametrize(
    ("status", "point", "settled"),
    [
        (RunStatus.ok, {}, True),
        (RunStatus.oom, {}, False),  # a plain recipe that runs out of memory failed
        (RunStatus.oom, {"batch_size": "256"}, True),  # a sweep point that does marks where the axis ends
        (RunStatus.failed, {"batch_size": "8"}, False),
        (RunStatus.timeout, {"batch_size": "8"}, False),
    ],
)
def test_only_a_sweep_points_out_of_memory_is_a_result(
    tmp_path: Path, make_bundle: MakeBundle, status: RunStatus, point: dict[str, str], settled: bool
) -> None:
    bundle = make_bundle(tmp_path, "r", status=status)
    manifest = read_manifest(bundle).model_copy(update={"point": point})
    assert RunOutcome(bundle, manifest).settled is settled
