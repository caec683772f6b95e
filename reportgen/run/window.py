"""Timed windows (child side; imports no torch): a measurement asks the host's coordinator before it starts.

Everything a run times (a pair of step blocks with its host probe, the profiled steps, a graph's timing
rounds and profile, a kernel's benchmark) runs inside `timed_window(what)`. With no coordinator
(`REPORTGEN_WINDOW_SOCKET` unset, a plain `reportgen run`) a window costs nothing. With one
(`reportgen.run.window_host`: the matrix on a shared host, or a benchmark that interleaves processes), the
process says which window it wants, waits for "go" (the coordinator pauses the host's other runs first, or
makes processes take turns), times, and says it has left. All of it happens outside the timed code.

Runs may share a GPU (`reportgen run --runs-per-gpu 2`). A paused run's process is stopped, but the GPU work it
had queued still runs; when the coordinator paused a run that may be on this process's GPU (`window_host._may_share`),
its "go" says `shared_gpu`, and the process waits on the device for that work to drain (`drain_gpu`) before it
times.

A coordinator may name a CPU in its "go" (`Coordinator(cpu=K)`): the window's thread then runs on that CPU alone
until it leaves (`pinned`), so that windows paired across processes see the same vCPU. On a lent VM each vCPU
flips between a fast and a slow state every second or so, independently of the others; two processes a few
milliseconds apart on different vCPUs read up to 50 % apart, on the same vCPU a few % (processes that the
coordinator wakes in turn mostly share a vCPU already: `benchmarks/window_pairing.py`; the pin makes it sure).

A window may be `gpu_only` (Inductor's own benchmarks during a compile, timed on the GPU by events): it still
takes its turn with every other window, so nothing stops it midway, but the coordinator pauses only the runs
that share its GPU; a run on another GPU goes on compiling meanwhile.

Protocol: one Unix stream socket per process, one JSON object per line. The client sends
``{"hello": {"pid", "role", "gpu"}}`` once (gpu: its `CUDA_VISIBLE_DEVICES`, `*` when unset), then
``{"enter": what}`` (``"gpu_only": true`` beside it for such a window; answer ``{"go": {...}}``) and
``{"leave": what}`` (answer ``{"left": {...}}``). The "go" may hold ``"cpu": K``. A
coordinator that cannot be reached, or that does not answer within `WAIT_S`, is noted (`log().notes`) and the
measurement goes on without it: a window never fails a run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.locks import hold_lock

__all__ = [
    "COMPILE_BENCHMARK_WINDOW",
    "LOCK_VARIABLE",
    "ROLE_VARIABLE",
    "SOCKET_VARIABLE",
    "STEPS_WINDOW",
    "WAIT_S",
    "WindowLog",
    "compile_benchmark_window",
    "connect",
    "drain_gpu",
    "dump_log",
    "graph_profile_window",
    "graph_timing_window",
    "log",
    "merge_log",
    "pinned",
    "timed_window",
]

LOCK_VARIABLE = "REPORTGEN_WINDOW_LOCK"
"""A host-wide lock file held for each window (runs of separate `reportgen` processes on one host take turns)."""

SOCKET_VARIABLE = "REPORTGEN_WINDOW_SOCKET"
"""The coordinator's socket path; unset: no coordinator, windows cost nothing."""

ROLE_VARIABLE = "REPORTGEN_WINDOW_ROLE"
"""What this process is to the coordinator (`reportgen`, `bare`, `seed`, a matrix run's name)."""

STEPS_WINDOW = "steps"
"""The window of one pair of step blocks and the host probe before it (`run.measure`)."""
COMPILE_BENCHMARK_WINDOW = "compile benchmark"
"""The GPU-only window of each of Inductor's own benchmarks in a first compiled call (`inductor.benchmarks_in`)."""


def compile_benchmark_window() -> contextlib.AbstractContextManager[None]:
    """The window of one of Inductor's benchmarks in a first compiled call: GPU-only (`inductor.benchmarks_in`'s
    `window`, for the run's child and for a benchmark's bare loop alike)."""
    return timed_window(COMPILE_BENCHMARK_WINDOW, gpu_only=True)


def graph_timing_window(graph: int, k: int | None) -> str:
    """The window of a compiled graph's k-th timing (`run.capture`; None: all of a round's timings in one, as before
    the per-timing windows). Spelled here once: a benchmark pairs these with a fresh `-p`'s (`timing_fidelity`)."""
    return f"graph {graph} timing" if k is None else f"graph {graph} timing {k}"


def graph_profile_window(graph: int) -> str:
    """The window of a compiled graph's profiled calls (`run.capture`)."""
    return f"graph {graph} profile"


