"""Tests of benchmarks/interval_coverage.py's projection: how often more machines would bring the Student-t over
machines' medians inside the tolerance."""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from interval_coverage import projection

T_975 = {9: 2.262, 10: 2.228, 29: 2.045}
"""Student-t 97.5 % quantiles from the printed tables."""


def _t_inside(medians: list[float], tolerance: float) -> bool:
    half = T_975[len(medians) - 1] * statistics.stdev(medians) / math.sqrt(len(medians))
    mean = statistics.fmean(medians)
    return -tolerance < mean - half and mean + half < tolerance


def test_no_more_machines_is_today_s_interval() -> None:
    # Ten machines whose t interval is [-0.92, +0.92]: inside +-3; shifted by 2.5 it reaches 3.42: not inside.
    centred = [-2.0, -1.5, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0]
    shifted = [m + 2.5 for m in centred]
    assert _t_inside(centred, 3.0) and not _t_inside(shifted, 3.0)
    assert projection(centred, 0, 3.0, draws=5, seed=1) == 1.0
    assert projection(shifted, 0, 3.0, draws=5, seed=1) == 0.0


def test_more_machines_narrow_the_interval_around_their_mean() -> None:
    # Eleven machines at mean -1.7, SD about 2.8 (like resnet50's compiled): undecided today, more often inside the
    # more machines are added, and never for a mean beyond the tolerance.
    medians = [+1.0, +4.3, -3.2, -6.3, -1.4, -1.9, +0.5, -4.0, -3.1, -2.1, -2.9]
    assert not _t_inside(medians, 3.0)
    shares = [projection(medians, extra, 3.0, draws=400, seed=2) for extra in (0, 8, 20)]
    assert shares[0] == 0.0 < shares[1] < shares[2] < 1.0
    beyond = [m - 2.0 for m in medians]  # mean -3.7: outside whatever the number of machines
    assert projection(beyond, 20, 3.0, draws=400, seed=2) < 0.02


def test_thirty_machines_and_none_added_read_as_the_t_interval_by_hand() -> None:
    medians = [float(v) for v in range(-15, 15)]  # mean -0.5, SD 8.8: [-3.79, +2.79], inside +-4, not +-3
    assert not _t_inside(medians, 3.0) and _t_inside(medians, 4.0)
    assert projection(medians, 0, 3.0, draws=3, seed=3) == 0.0
    assert projection(medians, 0, 4.0, draws=3, seed=3) == float(_t_inside(medians, 4.0))
