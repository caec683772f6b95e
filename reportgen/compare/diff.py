"""Compute a `Comparison` of two bundles: headline metrics against their intervals, categories, kernels."""

from __future__ import annotations

from pathlib import Path

from reportgen.analyze import analyze, timing_summary
from reportgen.bundle import (
    MANIFEST_FILE,
    Bundle,
    CategoryChange,
    Comparison,
    KernelChange,
    MetricChange,
    RunRecord,
    RunStatus,
    Side,
    TimingSummary,
    iter_bundles,
    load_bundle,
)
from reportgen.compare.pool import Headline, Run, headline, pooled_runs
from reportgen.errors import BundleError, ReportgenError
from reportgen.recipe import DEFAULT_REGRESSION_THRESHOLD

__all__ = ["DEFAULT_THRESHOLD", "HOST_REACH", "MIN_KERNEL_SHARE", "compare_bundles", "compare_paths"]

DEFAULT_THRESHOLD = DEFAULT_REGRESSION_THRESHOLD
MIN_KERNEL_SHARE = 0.005
"""Kernel changes smaller than this fraction of their graph's time per step are left out of the diff."""

_GiB = float(1 << 30)

HOST_REACH = 2.0
"""How far a host's change may move a step time, as a power of the host probe's ratio: a CPU r times as slow may
make a step up to r ** HOST_REACH times as long. One would do for a purely launch-bound step, but the probe is a
1 ms sample of a wandering CPU: two runs of resnet50 on an H100 host moved -22 % (eager) and -16 % (compiled)
with the probe at -9.6 % (0.904 ** 2 = 0.82, so with the 5 % threshold neither is judged an improvement)."""


def compare_paths(before: Path, after: Path, threshold: float | None = None, pool: bool = True) -> list[Comparison]:
    """Two bundles, or two results directories whose bundles are paired by name.

    :param threshold: None: each pair's `after` recipe says (`regression_threshold`)
    :param pool: each side pools the runs of its identity kept beside it (`reportgen.compare.pool`)

    :raises BundleError: a path is missing, is neither a bundle nor a directory of bundles, or nothing pairs
    """
    for path in (before, after):
        if not path.is_dir():
            raise BundleError(f"{path}: no such bundle or results directory")
    if _is_bundle(before) and _is_bundle(after):
        return [compare_bundles(before, after, threshold, pool=pool)]
    if _is_bundle(before) or _is_bundle(after):
        raise BundleError(f"{before} and {after}: compare two bundles or two results directories, not one of each")
    names = sorted(_bundles(before) & _bundles(after))
    if not names:
        raise BundleError(f"{before} and {after} hold no bundle of the same name to compare")
    return [compare_bundles(before / name, after / name, threshold, pool=pool) for name in names]


def compare_bundles(
    before: Path,
    after: Path,
    threshold: float | None = None,
    runs: tuple[str | None, str | None] = (None, None),
    pool: bool = False,
) -> Comparison:
    """Compare two runs; `after` is judged against `before`.

    :param threshold: None: the `after` recipe's `regression_threshold`
    :param runs: where each run lies in its results directory, when known (kept in the comparison)
    :param pool: step times pool each side's runs of the same identity kept beside it; the kernel diff, compile
        time and memory stay the two bundles'
    """
    notes: list[str] = []
    old, new = _load(before, notes), _load(after, notes)
    if threshold is None:
        threshold = new.manifest.recipe.regression_threshold
    comparable = _comparable(old, new, notes)
    extra: tuple[list[Run], list[Run]] = ([], [])
    if pool:
        extra = pooled_runs((before, old.manifest), (after, new.manifest))
    old_h, new_h = _headline(old, extra[0]), _headline(new, extra[1])
    diagnostics = [b.capture.diagnostics if b.capture else None for b in (old, new)]
    phases = sorted({p for d in diagnostics if d for p in d.compile_phases_s})
    before_us, after_us = _per_step(old), _per_step(new)  # read once: metrics, categories and kernels use them
    return Comparison(
        name=new.manifest.name,
        before=_side(old, runs[0], [path for path, _ in extra[0]]),
        after=_side(new, runs[1], [path for path, _ in extra[1]]),
        threshold=threshold,
        metrics=_metrics(old, new, old_h, new_h, threshold, (_total_ms(before_us), _total_ms(after_us))),
        categories=_categories(before_us, after_us),
        kernels=_kernels(before_us, after_us, threshold),
        compile_phases_s={p: tuple(d.compile_phases_s.get(p) if d else None for d in diagnostics) for p in phases},  # type: ignore[misc]
        graph_breaks=tuple(len(d.graph_breaks) if d else 0 for d in diagnostics),  # type: ignore[arg-type]
        recompiles=tuple(len(d.recompiles) if d else 0 for d in diagnostics),  # type: ignore[arg-type]
        notes=notes,
        comparable=comparable,
    )


