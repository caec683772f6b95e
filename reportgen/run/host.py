"""The run's child among the host's other runs (child side; imports no torch).

Concurrent runs share the host's CPUs, and launch-bound steps are CPU time. The child keeps to the cores it
was given (`os.sched_setaffinity`, before torch starts its threads), and may hold a host-wide lock while it
measures, so that compilations overlap but no two runs measure at once. Each child also writes its phases
(`preparing`, `measuring`) to `<host dir>/activity/<pid>.json`; at the end of its measurements it reads the
others' files and records which runs were active meanwhile, and in which phase. The lock and the files live in
a per-user directory of the host's temporary directory, so every `reportgen run` of the user on the host (two
shards, or a matrix beside a plain run) sees the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from reportgen.bundle import ConcurrentRun, Isolation, RunPhase
from reportgen.run import window

__all__ = [
    "ACTIVITY_DIR",
    "HOST_DIR_VARIABLE",
    "HOST_PROBE_LOOPS",
    "TIMING_LOCK",
    "HostPlacement",
    "Measurements",
    "apply_placement",
    "default_host_dir",
    "end_activity",
    "host_probe",
]

HOST_DIR_VARIABLE = "REPORTGEN_HOST_DIR"
ACTIVITY_DIR = "activity"
TIMING_LOCK = "timing.lock"
_STALE_S = 6 * 3600.0
"""An ended run's activity file older than this is removed by the next run that reads it."""
_DONE = "done"
HOST_PROBE_LOOPS = 20_000
"""Iterations of the host probe's loop: about 1 ms on a current server CPU."""


def host_probe() -> float:
    """Wall seconds of a fixed pure-Python workload (integer multiply-adds): the host CPU's speed now."""
    start = time.perf_counter()
    total = 0
    for i in range(HOST_PROBE_LOOPS):
        total += i * i
    return time.perf_counter() - start


def default_host_dir() -> Path:
    """Where the runs on this host meet: `$REPORTGEN_HOST_DIR`, else `<tmp>/reportgen-host-<uid>` (one user's)."""
    if chosen := os.environ.get(HOST_DIR_VARIABLE):
        return Path(chosen)
    return Path(tempfile.gettempdir()) / f"reportgen-host-{os.getuid()}"


class HostPlacement(BaseModel):
    """Where the scheduler put a run on its host, as the child receives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    cpus: list[int] = []
    timing_lock: bool = False
    host_dir: str
    window_socket: str | None = None
    """The matrix's timed-window coordinator (`run.window_host`): its runs' windows one at a time, others paused."""


def apply_placement(placement: HostPlacement) -> Isolation:
    """Pin this process (and every thread and process it starts later) to the placement's cores."""
    notes = []
    if placement.cpus:
        try:
            os.sched_setaffinity(0, placement.cpus)
        except OSError as exc:
            notes.append(f"cores {placement.cpus} not pinned: {exc}")
    threads = os.environ.get("TORCHINDUCTOR_COMPILE_THREADS")
    return Isolation(
        devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        cpus=sorted(os.sched_getaffinity(0)) if placement.cpus and not notes else [],
        compile_threads=int(threads) if threads and threads.isdigit() else None,
        notes=notes,
    )


@dataclass
class _Record:
    """One run's activity file: who it is and when each of its phases began (wall clock)."""

    name: str
    pid: int
    devices: str | None
    cpus: list[int]
    phases: list[tuple[str, float]] = field(default_factory=list)