DRAIN_QUICK_S = 300e-6
"""A tiny kernel and a synchronize that return within this took the GPU alone: another context with work queued
holds it for its time slice (milliseconds); alone, the round trip is tens of microseconds."""
DRAIN_LIMIT_S = 5.0
"""Longest wait for a shared GPU to drain; beyond it the window opens all the same (noted)."""

WAIT_S = 1800.0
"""Longest wait for "go" or "left"; beyond it the window is abandoned (noted) and the measurement goes on."""


@dataclass
class WindowLog:
    """What this process's windows cost and did: for the bundle's isolation record."""

    windows: int = 0
    waited_s: float = 0.0
    open_s: float = 0.0
    gpu_windows: int = 0
    """`gpu_only` windows (counted apart: they pause only the runs on this GPU)."""
    gpu_open_s: float = 0.0
    paused: dict[str, float] = field(default_factory=dict)
    """Name of each run the coordinator paused during this process's windows → seconds paused in all."""
    drain_s: float = 0.0
    """Seconds waited, after "go", for a paused run's queued work to leave a shared GPU (`drain_gpu`)."""
    cpu: int | None = None
    """The CPU the coordinator pinned the windows to (None: not pinned)."""
    others_cpu_s: float = 0.0
    """CPU seconds others used during the coordinated windows (GPU-only ones aside), as the coordinator counted."""
    runs_cpu_s: float = 0.0
    """Of which the coordinator's other runs (paused: ~0)."""
    stolen_s: float = 0.0
    """Seconds the hypervisor stole during them."""
    notes: list[str] = field(default_factory=list)


_LOG = WindowLog()


class _Client:
    """This process's connection to the coordinator (made at the first window, kept until exit)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT_S)
        self.sock.connect(path)
        self.reader = self.sock.makefile("r", encoding="utf-8")
        role = os.environ.get(ROLE_VARIABLE, "")
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "*")  # unset: the default device, shared with all alike
        self.send({"hello": {"pid": os.getpid(), "role": role, "gpu": gpu}})

    def send(self, message: dict[str, object]) -> None:
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def answer(self, key: str) -> dict[str, object]:
        line = self.reader.readline()
        if not line:
            raise ConnectionError("the coordinator closed the connection")
        reply = json.loads(line)
        found = reply.get(key) if isinstance(reply, dict) else None
        if not isinstance(found, dict):
            raise ConnectionError(f"unexpected answer {line.strip()[:200]!r} (expected {key!r})")
        return found


_CLIENT: _Client | None = None
_BROKEN = False


def _note(message: str) -> None:
    if message not in _LOG.notes:
        _LOG.notes.append(message)


def _client() -> _Client | None:
    global _CLIENT, _BROKEN
    path = os.environ.get(SOCKET_VARIABLE)
    if not path or _BROKEN:
        return None
    if _CLIENT is None:
        try:
            _CLIENT = _Client(path)
        except OSError as exc:
            _BROKEN = True
            _note(f"timed windows: coordinator {path} not reached ({exc}); measured without it")
    return _CLIENT


def _drop(what: str, exc: Exception) -> None:
    global _CLIENT, _BROKEN
    _BROKEN = True
    _note(f"timed windows: coordinator lost at {what!r} ({exc}); measured without it from there on")
    if _CLIENT is not None:
        with contextlib.suppress(OSError):
            _CLIENT.sock.close()
    _CLIENT = None


@contextlib.contextmanager
def timed_window(what: str, *, gpu_only: bool = False) -> Iterator[None]:
    """Hold a timed window for the `with` block: the host lock (`REPORTGEN_WINDOW_LOCK`) if set, then the
    coordinator's "go" if there is one; a no-op with neither. `gpu_only`: pause only the runs on this GPU."""
    lock, client = os.environ.get(LOCK_VARIABLE), _client()
    if not lock and client is None:
        yield
        return
    with contextlib.ExitStack() as stack:
        asked = time.perf_counter()
        if lock:
            try:
                stack.enter_context(hold_lock(Path(lock), timeout_s=None))
            except OSError as exc:
                _note(f"timed windows: host lock {lock} not taken ({exc}); measured without it")
        granted = client is not None and stack.enter_context(_granted(client, what, gpu_only))
        opened = time.perf_counter()
        try:
            yield
        finally:
            if lock or granted:  # a window only if the lock or the coordinator made it one
                _LOG.waited_s += opened - asked
                if gpu_only:
                    _LOG.gpu_windows += 1
                    _LOG.gpu_open_s += time.perf_counter() - opened
                else:
                    _LOG.windows += 1
                    _LOG.open_s += time.perf_counter() - opened