def _comparable(old: Bundle, new: Bundle, notes: list[str]) -> bool:
    """Same recipe file and device model (a note says when not: the numbers may differ for that reason)."""
    a, b = old.manifest, new.manifest
    devices = [m.environment.device_name if m.environment else None for m in (a, b)]
    if a.recipe_sha256 != b.recipe_sha256:
        notes.append("the recipe files differ: a change may come from the recipe")
        return False
    if devices[0] != devices[1]:
        notes.append(f"the runs used different devices ({devices[0]} / {devices[1]})")
        return False
    return True


def _is_bundle(path: Path) -> bool:
    return (path / MANIFEST_FILE).is_file()


def _bundles(results: Path) -> set[str]:
    return {p.name for p in iter_bundles(results)}


def _load(path: Path, notes: list[str]) -> Bundle:
    """The bundle with a current analysis: analysed in memory when it has none (nothing is written)."""
    bundle = load_bundle(path)
    if bundle.manifest.status is not RunStatus.ok or (bundle.analysis is not None and not bundle.analysis.stale):
        return bundle
    try:
        analysis = analyze(path, bundle.manifest, bundle.capture)
    except ReportgenError as exc:
        notes.append(f"{path}: not analysed ({exc}); its kernels are left out")
        return bundle
    return Bundle(path=path, manifest=bundle.manifest, analysis=analysis, capture=bundle.capture)


def _side(bundle: Bundle, run: str | None, pooled: list[Path]) -> Side:
    env = bundle.manifest.environment
    return Side(
        bundle=str(bundle.path),
        run=run,
        pooled=[str(path) for path in pooled],
        recipe_sha256=bundle.manifest.recipe_sha256,
        device_name=env.device_name if env else None,
        status=bundle.manifest.status.value,
        torch=env.versions.torch if env else None,
        device=f"{env.device} ({env.device_name})" if env else None,
        started_at=str(bundle.manifest.started_at) if bundle.manifest.started_at else None,
    )


def _timing(bundle: Bundle) -> TimingSummary:
    if bundle.analysis is not None and bundle.analysis.timing is not None:
        return bundle.analysis.timing
    return timing_summary(bundle.manifest.metrics) or TimingSummary()


def _headline(bundle: Bundle, others: list[Run]) -> Headline:
    """The side's step times: its bundle's, pooled with `others` (runs of its identity)."""
    own = [(RunRecord.from_manifest(bundle.manifest, str(bundle.path)), _timing(bundle))]
    return headline(
        own
        + [
            (RunRecord.from_manifest(manifest, str(path)), timing_summary(manifest.metrics) or TimingSummary())
            for path, manifest in others
        ]
    )


def _metrics(
    old: Bundle,
    new: Bundle,
    old_h: Headline,
    new_h: Headline,
    threshold: float,
    device: tuple[float | None, float | None],
) -> list[MetricChange]:
    a, b = old.manifest.metrics, new.manifest.metrics

    def peak(value: int | None) -> float | None:
        return value / _GiB if value is not None else None

    out = [
        _metric(name, unit, better, x.value, y.value, x.interval, y.interval, threshold)
        for name, unit, better, x, y in (
            ("eager median", "ms", "lower", old_h.eager, new_h.eager),
            ("compiled median", "ms", "lower", old_h.compiled, new_h.compiled),
            ("speedup", "x", "higher", old_h.speedup, new_h.speedup),
        )
    ]
    host = _metric(
        "host probe (CPU speed)", "ms", "lower", old_h.host_probe_ms, new_h.host_probe_ms, None, None, threshold
    )
    if host.change is not None and abs(host.change) > threshold:  # the host, not the code, may have moved
        # Step times are judged beyond what the host's change may explain; the speedup (a ratio of two step
        # times the host moved by unknown shares) is not judged.
        eager, compiled, speedup = out
        out = [_beyond_host(eager, 1 + host.change, threshold), _beyond_host(compiled, 1 + host.change, threshold)]
        out.append(_host_changed(speedup))
        host = host.model_copy(update={"verdict": "host changed"})
    elif host.verdict != "not measured":
        host = host.model_copy(update={"verdict": "within noise"})
    out.append(host)
    out.append(_metric("device time per step", "ms", "lower", device[0], device[1], None, None, threshold))
    out.append(_metric("compile time", "s", "lower", a.compile_time_s, b.compile_time_s, None, None, threshold))
    out.append(
        _metric(
            "peak memory, compiled",
            "GiB",
            "lower",
            peak(a.peak_memory_compiled_bytes),
            peak(b.peak_memory_compiled_bytes),
            None,
            None,
            threshold,
        )
    )
    return out


