"""Where compile diagnostics come from in torch: the artifact loggers, the private log state, Dynamo's
counters, `dynamo_timed` totals and `CompilationMetrics` records.

Every access to torch internals sits in a small function that falls back to "nothing found" (None or
empty) when a torch version lacks it (torch 2.6 – 2.14); torch is imported only inside them.
"""

from __future__ import annotations

import importlib
import logging
from collections import Counter
from collections.abc import Callable, Mapping

__all__ = [
    "DEBUG_ARTIFACTS",
    "Counters",
    "LogSink",
    "artifact_loggers",
    "compilation_metrics",
    "compile_time_totals",
    "dynamo_counters",
    "enable_recompile_messages",
    "raise_compilation_metrics_limit",
]

DEBUG_ARTIFACTS = ("graph_breaks", "recompiles", "recompiles_verbose")
"""Artifacts whose every record is kept; recording turns them on at DEBUG level, without printing them."""
_CUDAGRAPH_ARTIFACTS = ("cudagraphs", "perf_hints")  # CUDA-graph skips: `cudagraphs` (2.11+), `perf_hints` (2.6)
_ARTIFACTS = (*DEBUG_ARTIFACTS, *_CUDAGRAPH_ARTIFACTS)
_DYNAMO_MODULES = ("torch._dynamo.symbolic_convert", "torch._dynamo.convert_frame", "torch._dynamo.guards")
_KNOWN_LOGGERS = [
    f"torch._inductor.{m}.__{a}" for m in ("cudagraph_utils", "cudagraph_trees") for a in _CUDAGRAPH_ARTIFACTS
]
_METRICS_LIMIT = 4096

Counters = dict[str, Counter[str]]
"""`torch._dynamo.utils.counters` as plain data: group → name → count."""


class LogSink(logging.Handler):
    """Keeps (artifact, message, exception text) of the records that matter here."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        artifact = record.name.rpartition(".__")[2]
        try:
            message = record.getMessage()
        except Exception:  # a malformed torch log call must not break the run
            return
        if artifact in DEBUG_ARTIFACTS or "skipping cudagraphs" in message.lower():
            exc = record.exc_info[1] if record.exc_info else None
            self.records.append((artifact, message, str(exc) if exc else ""))


def artifact_loggers() -> list[logging.Logger]:
    """Artifact loggers to listen on: those torch has registered (`<module>.__<artifact>`) + known names."""
    for module in (*_DYNAMO_MODULES, "torch._inductor.cudagraph_utils"):
        try:
            importlib.import_module(module)
        except Exception:  # moved or broken module: its logger is simply not found
            continue
    names = {n for n in logging.root.manager.loggerDict if n.rpartition(".__")[2] in _ARTIFACTS}
    return [logging.getLogger(n) for n in sorted(names | set(_KNOWN_LOGGERS))]


def enable_recompile_messages() -> Callable[[], None]:
    """Turn on the `recompiles` artifact in torch's private log state (Dynamo builds the message only
    then); returns the undo. `torch._logging.set_logs` is not used: it resets all other log settings."""
    try:
        from torch._logging._internal import log_state

        if log_state.is_artifact_enabled("recompiles"):
            return lambda: None
        log_state.enable_artifact("recompiles")
        return lambda: log_state.artifact_names.discard("recompiles")
    except Exception:
        return lambda: None


def dynamo_counters() -> Counters | None:
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return None
    return {group: Counter(values) for group, values in counters.items()}


def compile_time_totals() -> dict[str, float]:
    """Seconds per `dynamo_timed` name since process start.

    `compile_times(repr="csv", aggregate=True)` returns (names, values as strings) on 2.6 – 2.13;
    a dict of lists (older/newer shape) and the raw `compilation_time_metrics` are fallbacks.
    """
    try:
        from torch._dynamo.utils import compile_times

        result = compile_times(repr="csv", aggregate=True)
        if isinstance(result, tuple) and len(result) == 2:
            return {str(k): _seconds(v) for k, v in zip(*result, strict=False)}
        if isinstance(result, Mapping):
            return {str(k): _seconds(v) for k, v in result.items()}
    except Exception:
        pass
    try:
        from torch._dynamo.utils import compilation_time_metrics

        return {str(k): _seconds(v) for k, v in compilation_time_metrics.items()}
    except Exception:
        return {}


def _seconds(value: object) -> float:
    if isinstance(value, (list, tuple)):
        return float(sum(_seconds(v) for v in value))
    if isinstance(value, str):
        return float(sum(float(part) for part in value.split(",") if part.strip()))
    return float(value) if isinstance(value, (int, float)) else 0.0


def compilation_metrics() -> list[object] | None:
    """Per-frame-compile `CompilationMetrics` records (private `torch._dynamo.utils`), oldest first."""
    try:
        from torch._dynamo import utils

        return list(utils.get_compilation_metrics())
    except Exception:
        return None


def raise_compilation_metrics_limit() -> None:
    """The record deque keeps 64 entries by default; keep more so long runs lose none."""
    try:
        from torch._dynamo import utils

        current = getattr(utils, "_compilation_metrics", None)
        if current is not None and (current.maxlen is None or current.maxlen >= _METRICS_LIMIT):
            return
        utils.set_compilation_metrics_limit(_METRICS_LIMIT)
    except Exception:
        pass