@contextlib.contextmanager
def _granted(client: _Client, what: str, gpu_only: bool) -> Iterator[bool]:
    """The coordinator's "go" for `what`, and "left" at the end; yields whether it granted the window (False:
    it is gone, noted)."""
    try:
        client.send({"enter": what, **({"gpu_only": True} if gpu_only else {})})
        go = client.answer("go")
    except (OSError, ValueError) as exc:
        _drop(what, exc)
        yield False
        return
    if go.get("shared_gpu"):
        _LOG.drain_s += drain_gpu()
    cpu = go.get("cpu")
    try:
        with pinned(cpu if type(cpu) is int else None):
            yield True
    finally:
        try:
            client.send({"leave": what})
            left = client.answer("left")
        except (OSError, ValueError) as exc:
            _drop(what, exc)
        else:
            paused = left.get("paused")
            for name, seconds in paused.items() if isinstance(paused, dict) else ():
                if isinstance(seconds, int | float):
                    _LOG.paused[str(name)] = _LOG.paused.get(str(name), 0.0) + float(seconds)
            if not gpu_only:  # (a GPU-only window leaves the runs on other GPUs going, by design)
                _LOG.others_cpu_s += _seconds(left.get("others_cpu_s"))
                _LOG.runs_cpu_s += _seconds(left.get("runs_cpu_s"))
                _LOG.stolen_s += _seconds(left.get("stolen_s"))


def _seconds(value: object) -> float:
    """A count of seconds from the coordinator (anything else, or negative: 0)."""
    return max(0.0, float(value)) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _threads() -> set[int]:
    try:
        return {int(task.name) for task in Path("/proc/self/task").iterdir()}
    except OSError:
        return set()


@contextlib.contextmanager
def pinned(cpu: int | None) -> Iterator[None]:
    """Run the block with this thread on `cpu` alone, then give it its CPUs back (and to any thread started
    meanwhile, which inherited the pin: a profiler's, say). None, or a CPU this thread may not use: as is, noted."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    if cpu not in before:
        _note(f"timed windows: CPU {cpu} is not among this process's {sorted(before)}; not pinned")
        yield
        return
    threads = _threads()
    os.sched_setaffinity(0, {cpu})
    _LOG.cpu = cpu
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
        for tid in _threads() - threads:
            with contextlib.suppress(OSError):
                if os.sched_getaffinity(tid) == {cpu}:
                    os.sched_setaffinity(tid, before)


def drain_gpu(limit_s: float = DRAIN_LIMIT_S) -> float:
    """Wait until this process's GPU runs a tiny kernel at once (`DRAIN_QUICK_S`, three times in a row): the work
    that stopped processes had queued on it is done. Seconds waited; nothing when this process has no CUDA
    context (torch not imported, or not initialised: it has no GPU work to time either)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return 0.0
    started = time.perf_counter()
    probe = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    quick = 0
    while quick < 3:
        sent = time.perf_counter()
        if sent - started > limit_s:
            _note(f"timed windows: a shared GPU was still busy after {limit_s:.0f} s; timed all the same")
            break
        probe.add_(1)
        torch.cuda.synchronize()
        quick = quick + 1 if time.perf_counter() - sent < DRAIN_QUICK_S else 0
    return time.perf_counter() - started


def connect() -> bool:
    """Say hello to the coordinator now (if there is one), so that it pauses this process during the others'
    windows from the start rather than from this process's first window; whether one is connected."""
    return _client() is not None


def dump_log(path: Path) -> None:
    """Write this process's windows to `path` (a child process's, for its parent to `merge_log`)."""
    path.write_text(json.dumps(dataclasses.asdict(_LOG)), encoding="utf-8")


def merge_log(path: Path) -> None:
    """Add the windows a child process wrote to `path` (by `dump_log`) to this process's; the file is removed."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    except (OSError, ValueError):
        return
    if not isinstance(found, dict):
        return
    _LOG.windows += int(found.get("windows", 0))
    _LOG.waited_s += float(found.get("waited_s", 0.0))
    _LOG.open_s += float(found.get("open_s", 0.0))
    _LOG.gpu_windows += int(found.get("gpu_windows", 0))
    _LOG.gpu_open_s += float(found.get("gpu_open_s", 0.0))
    _LOG.drain_s += float(found.get("drain_s", 0.0))
    _LOG.others_cpu_s += _seconds(found.get("others_cpu_s"))
    _LOG.runs_cpu_s += _seconds(found.get("runs_cpu_s"))
    _LOG.stolen_s += _seconds(found.get("stolen_s"))
    if type(cpu := found.get("cpu")) is int:
        _LOG.cpu = cpu
    for name, seconds in dict(found.get("paused", {})).items():
        _LOG.paused[str(name)] = _LOG.paused.get(str(name), 0.0) + float(seconds)
    for note in found.get("notes", []):
        _note(str(note))


def log() -> WindowLog:
    """This process's windows so far."""
    return _LOG