def _host_changed(m: MetricChange) -> MetricChange:
    return m.model_copy(update={"verdict": "host changed", "gated": False})


def _beyond_host(m: MetricChange, ratio: float, threshold: float) -> MetricChange:
    """A step time judged against the host's change (the probe `ratio` times as long): it regressed only if it
    grew beyond `before * max(ratio, 1) ** HOST_REACH` by the threshold and the intervals, and improved only if it
    shrank below `before * min(ratio, 1) ** HOST_REACH` by as much; anything between may be the host's doing."""
    before, ci = m.before, m.before_ci
    if before is None or ci is None or m.after_ci is None:
        return _host_changed(m)

    def against(scale: float) -> str:
        scaled = (ci[0] * scale, ci[1] * scale)
        return _metric(m.name, m.unit, m.better, before * scale, m.after, scaled, m.after_ci, threshold).verdict

    if against(max(ratio, 1.0) ** HOST_REACH) == "regressed":
        return m.model_copy(update={"verdict": "regressed"})
    if against(min(ratio, 1.0) ** HOST_REACH) == "improved":
        return m.model_copy(update={"verdict": "improved"})
    return _host_changed(m)


def _total_ms(per_step: _PerStep) -> float | None:
    """Kernel time of one profiled step, all graphs and outside them (the GPU's share of a step)."""
    return sum(sum(kernels.values()) for kernels in per_step.values()) / 1e3 if per_step else None


def _metric(
    name: str,
    unit: str,
    better: str,
    before: float | None,
    after: float | None,
    before_ci: tuple[float, float] | None,
    after_ci: tuple[float, float] | None,
    threshold: float,
) -> MetricChange:
    """A metric with intervals on both sides is gated: it regressed only beyond the threshold and the intervals."""
    gated = before_ci is not None and after_ci is not None
    if before is None or after is None or before <= 0:
        verdict = "not measured"
    else:
        change = after / before - 1.0
        worse = change > threshold if better == "lower" else change < -threshold
        better_ = change < -threshold if better == "lower" else change > threshold
        apart = not gated or before_ci[1] < after_ci[0] or after_ci[1] < before_ci[0]  # type: ignore[index]
        verdict = "regressed" if worse and apart else "improved" if better_ and apart else "within noise"
    return MetricChange(
        name=name,
        unit=unit,
        better=better,  # type: ignore[arg-type]
        before=before,
        after=after,
        before_ci=before_ci,
        after_ci=after_ci,
        gated=gated,
        verdict=verdict,  # type: ignore[arg-type]
    )


_PerStep = dict[str, dict[tuple[str, str], float]]
"""Device µs per profiled step of each (kernel, category), by graph label."""


def _per_step(bundle: Bundle) -> _PerStep:
    """Device µs per profiled step of each (kernel, category), by graph label."""
    analysis = bundle.analysis
    if analysis is None:
        return {}
    steps = max(analysis.kernels.profiled_steps, 1)
    return {g.label: {(k.name, k.category): k.device_time_us / steps for k in g.kernels} for g in analysis.graphs}


def _categories(before: _PerStep, after: _PerStep) -> list[CategoryChange]:
    out = []
    for graph in sorted(set(before) | set(after)):
        totals: dict[str, list[float]] = {}
        for side, kernels in enumerate((before.get(graph, {}), after.get(graph, {}))):
            for (_, category), us in kernels.items():
                totals.setdefault(category, [0.0, 0.0])[side] += us
        out += [
            CategoryChange(graph=graph, category=c, before_us=v[0], after_us=v[1]) for c, v in sorted(totals.items())
        ]
    return out


def _kernels(before: _PerStep, after: _PerStep, threshold: float) -> list[KernelChange]:
    out: list[KernelChange] = []
    for graph in sorted(set(before) | set(after)):
        a, b = before.get(graph, {}), after.get(graph, {})
        floor = MIN_KERNEL_SHARE * max(sum(a.values()), sum(b.values()))
        for key in set(a) | set(b):
            x, y = a.get(key), b.get(key)
            if x is None or y is None:
                kind = "added" if x is None else "removed"
            elif abs(y - x) > threshold * x:
                kind = "slower" if y > x else "faster"
            else:
                continue
            if abs((y or 0.0) - (x or 0.0)) < floor:
                continue
            out.append(KernelChange(graph=graph, name=key[0], category=key[1], before_us=x, after_us=y, kind=kind))  # type: ignore[arg-type]
    return sorted(out, key=lambda k: (k.graph, -abs((k.after_us or 0.0) - (k.before_us or 0.0))))
