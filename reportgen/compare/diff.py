"""Compute a `Comparison` of two bundles: device figures, counts and wall figures, each judged its own way
(see `compare_bundles`), then categories, kernels and the ops behind a changed count."""

from __future__ import annotations

from pathlib import Path

from reportgen.analyze import analyze, timing_summary
from reportgen.bundle import (
    MANIFEST_FILE,
    MIN_WALL_RUNS,
    Bundle,
    CategoryChange,
    Comparison,
    Figures,
    KernelChange,
    MetricChange,
    RunRecord,
    RunStatus,
    Side,
    TimingSummary,
    iter_bundles,
    load_bundle,
)
from reportgen.compare.judge import (
    count_changes,
    count_metrics,
    device_metrics,
    launch_changes,
    metric,
    wall_metrics,
)
from reportgen.compare.pool import Headline, Run, headline, pooled_runs
from reportgen.errors import BundleError, ReportgenError
from reportgen.recipe import DEFAULT_REGRESSION_THRESHOLD

__all__ = ["DEFAULT_THRESHOLD", "MIN_KERNEL_SHARE", "MIN_WALL_RUNS", "compare_bundles", "compare_paths"]

DEFAULT_THRESHOLD = DEFAULT_REGRESSION_THRESHOLD
MIN_KERNEL_SHARE = 0.005
"""Kernel changes smaller than this fraction of their graph's time per step are left out of the diff."""

_GiB = float(1 << 30)


def compare_paths(
    before: Path,
    after: Path,
    threshold: float | None = None,
    pool: bool = True,
    device_threshold: float | None = None,
) -> list[Comparison]:
    """Two bundles, or two results directories whose bundles are paired by name.

    :param threshold: None: each pair's `after` recipe says (`regression_threshold`)
    :param device_threshold: None: each pair's `after` recipe says (`device_regression_threshold`)
    :param pool: each side pools the runs of its identity kept beside it (`reportgen.compare.pool`)

    :raises BundleError: a path is missing, is neither a bundle nor a directory of bundles, or nothing pairs
    """
    for path in (before, after):
        if not path.is_dir():
            raise BundleError(f"{path}: no such bundle or results directory")
    if _is_bundle(before) and _is_bundle(after):
        return [compare_bundles(before, after, threshold, pool=pool, device_threshold=device_threshold)]
    if _is_bundle(before) or _is_bundle(after):
        raise BundleError(f"{before} and {after}: compare two bundles or two results directories, not one of each")
    names = sorted(_bundles(before) & _bundles(after))
    if not names:
        raise BundleError(f"{before} and {after} hold no bundle of the same name to compare")
    return [
        compare_bundles(before / name, after / name, threshold, pool=pool, device_threshold=device_threshold)
        for name in names
    ]


def compare_bundles(
    before: Path,
    after: Path,
    threshold: float | None = None,
    runs: tuple[str | None, str | None] = (None, None),
    pool: bool = False,
    device_threshold: float | None = None,
) -> Comparison:
    """Compare two runs; `after` is judged against `before`.

    Device figures are judged against the range of their profiled steps and `device_threshold`; counts grow or
    shrink beyond `threshold` (any change is listed); wall figures only when each side pools `MIN_WALL_RUNS`
    runs, and a wall move with no device figure or count moving is the host's or the processes' doing.

    :param threshold: None: the `after` recipe's `regression_threshold`
    :param device_threshold: None: the `after` recipe's `device_regression_threshold`
    :param runs: where each run lies in its results directory, when known (kept in the comparison)
    :param pool: step times pool each side's runs of the same identity kept beside it; the kernel diff, compile
        time and memory stay the two bundles'
    """
    notes: list[str] = []
    old, new = _load(before, notes), _load(after, notes)
    if threshold is None:
        threshold = new.manifest.recipe.regression_threshold
    if device_threshold is None:
        device_threshold = new.manifest.recipe.device_regression_threshold
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
        metrics=_metrics(
            old, new, (old_h, new_h), (threshold, device_threshold), (1 + len(extra[0]), 1 + len(extra[1]))
        ),
        categories=_categories(before_us, after_us),
        kernels=_kernels(before_us, after_us, threshold),
        count_changes=count_changes(_figures(old), _figures(new)),
        launch_changes=launch_changes(*(b.capture.launches if b.capture else [] for b in (old, new))),
        device_threshold=device_threshold,
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


def _figures(bundle: Bundle) -> Figures | None:
    return bundle.analysis.figures if bundle.analysis is not None else None


def _metrics(
    old: Bundle,
    new: Bundle,
    headlines: tuple[Headline, Headline],
    thresholds: tuple[float, float],
    runs: tuple[int, int],
) -> list[MetricChange]:
    """Device figures, counts, wall figures (judged last: they read whether the others moved), then the rest."""
    threshold, device_threshold = thresholds
    figures = (_figures(old), _figures(new))
    device = device_metrics(figures, device_threshold)
    counts = count_metrics(figures, threshold)
    moved = any(m.verdict in ("regressed", "improved", "changed") for m in device + counts if m.gated)
    wall = wall_metrics(headlines, threshold, judged=min(runs) >= MIN_WALL_RUNS, code_moved=moved)
    a, b = old.manifest.metrics, new.manifest.metrics

    def peak(value: int | None) -> float | None:
        return value / _GiB if value is not None else None

    other = [
        metric("compile time", "s", "lower", a.compile_time_s, b.compile_time_s, None, None, threshold),
        metric(
            "peak memory, compiled",
            "GiB",
            "lower",
            peak(a.peak_memory_compiled_bytes),
            peak(b.peak_memory_compiled_bytes),
            None,
            None,
            threshold,
        ),
    ]
    return device + counts + wall + [m.model_copy(update={"kind": "other"}) for m in other]


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
