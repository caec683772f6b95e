"""Analysis stage: a bundle's trace (and later its compiled modules) -> `Analysis`."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Literal

from reportgen.analyze.categories import categorize
from reportgen.analyze.collectives import Call
from reportgen.analyze.costs import name_costs, with_costs, with_template_estimates, with_triton_bytes
from reportgen.analyze.counts import step_counts, step_figures
from reportgen.analyze.evidence import region_evidence
from reportgen.analyze.findings import findings
from reportgen.analyze.frames import version_runtimes
from reportgen.analyze.graphs import GraphAttribution, attribute_graphs
from reportgen.analyze.join import with_sources
from reportgen.analyze.kernels import kernel_table
from reportgen.analyze.overlap import combine, rank_overlap
from reportgen.analyze.peak import peak_bandwidth
from reportgen.analyze.provenance import attribute_kernels
from reportgen.analyze.roofline import roof, with_bounds, with_graph_costs
from reportgen.analyze.seed import match_benchmarks, seed_busy, with_seed
from reportgen.analyze.timing import timing_summary
from reportgen.bundle import (
    ANALYSIS_REVISION,
    MANIFEST_FILE,
    MAX_TRACE_BYTES,
    SHAPES_TRACE_FILE,
    Analysis,
    Capture,
    DistributedAnalysis,
    Figures,
    GraphAnalysis,
    KernelTable,
    Manifest,
    Provenance,
    RankOverlap,
    RegionEvidence,
    StepFigures,
    bundle_file,
    read_provenance,
)
from reportgen.errors import AnalysisError, BundleError
from reportgen.formats import load_trace, module_index, paused_gc, read_trace

__all__ = [
    "GraphAttribution",
    "analyze",
    "analyze_trace",
    "attribute_graphs",
    "attribute_kernels",
    "categorize",
    "findings",
    "kernel_table",
    "region_evidence",
    "step_counts",
    "step_figures",
    "timing_summary",
]

logger = logging.getLogger(__name__)

_RankFound = tuple[RankOverlap, list[Call]]
"""A rank's overlap and its collective calls (`analyze.overlap.rank_overlap`)."""


def analyze(bundle_dir: Path, manifest: Manifest, capture: Capture | None = None) -> Analysis:
    """Analyse one bundle.

    :param bundle_dir: the bundle directory (holds `manifest.trace_file`)
    :param manifest: its manifest
    :param capture: its capture.json, if any: GPU graphs get `busy_seed_percent` and
        `seed_categories_percent` from the matching `GraphBenchmark` traces (see `reportgen.analyze.seed`),
        and the findings read its diagnostics and kernel benchmarks
    :raises AnalysisError: the run left no trace or environment, or the trace is unreadable
    """
    manifest_path = bundle_dir / MANIFEST_FILE
    if manifest.trace_file is None:
        raise AnalysisError(
            f"run {manifest.name!r} ({manifest.status.value}) recorded no trace",
            path=manifest_path,
            hint="only runs that reached the profiled steps can be analysed",
        )
    if manifest.environment is None:
        raise AnalysisError(f"run {manifest.name!r} recorded no environment (device unknown)", path=manifest_path)
    device = manifest.environment.device
    profiled_steps = manifest.recipe.for_device(device).profile.profiled_steps
    leader = _leader_rank(manifest)
    kernels, attribution, regions, compiled, own = _trace_side(
        _confined(bundle_dir, manifest.trace_file), device, profiled_steps, leader
    )
    sources = module_index(bundle_dir, manifest.modules)
    graphs = with_sources(attribution.graphs, sources)
    if capture is not None and device == "cuda":
        graphs = _with_seed_benchmarks(bundle_dir, graphs, capture)
    graphs, provenance = attribute_kernels(graphs, _provenance(bundle_dir), device)
    kernels = with_triton_bytes(with_template_estimates(_with_costs(bundle_dir, kernels, device), sources), sources)
    found_roof = roof(manifest.environment, capture)
    kernels = with_bounds(kernels, found_roof)
    graphs = with_graph_costs(graphs, kernels)
    analysis = Analysis(
        revision=ANALYSIS_REVISION,
        kernels=kernels,
        graphs=graphs,
        steps=attribution.steps,
        idle=attribution.idle,
        timeline=attribution.timeline,
        regions=regions,
        sources=sources,
        peak=peak_bandwidth(manifest.environment, capture),
        roof=found_roof,
        timing=timing_summary(manifest.metrics),
        provenance=provenance,
        figures=Figures(device=device, eager=_eager_figures(bundle_dir, manifest, device), compiled=compiled),
        versions=version_runtimes(graphs, sources, capture.diagnostics.versions if capture is not None else []),
        distributed=_distributed(bundle_dir, manifest, device, {leader: own} if leader is not None and own else {}),
    )
    return analysis.model_copy(update={"findings": findings(manifest, capture, analysis)})


def _leader_rank(manifest: Manifest) -> int | None:
    """The rank whose trace is the bundle's own (`manifest.trace_file`), in a distributed run."""
    run = manifest.distributed
    ranks = [r.rank for r in run.ranks if r.trace_file == manifest.trace_file] if run is not None else []
    return ranks[0] if ranks else None