class Measurements:
    """This run's activity on the host; `measuring()` wraps the phase whose numbers must stay true."""

    def __init__(self, placement: HostPlacement, isolation: Isolation) -> None:
        self.placement, self.isolation = placement, isolation
        self.dir = Path(placement.host_dir) / ACTIVITY_DIR
        self.record = _Record(placement.name, os.getpid(), isolation.devices, isolation.cpus)
        self.path = self.dir / f"{os.getpid()}.json"
        self.enter("preparing")

    def enter(self, phase: str) -> None:
        """Write that this run is in `phase` from now on (a host that cannot be written to is only noted)."""
        self.record.phases.append((phase, time.time()))
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.record.__dict__), encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:
            note = f"activity not shared with the host's other runs: {exc}"
            if note not in self.isolation.notes:
                self.isolation = self.isolation.model_copy(update={"notes": [*self.isolation.notes, note]})

    @contextlib.contextmanager
    def measuring(self, log: Callable[[str], None]) -> Iterator[None]:
        """Mark the phase `measuring`; its timed parts take the host's timing lock one window at a time (when the
        placement asks for it: `window.LOCK_VARIABLE`, inherited by the graph-timing process) and ask the
        matrix's coordinator, if any. At its end, record the windows and the runs that were active meanwhile."""
        lock = self._lock_path()
        if lock is not None:
            os.environ[window.LOCK_VARIABLE] = str(lock)
            log(f"measuring in timed windows under the host's timing lock {lock}")
        started = time.monotonic()
        self.enter("measuring")
        window_start = time.time()
        try:
            yield
        finally:
            os.environ.pop(window.LOCK_VARIABLE, None)
            concurrent = _overlapping(self.dir, os.getpid(), window_start, time.time())
            windows = window.log()
            self.isolation = self.isolation.model_copy(
                update={
                    "timing_lock": lock is not None,
                    "lock_wait_s": round(windows.waited_s, 3),
                    "measured_s": round(time.monotonic() - started, 3),
                    "concurrent": concurrent,
                    "windows": windows.windows,
                    "window_s": round(windows.open_s, 3),
                    "gpu_windows": windows.gpu_windows,
                    "gpu_window_s": round(windows.gpu_open_s, 3),
                    "window_wait_s": round(windows.waited_s, 3),
                    "coordinated": bool(self.placement.window_socket) and not windows.notes,
                    "paused": {name: round(s, 3) for name, s in sorted(windows.paused.items())},
                    "drain_s": round(windows.drain_s, 3),
                    "others_cpu_s": round(windows.others_cpu_s, 3),
                    "runs_cpu_s": round(windows.runs_cpu_s, 3),
                    "stolen_s": round(windows.stolen_s, 3),
                    "window_cpu": windows.cpu,
                    "notes": [*self.isolation.notes, *windows.notes],
                }
            )
            self.enter(_DONE)

    def _lock_path(self) -> Path | None:
        if not self.placement.timing_lock:
            return None
        path = Path(self.placement.host_dir) / TIMING_LOCK
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.isolation = self.isolation.model_copy(
                update={"notes": [*self.isolation.notes, f"no timing lock: {exc}"]}
            )
            return None
        return path


def end_activity(host_dir: Path, pid: int) -> None:
    """The child `pid` has ended (the launcher says so, for a child killed before it could): its last phase
    ends now. The file stays a while for runs whose measurements overlapped it."""
    path = host_dir / ACTIVITY_DIR / f"{pid}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["phases"] and record["phases"][-1][0] != _DONE:
            record["phases"].append([_DONE, time.time()])
            path.write_text(json.dumps(record), encoding="utf-8")
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return


def _phases_in(record: dict[str, object], ended: float, start: float, end: float) -> list[RunPhase]:
    """The phases of `record` (an activity file's JSON) that overlapped [start, end]; its last phase lasted
    until `ended`."""
    raw = record.get("phases")
    phases = [(str(p[0]), float(p[1])) for p in raw] if isinstance(raw, list) else []
    seen: list[RunPhase] = []
    for index, (phase, began) in enumerate(phases):
        until = phases[index + 1][1] if index + 1 < len(phases) else ended
        if phase in ("preparing", "measuring") and began < end and until > start and phase not in seen:
            seen.append(phase)  # type: ignore[arg-type]
    return seen


def _ended(record: dict[str, object]) -> bool:
    phases = record.get("phases")
    return isinstance(phases, list) and bool(phases) and phases[-1][0] == _DONE


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _overlapping(activity: Path, own_pid: int, start: float, end: float) -> list[ConcurrentRun]:
    """The other runs whose activity files show a phase within [start, end] (wall clock)."""
    found = []
    for path in sorted(activity.glob("*.json")) if activity.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            mtime = path.stat().st_mtime
            pid = int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        alive = _alive(pid)
        if (not alive or _ended(record)) and time.time() - mtime > _STALE_S:
            path.unlink(missing_ok=True)
            continue
        if pid == own_pid:
            continue
        phases = _phases_in(record, time.time() if alive else mtime, start, end)
        if phases:
            cpus = record.get("cpus") or []
            found.append(
                ConcurrentRun(
                    name=str(record.get("name")), pid=pid, devices=record.get("devices"), cpus=cpus, phases=phases
                )
            )
    return found
