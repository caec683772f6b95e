"""Compile diagnostics, recorded in the run's child around the compiled calls.

`DiagnosticsRecorder.start()` goes before the first compiled call, `.finish()` after the last one;
everything is measured as a difference between the two, so earlier compiles do not leak in.
Sources (torch 2.6 – 2.14; private access sits in `diagnostics_sources`, falling back to "nothing found"):

- graph breaks: records of the `graph_breaks` artifact loggers (`Graph break in user code at
  FILE:LINE` + `Reason:`/`Graph Break Reason:`); fallback `counters["graph_break"]` (no location);
- recompiles: the `recompiles` artifact (`Recompiling function NAME in FILE:LINE ... triggered by
  the following guard failure(s)`), enabled in torch's private `log_state`; fallback
  `CompilationMetrics.recompile_reason` (absent on 2.6);
- unique graphs, cache hits/misses, CUDA-graph skips: `torch._dynamo.utils.counters`;
- ops per graph: `CompilationMetrics.graph_op_count` of each frame compile that made a graph;
- compile phases: `torch._dynamo.utils.compile_times(repr="csv", aggregate=True)`, see `compile_phases`;
- CUDA graphs: cudagraph-tree recording timers, `cudagraph_skips`, "skipping cudagraphs due to ..."
  records (`cudagraphs` artifact; `perf_hints` on 2.6) and `CompilationMetrics.cudagraph_skip_reason`.

Logging side effects are undone by `finish()`: the artifact loggers get our handler and DEBUG level
only while recording, and stay silent on stderr unless the user enabled them with TORCH_LOGS.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Literal

from reportgen.bundle import CompileDiagnostics, CompiledVersion, GraphBreak, Recompile
from reportgen.run.diagnostics_sources import (
    DEBUG_ARTIFACTS,
    Counters,
    LogSink,
    artifact_loggers,
    compilation_metrics,
    compile_time_totals,
    dynamo_counters,
    enable_recompile_messages,
    raise_compilation_metrics_limit,
)

__all__ = [
    "PHASES",
    "DiagnosticsRecorder",
    "cache_counts",
    "compile_phases",
    "parse_graph_break",
    "parse_recompile",
]

PHASES = ("dynamo", "aot_autograd", "inductor", "kernel_compile", "autotune", "cudagraph_record")
"""Coarse compile phases, in pipeline order; `compile_phases` documents what each one sums."""

_CACHE_KEYS = ("fxgraph_cache_hit", "fxgraph_cache_miss", "autograd_cache_hit", "autograd_cache_miss")
_COMPILE_TUNING = ("benchmark_fused_nodes", "benchmark_codegened_module")

_USER_LOC = re.compile(r"in user code at (?P<file>.+?):(?P<line>\d+)\s*$", re.M)
_REASON = re.compile(
    r"^(?:Graph Break )?Reason:[ \t]*(?P<reason>.*?)(?:\n\s*(?:User code traceback:|Stack variable "
    r"source attribution:)|\Z)",
    re.M | re.S,
)
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_NOT_A_FAILURE = re.compile(r"triggered by the following guard failure|^guard \d+ failures:$")
_RECOMPILE = re.compile(r"Recompiling function (?P<name>\S+) in (?P<file>.+?):(?P<line>\d+)\s*\n(?P<body>.*)", re.S)

CudagraphStatus = Literal["used", "skipped", "off"]


def _location(file: str, line: int | str, root: Path) -> str:
    """`file:line`, relative to `root` when the file is under it."""
    path = Path(file)
    with contextlib.suppress(OSError, ValueError):
        path = path.resolve().relative_to(root)
    return f"{path.as_posix()}:{line}"


def parse_graph_break(message: str, root: Path, exc_text: str = "") -> tuple[str, str | None] | None:
    """(reason, location) of a `graph_breaks` log message; None when it is not one.

    Handles the full and the duplicate-suppressed forms of torch 2.6 (`Reason:`) and later
    (`Graph Break Reason:`), and frame skips ("Graph break: ... results in a skip", reason in `exc_text`).
    """
    if not message.startswith(("Graph break", "WON'T CONVERT")):
        return None
    loc = _USER_LOC.search(message)
    reason = _REASON.search(message)
    if loc and reason:
        return reason.group("reason").strip(), _location(loc.group("file"), loc.group("line"), root)
    frames = _FILE_LINE.findall(message)
    location = _location(frames[-1][0], frames[-1][1], root) if frames else None
    first = message.splitlines()[0].strip()
    detail = exc_text.strip()
    return (f"{first}\n{detail}" if detail else first), location


def parse_recompile(message: str, root: Path) -> Recompile | None:
    """A `Recompile` from a `recompiles`/`recompiles_verbose` log message; None when it is not one."""
    match = _RECOMPILE.search(message)
    if match is None:
        return None
    lines = (raw.strip().removeprefix("- ").strip() for raw in match.group("body").splitlines())
    failures = [line for line in lines if line and not _NOT_A_FAILURE.search(line)]
    frame = f"{match.group('name')} ({_location(match.group('file'), match.group('line'), root)})"
    return Recompile(frame=frame, reason="; ".join(failures) or "unknown guard failure")


def _sum(totals: Mapping[str, float], names: Iterable[str] = (), suffixes: tuple[str, ...] = ()) -> float:
    wanted = set(names)
    return sum(v for k, v in totals.items() if k in wanted or (suffixes and k.endswith(suffixes)))


def compile_phases(totals: Mapping[str, float], in_compile_s: Mapping[str, float] | None = None) -> dict[str, float]:
    """Coarse, non-overlapping phases (seconds) from `dynamo_timed` totals (name → seconds).

    Timers nest (frame ⊃ backend ⊃ compile_fx_inner ⊃ kernel wait, autotuning), so a phase is its
    timer minus the timers inside it, clamped at 0:

    - dynamo: `_compile.compile_inner` − `OutputGraph.call_user_compiler` (bytecode tracing, guards);
    - aot_autograd: `OutputGraph.call_user_compiler` + `backward._backward_impl` (lazy backward
      compile) − `compile_fx_inner` (AOTAutograd tracing/partitioning, Inductor pre-grad and joint
      passes, AOTAutograd cache);
    - inductor: `compile_fx_inner` − kernel_compile − compile-time autotune (post-grad passes,
      lowering, scheduling, wrapper/kernel codegen, FX graph cache);
    - kernel_compile: `async_compile.wait` (kernels built by the worker pool) + `async_compile.precompile`
      (Triton kernels built or loaded in-process);
    - autotune: `*_template_autotuning`, `*_template_precompiling`, `benchmark_fused_nodes`,
      `benchmark_codegened_module` (compile time, max-autotune) + `CachingAutotuner.*` Triton config
      tuning at the first kernel calls;
    - cudagraph_record: `CUDAGraph*`/`cudagraphify*` timers (CUDA-graph tree warm-up and recording).

    The last two kinds of timer also run inside a compile (benchmarking a fused kernel tunes it);
    `in_compile_s` ("autotune", "cudagraph_record") is how much of them did, already counted above.
    Empty when nothing was compiled.
    """
    inside = in_compile_s or {}
    frames = _sum(totals, ["_compile.compile_inner"])
    backend = _sum(totals, ["OutputGraph.call_user_compiler", "backward._backward_impl"])
    inner = _sum(totals, ["compile_fx_inner"])
    kernels = _sum(totals, ["async_compile.wait", "async_compile.precompile"])
    tuning = _sum(totals, _COMPILE_TUNING, ("_template_autotuning", "_template_precompiling"))
    run_tuning = _sum(totals, ["CachingAutotuner.benchmark_all_configs", "CachingAutotuner.coordinate_descent_tuning"])
    record = sum(v for k, v in totals.items() if k.startswith(("CUDAGraph", "cudagraphify")))
    if frames + backend + inner + kernels + tuning + run_tuning + record <= 0:
        return {}
    phases = {
        "dynamo": frames - _sum(totals, ["OutputGraph.call_user_compiler"]),
        "aot_autograd": backend - max(inner, kernels + tuning),
        "inductor": inner - kernels - tuning,
        "kernel_compile": kernels,
        "autotune": tuning + max(run_tuning - inside.get("autotune", 0.0), 0.0),
        "cudagraph_record": record - inside.get("cudagraph_record", 0.0),
    }
    return {name: round(max(phases[name], 0.0), 6) for name in PHASES}


def _in_compile_s(metrics: Iterable[object]) -> dict[str, float]:
    """Seconds of runtime autotuning / CUDA-graph recording that ran inside a compile (none recorded on 2.6)."""
    inside = {"autotune": 0.0, "cudagraph_record": 0.0}
    for record in metrics:
        if getattr(record, "is_runtime", False) is True:
            continue
        inside["autotune"] += (getattr(record, "runtime_triton_autotune_time_us", None) or 0) / 1e6
        inside["cudagraph_record"] += (getattr(record, "runtime_cudagraphify_time_us", None) or 0) / 1e6
    return inside


def _diff(after: Counters, before: Counters) -> Counters:
    return {group: values - before.get(group, Counter()) for group, values in after.items()}


def _graph_breaks(records: list[tuple[str, str, str]], counters: Counters, root: Path) -> list[GraphBreak]:
    """Graph breaks from log records, aggregated by (reason, location); else from the counter."""
    found = [
        parsed
        for artifact, message, exc in records
        if artifact == "graph_breaks" and (parsed := parse_graph_break(message, root, exc)) is not None
    ]
    if not found:
        found = [(reason, None) for reason, n in counters.get("graph_break", Counter()).items() for _ in range(n)]
    return [GraphBreak(reason=r, location=loc, count=n) for (r, loc), n in Counter(found).items()]


def _recompiles(records: list[tuple[str, str, str]], metrics: list[object], root: Path) -> list[Recompile]:
    """Recompiles from log records (all failed guards); else `CompilationMetrics.recompile_reason` (first one)."""
    logged = [
        parsed
        for artifact, message, _ in records
        if artifact.startswith("recompiles") and (parsed := parse_recompile(message, root)) is not None
    ]
    from_metrics = []
    for record in metrics:
        reason = getattr(record, "recompile_reason", None)
        if reason:
            file, line = getattr(record, "co_filename", None), getattr(record, "co_firstlineno", None)
            where = f" ({_location(file, line, root)})" if file and line is not None else ""
            from_metrics.append(Recompile(frame=f"{getattr(record, 'co_name', '?')}{where}", reason=str(reason)))
    return logged if len(logged) >= len(from_metrics) else from_metrics


def _versions(metrics: list[object], root: Path) -> list[CompiledVersion]:
    """Each frame version of `CompilationMetrics` (by compile id, in compile order) with the guard that made it a
    recompile. A compile id can have several records (its backward's compile too, without a function name): the
    first that names one is kept."""
    found: dict[str, CompiledVersion] = {}
    for record in metrics:
        compile_id = getattr(record, "compile_id", None)
        if compile_id is None:
            continue
        name = getattr(record, "co_name", None)
        known = found.get(str(compile_id))
        if known is not None and (known.function != "?" or not name):
            continue
        file, line = getattr(record, "co_filename", None), getattr(record, "co_firstlineno", None)
        where = f" ({_location(file, line, root)})" if name and file and line is not None else ""
        reason = getattr(record, "recompile_reason", None) or (known.reason if known else None)
        found[str(compile_id)] = CompiledVersion(
            compile_id=str(compile_id), function=f"{name or '?'}{where}", reason=str(reason) if reason else None
        )
    return list(found.values())


def cache_counts(counters: Counters) -> dict[str, int]:
    """Inductor FX-graph and AOTAutograd cache counters (hits, misses, bypasses, ...)."""
    found = {
        key: int(n)
        for group in ("inductor", "aot_autograd")
        for key, n in counters.get(group, Counter()).items()
        if "cache" in key
    }
    return dict(sorted({**dict.fromkeys(_CACHE_KEYS, 0), **found}.items()))


def _cudagraphs(
    records: list[tuple[str, str, str]], counters: Counters, metrics: list[object], times: Mapping[str, float]
) -> tuple[CudagraphStatus, list[str]]:
    """("used" | "skipped" | "off", skip reasons). "used" when any graph was recorded, even if others skipped."""
    reasons = dict.fromkeys(m.strip() for _, m, _ in records if "skipping cudagraphs" in m.lower())
    for record in metrics:
        reason = getattr(record, "cudagraph_skip_reason", None)
        if reason:
            reasons.setdefault(str(reason).strip())
    skips = counters.get("inductor", Counter()).get("cudagraph_skips", 0)
    if skips and not reasons:
        reasons[f"{skips} graph(s) skipped without a logged reason (graphs without CUDA tensors skip silently)"] = None
    recorded = any(v > 0 for k, v in times.items() if k.startswith(("CUDAGraph", "cudagraphify")))
    status: CudagraphStatus = "used" if recorded else "skipped" if reasons else "off"
    return status, list(reasons)


class DiagnosticsRecorder:
    """Records what torch.compile reports between `start()` and `finish()`.

    :param root: locations under this directory are shown relative to it (default: the working directory).
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root if root is not None else Path.cwd()).resolve()
        self.notes: list[str] = []
        self._sink = LogSink()
        self._saved: list[tuple[logging.Logger, int, bool]] = []
        self._undo: Callable[[], None] = lambda: None
        self._counters: Counters = {}
        self._times: dict[str, float] = {}
        self._seen: set[int] = set()
        self._started = False

    def __enter__(self) -> DiagnosticsRecorder:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def start(self) -> DiagnosticsRecorder:
        """Snapshot torch's counters and timers and start listening; call before the first compiled call."""
        raise_compilation_metrics_limit()
        self._counters = dynamo_counters() or {}
        self._times = compile_time_totals()
        self._seen = {id(m) for m in compilation_metrics() or []}
        for logger in artifact_loggers():
            self._saved.append((logger, logger.level, logger.propagate))
            logger.addHandler(self._sink)
            if logger.name.rpartition(".__")[2] in DEBUG_ARTIFACTS and not logger.isEnabledFor(logging.DEBUG):
                logger.setLevel(logging.DEBUG)
                logger.propagate = False  # recorded, not printed: stderr stays as the user configured it
        self._undo = enable_recompile_messages()
        self._started = True
        return self

    def close(self) -> None:
        """Stop listening and restore torch's logging; safe to call twice."""
        for logger, level, propagate in self._saved:
            logger.removeHandler(self._sink)
            logger.setLevel(level)
            logger.propagate = propagate
        self._saved = []
        self._undo()
        self._undo = lambda: None

    def finish(self) -> CompileDiagnostics:
        """Stop recording and return what happened since `start()`; sources that were missing go to `notes`."""
        if not self._started:
            raise RuntimeError("DiagnosticsRecorder.finish() called before start()")
        try:
            now = dynamo_counters()
            counters = _diff(now, self._counters) if now is not None else {}
            times = {k: max(v - self._times.get(k, 0.0), 0.0) for k, v in compile_time_totals().items()}
            all_metrics = compilation_metrics()
            metrics = [m for m in all_metrics or [] if id(m) not in self._seen]
        finally:
            self.close()
        self._note_missing(now is not None, all_metrics is not None, times, counters)
        status, reasons = _cudagraphs(self._sink.records, counters, metrics, times)
        return CompileDiagnostics(
            graph_breaks=_graph_breaks(self._sink.records, counters, self.root),
            recompiles=_recompiles(self._sink.records, metrics, self.root),
            unique_graphs=counters.get("stats", Counter()).get("unique_graphs", 0) if now is not None else None,
            graph_ops=[int(ops) for m in metrics if (ops := getattr(m, "graph_op_count", None))],
            compile_phases_s=compile_phases(times, _in_compile_s(metrics)),
            cache=cache_counts(counters) if now is not None else {},
            cudagraphs=status,
            cudagraph_skip_reasons=reasons,
            versions=_versions(metrics, self.root),
        )

    def _note_missing(self, has_counters: bool, has_metrics: bool, times: dict[str, float], counters: Counters) -> None:
        if not has_counters:
            self.notes.append("torch._dynamo.utils.counters unavailable: unique graphs and cache counters not recorded")
        if not has_metrics:
            self.notes.append("CompilationMetrics unavailable: ops per graph not recorded")
        if not times:
            self.notes.append("torch._dynamo.utils.compile_times() unavailable: compile phases not recorded")
        breaks = sum(counters.get("graph_break", Counter()).values())
        if breaks and not any(a == "graph_breaks" for a, _, _ in self._sink.records):
            self.notes.append("no graph_breaks log records: graph-break reasons from counters, without locations")
