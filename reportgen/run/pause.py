"""Stopping and resuming process trees (no torch): what the timed-window coordinator pauses, and a watchdog that
resumes them if the coordinator dies, even by SIGKILL, so that no process is ever left stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuSample", "Pauser", "WindowCpu", "ancestors", "cpu_sample", "descendants", "lineage", "process_parents"]


# --- process trees -------------------------------------------------------------------------------------------------


def process_parents() -> dict[int, int]:
    """pid → parent pid of every process (from /proc; processes that vanish meanwhile are skipped)."""
    found: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2:
            found[int(entry.name)] = int(fields[1])
    return found


def descendants(roots: Iterable[int], parents: dict[int, int] | None = None) -> set[int]:
    """`roots` and every process below them."""
    parents = process_parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    seen: set[int] = set()
    todo = [r for r in roots if r in parents]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(children.get(pid, ()))
    return seen


def ancestors(pid: int, parents: dict[int, int] | None = None) -> set[int]:
    """`pid` and the processes above it."""
    parents = process_parents() if parents is None else parents
    line = {pid}
    up = parents.get(pid)
    while up is not None and up > 0 and up not in line:
        line.add(up)
        up = parents.get(up)
    return line


def lineage(pid: int, parents: dict[int, int] | None = None) -> set[int]:
    """`pid`, its ancestors and its descendants: the processes a window's holder depends on."""
    parents = process_parents() if parents is None else parents
    return ancestors(pid, parents) | descendants([pid], parents)


# --- CPU time ------------------------------------------------------------------------------------------------------

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


@dataclass(frozen=True)
class WindowCpu:
    """What a timed window let others have, from "go" to its close (counted in 10 ms ticks, `USER_HZ`: a single
    short window reads 0 or a tick or two; sums over many mean something)."""

    open_s: float
    others_s: float
    """CPU seconds used by every process on the host but the holder's line (and the coordinator's)."""
    runs_s: float
    """Of which the coordinator's other runs (their whole trees): 0 when pausing them worked."""
    stolen_s: float
    """Seconds the hypervisor stole from the host's CPUs."""
    holder_s: float = 0.0
    """The holder's own process, all its threads: above `open_s` when a thread beside the timed one worked."""
    line_s: float = 0.0
    """The rest of the holder's line, which is never paused: its launcher above it, its compile workers and
    helper processes below it (the coordinator's own line aside)."""


@dataclass(frozen=True)
class CpuSample:
    """CPU seconds at one moment: all CPUs busy, stolen by the hypervisor, used by a set of processes (`own`), by
    another (`runs`), by the holder's process (`holder`) and the rest of its line (`line`)."""

    host_busy_s: float
    steal_s: float
    own_s: float
    runs_s: float = 0.0
    holder_s: float = 0.0
    line_s: float = 0.0

    def since(self, earlier: CpuSample, open_s: float) -> WindowCpu:
        """The window between `earlier` and this sample (never negative: a process of the set that ends takes its
        time away with it)."""
        others = (self.host_busy_s - earlier.host_busy_s) - (self.own_s - earlier.own_s)
        return WindowCpu(
            open_s,
            max(0.0, others),
            max(0.0, self.runs_s - earlier.runs_s),
            max(0.0, self.steal_s - earlier.steal_s),
            max(0.0, self.holder_s - earlier.holder_s),
            max(0.0, self.line_s - earlier.line_s),
        )


def _proc_ticks(pid: int) -> tuple[int, int]:
    """utime + stime of `pid`, and cutime + cstime (its reaped children's); zeros once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0, 0
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 15:
        return 0, 0
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def cpu_sample(
    own: Iterable[int],
    own_with_children: Iterable[int] = (),
    runs: Iterable[int] = (),
    holder: Iterable[int] = (),
    line: Iterable[int] = (),
) -> CpuSample:
    """The host's busy and stolen CPU time (/proc/stat's first line), that of `own` (threads included) plus the
    reaped children of `own_with_children` (a child that ends moves its time there), and that of `runs`, `holder`
    and `line` (each without its reaped children). Zeros without /proc."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return CpuSample(0.0, 0.0, 0.0)
    if len(fields) < 8:
        return CpuSample(0.0, 0.0, 0.0)
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    sets = [set(pids) for pids in (own, own_with_children, runs, holder, line)]
    read = {pid: _proc_ticks(pid) for pid in set().union(*sets)}  # each process's /proc entry once
    ticks = sum(read[pid][0] for pid in sets[0] | sets[1]) + sum(read[pid][1] for pid in sets[1])
    of_runs, of_holder, of_line = (sum(read[pid][0] for pid in pids) for pids in sets[2:])
    busy = user + nice + system + irq + softirq
    return CpuSample(
        busy * _TICK_S, steal * _TICK_S, ticks * _TICK_S, of_runs * _TICK_S, of_holder * _TICK_S, of_line * _TICK_S
    )


# --- stopping and resuming -----------------------------------------------------------------------------------------

_WATCHDOG = """
import os, signal, sys
sys.stdin.buffer.read()  # returns when the coordinator's end of the pipe closes: it ended, however
try:
    pids = [int(p) for p in open(sys.argv[1]).read().split()]
except (OSError, ValueError):
    pids = []
for pid in pids:
    try:
        os.kill(pid, signal.SIGCONT)
    except OSError:
        pass
try:
    os.unlink(sys.argv[1])
except OSError:
    pass
"""


class Pauser:
    """SIGSTOP/SIGCONT of process sets; the stopped pids are kept in a file a watchdog resumes on our death."""

    def __init__(self) -> None:
        fd, name = tempfile.mkstemp(prefix="reportgen-paused-", suffix=".pids")
        os.close(fd)
        self.state = Path(name)
        self.stopped: set[int] = set()
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(self.state)],
            stdin=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C to the coordinator's group must not end the watchdog first
        )

    def _save(self) -> None:
        tmp = self.state.with_suffix(".tmp")
        tmp.write_text(" ".join(map(str, sorted(self.stopped))), encoding="utf-8")
        tmp.replace(self.state)

    def stop(self, pids: set[int]) -> set[int]:
        """Stop `pids` (recorded first, so that a death between the two still resumes them); those stopped."""
        self.stopped |= pids
        self._save()
        done = set()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
                done.add(pid)
        return done

    def resume(self) -> None:
        for pid in self.stopped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGCONT)
        self.stopped = set()
        self._save()

    def close(self) -> None:
        self.resume()
        if self.watchdog.stdin is not None:
            self.watchdog.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.watchdog.wait(timeout=5)
