"""Repeatability's figures: one row per figure over the base runs (device, counts, wall), their spread, and the
host-normalised CPU cost against the raw one (`repeatability.py`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from repeatability_runs import BaseRun
from tabulate import tabulate

from reportgen.bundle import COUNTS

__all__: list[str] = []

SIDES = ("eager", "compiled")
"""The two sides of a run, in the order the tables show them."""


MEASURABLE_CUT = 2 / 3
"""The normalised figure "cuts" the spread only if its CV is at most this fraction of the raw one (and its max/min
spread is smaller too): the CV of 5 runs has a relative standard error of about 1/√(2·(5−1)) ≈ 35 %, so a smaller
cut is within the CV's own noise."""


DEVICE_SPREAD_LIMIT = 0.02
"""Issue 27's acceptance: device time per step may spread at most this much (max/min − 1) over the runs."""


DASH = "—"
"""What a table shows for a figure a run lacks."""


@dataclass
class Row:
    """One figure across the base runs."""

    name: str
    kind: str  # "device", "count" or "wall"
    values: list[float | None]

    @property
    def spread(self) -> float | None:
        """max/min − 1 over the runs that have the figure; None with fewer than two or a non-positive minimum."""
        present = [v for v in self.values if v is not None]
        if len(present) < 2:
            return None
        if len(set(present)) == 1:
            return 0.0
        return max(present) / min(present) - 1 if min(present) > 0 else None

    @property
    def identical(self) -> bool | None:
        """Whether every run has the same value (None: a run lacks it)."""
        if not self.values or any(v is None for v in self.values):
            return None
        return len(set(self.values)) == 1

    @property
    def cv(self) -> float | None:
        """Coefficient of variation (sample stdev ÷ mean) over the runs; None with fewer than two."""
        present = [v for v in self.values if v is not None]
        if len(present) < 2 or statistics.fmean(present) <= 0:
            return None
        return statistics.stdev(present) / statistics.fmean(present)


def median_or_none(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def figure_rows(runs: list[BaseRun]) -> list[Row]:
    """Device figures, counts and wall figures, one row each, a value per run."""
    rows: list[Row] = []
    for side in SIDES:
        sides = [run.side(side) for run in runs]
        rows.append(Row(f"{side} device ms/step", "device", [s.device_ms if s else None for s in sides]))
        rows.append(Row(f"{side} GPU-active ms/step", "device", [s.active_ms if s else None for s in sides]))
    rows.append(Row("device speedup", "device", [r.figures.device_speedup if r.figures else None for r in runs]))
    for count in COUNTS:
        for side in SIDES:
            values = [s.count(count) if (s := run.side(side)) else None for run in runs]
            rows.append(Row(f"{side} {count}/step", "count", values))
    metrics = [run.bundle.manifest.metrics for run in runs]
    rows.append(Row("eager median ms", "wall", [m.eager.median_ms if m.eager else None for m in metrics]))
    rows.append(Row("compiled median ms", "wall", [m.compiled.median_ms if m.compiled else None for m in metrics]))
    rows.append(Row("wall speedup", "wall", [m.speedup for m in metrics]))
    rows.append(Row("host probe median ms", "wall", [median_or_none(m.host_probe_ms) for m in metrics]))
    return rows


def num(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value:.0f}" if value == int(value) and abs(value) >= 10 else f"{value:.4g}"


def pct(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.2f} %"


def print_figures(rows: list[Row], runs: list[BaseRun], device: str | None) -> None:
    """Table 1: the figures per run, their spread, and whether the counts are identical."""
    headers = ["figure", "kind", *(f"run {i}" for i in range(1, len(runs) + 1)), "spread", "identical"]
    table = []
    for row in rows:
        same = DASH if row.kind != "count" or row.identical is None else ("yes" if row.identical else "NO")
        table.append([row.name, row.kind, *map(num, row.values), pct(row.spread), same])
    cpu = " (a CPU run: its device figures are CPU time, host-dependent)" if device == "cpu" else ""
    print(f"\nTable 1: {len(runs)} runs, device {device or DASH}{cpu}")
    print(tabulate(table, headers=headers, disable_numparse=True))
    for i, run in enumerate(runs, 1):
        print(f"  run {i}: {run.path}")
    counts = [r for r in rows if r.kind == "count"]
    present = [r for r in counts if r.identical is not None]
    differ = [r.name for r in present if not r.identical]
    print(f"counts identical: {len(present) - len(differ)}/{len(present)} recorded ({len(counts)} rows)")
    if differ:
        print(f"  differ: {', '.join(differ)}")


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def host_rows(runs: list[BaseRun]) -> list[tuple[Row, Row]]:
    """(raw, normalised) pairs: host ms per step (wall − GPU-active, ≥ 0) and wall ms, raw and ÷ the probe."""
    pairs: list[tuple[Row, Row]] = []
    probes = [median_or_none(run.bundle.manifest.metrics.host_probe_ms) for run in runs]
    for side in SIDES:
        walls = [getattr(run.bundle.manifest.metrics, side) for run in runs]
        wall = [w.median_ms if w else None for w in walls]
        active = [s.active_ms if (s := run.side(side)) else None for run in runs]
        host = [max(w - a, 0.0) if w is not None and a is not None else None for w, a in zip(wall, active, strict=True)]
        pairs.append(
            (
                Row(f"{side} host ms/step (wall − active)", "wall", host),
                Row(f"{side} host ÷ probe", "wall", [_div(h, p) for h, p in zip(host, probes, strict=True)]),
            )
        )
        pairs.append(
            (
                Row(f"{side} wall median ms", "wall", wall),
                Row(f"{side} wall ÷ probe", "wall", [_div(w, p) for w, p in zip(wall, probes, strict=True)]),
            )
        )
    return pairs


def cut_verdict(raw: Row, normalised: Row) -> str:
    """Whether normalising by the probe measurably cuts the run-to-run spread, in words: by the CV, and by
    max/min − 1 where both have it (a host time of 0 ms leaves max/min undefined)."""
    if raw.cv is None or normalised.cv is None:
        return "not measured"
    spreads = f"{pct(raw.spread)} to {pct(normalised.spread)} (CV {pct(raw.cv)} to {pct(normalised.cv)})"
    narrower = raw.spread is None or normalised.spread is None or normalised.spread < raw.spread
    if normalised.cv <= raw.cv * MEASURABLE_CUT and narrower:
        return f"normalised cuts the spread from {spreads}"
    if normalised.cv < raw.cv and narrower:
        return f"smaller, not measurably: {spreads}"
    return f"does not cut it: {spreads}"


def print_host(pairs: list[tuple[Row, Row]], runs: int) -> None:
    """Raw against normalised host cost, per run, with their spreads."""
    headers = ["figure", *(f"run {i}" for i in range(1, runs + 1)), "max/min − 1", "CV"]
    table = [[r.name, *map(num, r.values), pct(r.spread), pct(r.cv)] for pair in pairs for r in pair]
    print("\nHost-normalised CPU cost (item 2): raw against ÷ host-probe median")
    print(tabulate(table, headers=headers, disable_numparse=True))
    for raw, normalised in pairs:
        print(f"  {raw.name}: {cut_verdict(raw, normalised)}")