def _distributed(
    bundle_dir: Path, manifest: Manifest, device: Literal["cuda", "cpu"], known: Mapping[int, _RankFound]
) -> DistributedAnalysis | None:
    """Each rank's overlap from its own trace (`analyze.overlap`), unless `known` (the bundle's own trace, read
    once); a rank whose trace cannot be read is a note."""
    run = manifest.distributed
    if run is None:
        return None
    found, notes = [], []
    for rank in run.ranks:
        if rank.rank in known:
            found.append(known[rank.rank])
            continue
        if rank.trace_file is None:
            notes.append(f"rank {rank.rank} left no trace ({rank.status}, after stage '{rank.stage}')")
            continue
        try:
            trace = read_trace(_confined(bundle_dir, rank.trace_file), device)
            with paused_gc():
                found.append(rank_overlap(trace, device, attribute_graphs(trace, device).steps, rank.rank))
        except AnalysisError as exc:
            notes.append(f"rank {rank.rank}'s trace was not read: {exc.message}")
    return combine(found, run, notes)


def _with_costs(bundle_dir: Path, kernels: KernelTable, device: Literal["cuda", "cpu"]) -> KernelTable:
    """The kernel rows with their FLOPs and bytes from the shapes trace (`analyze.costs`); the table as it was
    without that trace, or with a warning when it cannot be read."""
    if not os.path.lexists(bundle_dir / SHAPES_TRACE_FILE):
        return kernels
    try:
        trace = load_trace(_confined(bundle_dir, SHAPES_TRACE_FILE))
        with paused_gc():
            return with_costs(kernels, name_costs(trace, device))
    except AnalysisError as exc:
        logger.warning("FLOPs not counted: %s", exc)
        return kernels


def _provenance(bundle_dir: Path) -> Provenance | None:
    """The run's provenance table; an invalid one costs a warning (the page says "not captured")."""
    try:
        return read_provenance(bundle_dir)
    except BundleError as exc:
        logger.warning("provenance not read: %s", exc)
        return None


def _confined(bundle_dir: Path, relative: str) -> Path:
    """A trace the bundle names, read only when it is a regular file inside the bundle (a missing one is
    left to the trace reader, which says so)."""
    parts = PurePosixPath(relative).parts
    inside = bool(parts) and not PurePosixPath(relative).is_absolute() and ".." not in parts
    if inside and not os.path.lexists(bundle_dir / relative):
        return bundle_dir / relative
    try:
        return bundle_file(bundle_dir, relative, MAX_TRACE_BYTES)
    except BundleError as exc:
        raise AnalysisError(exc.message, path=exc.path, hint=exc.hint) from None


def analyze_trace(
    path: Path, device: Literal["cuda", "cpu"], profiled_steps: int
) -> tuple[KernelTable, GraphAttribution, RegionEvidence, StepFigures]:
    """The trace side of `analyze`: stream the trace, then kernel table, graphs and steps, region evidence, and
    the side's device figures and counts."""
    kernels, attribution, regions, figures, _ = _trace_side(path, device, profiled_steps, None)
    return kernels, attribution, regions, figures


def _trace_side(
    path: Path, device: Literal["cuda", "cpu"], profiled_steps: int, rank: int | None
) -> tuple[KernelTable, GraphAttribution, RegionEvidence, StepFigures, _RankFound | None]:
    """`analyze_trace`'s, and with `rank` that rank's overlap from the same reading."""
    trace = read_trace(path, device)
    with paused_gc():
        attribution = attribute_graphs(trace, device)
        figures = step_figures(trace, device, attribution.steps)
        own = rank_overlap(trace, device, attribution.steps, rank) if rank is not None else None
        return kernel_table(trace, device, profiled_steps), attribution, region_evidence(trace), figures, own


def _eager_figures(bundle_dir: Path, manifest: Manifest, device: Literal["cuda", "cpu"]) -> StepFigures | None:
    """Eager's figures from its own profiled steps; None without that trace (a warning when it cannot be read:
    the compiled side's analysis stands)."""
    if manifest.eager_trace_file is None:
        return None
    try:
        trace = read_trace(_confined(bundle_dir, manifest.eager_trace_file), device)
        with paused_gc():
            return step_figures(trace, device, attribute_graphs(trace, device).steps)
    except AnalysisError as exc:
        logger.warning("eager figures not read: %s", exc)
        return None


def _with_seed_benchmarks(bundle_dir: Path, graphs: Sequence[GraphAnalysis], capture: Capture) -> list[GraphAnalysis]:
    """Graphs with their `wrapper.py -p` numbers; an unreadable benchmark trace costs a warning, not the analysis."""
    matches = match_benchmarks(graphs, capture.graph_benchmarks)
    out: list[GraphAnalysis] = []
    for graph in graphs:
        benchmark = matches.get(graph.graph) if graph.graph is not None else None
        seed = None
        if benchmark is not None and benchmark.trace_file is not None:
            try:
                seed = seed_busy(read_trace(_confined(bundle_dir, benchmark.trace_file), "cuda"), benchmark)
            except AnalysisError as exc:
                logger.warning("skipping the benchmark trace of graph %d: %s", benchmark.graph, exc)
        out.append(with_seed(graph, seed) if seed is not None else graph)
    return out
