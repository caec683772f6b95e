"""A run's supervisor: the run's whole process tree ends with it, `setsid` grandchildren and daemons included.

The launcher starts this script (standard library only, `python -I -S reaper.py`), and it starts the run's
child. It makes itself a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`), so every process the run leaves
behind (a `start_new_session` grandchild, a double-forked daemon) becomes its child instead of init's; it
never runs recipe code. When the child ends (success, failure, a crash), or the launcher asks (`STOP_SIGNAL`:
the timeout, a grace to exit; `KILL_SIGNAL`: an interrupt, none), or the launcher dies (`PR_SET_PDEATHSIG`),
it kills every process still below it, reaps them, and reports the child's exit status on the status pipe.
Each run has its own supervisor, so the runs of a matrix never touch each other's processes.

Protocol: ``reaper.py STATUS_FD GRACE_S PARENT_PID -- CMD...``; it writes ``pid <child pid>`` when the child
starts and ``status <returncode>`` (negative: killed by that signal) when it has ended, one line each.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

__all__ = ["KILL_SIGNAL", "STOP_SIGNAL", "main"]

STOP_SIGNAL = signal.SIGTERM
"""From the launcher at the run's timeout: SIGTERM to the child's process group, then after the grace SIGKILL to
every process of the run."""
KILL_SIGNAL = signal.SIGINT
"""From the launcher when the run is interrupted (`stop_runs`, Ctrl-C): SIGKILL to every process of the run."""
MAX_KILL_ROUNDS = 200
"""Rounds of "list the descendants, SIGKILL them, reap" before giving up: a killed process forks no more, so a
round finds only what forked during the last one; a fork loop is outrun in a few rounds."""
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_ROUND_PAUSE_S = 0.01
_SIGNALS = {STOP_SIGNAL, KILL_SIGNAL, signal.SIGHUP, signal.SIGCHLD}
"""Blocked for the whole supervision and taken by `_wait` only: a stop never interrupts the cleanup."""


def _prctl(option: int, value: int) -> bool:
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """Parent pid of every process (`/proc/<pid>/stat`); empty where there is no /proc."""
    parents = {}
    try:
        names = os.listdir("/proc")  # noqa: PTH208 (strings: a kill round lists every process)
    except OSError:
        return {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:  # gone meanwhile
            continue
        fields = data[data.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses
        if len(fields) > 1:
            parents[int(name)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, theirs, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _reap() -> dict[int, int]:
    """Reap every child that has ended; their wait statuses by pid."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended[pid] = status


def kill_tree(root: int = 0, rounds: int = MAX_KILL_ROUNDS) -> dict[int, int]:
    """SIGKILL every process below `root` (default: this one) until none is left, reaping what becomes ours;
    returns the wait statuses reaped. Run by a subreaper, every orphan of the tree is a child it reaps."""
    root = root or os.getpid()
    ended: dict[int, int] = {}
    for _ in range(rounds):
        ended.update(_reap())
        alive = descendants(root)
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
        time.sleep(_ROUND_PAUSE_S)
    ended.update(_reap())
    return ended


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _wait(child: int, timeout_s: float | None = None) -> tuple[int | None, int | None]:
    """Wait for the child (reaping orphans as they end) or a signal of `_SIGNALS` (blocked, so taken here and
    nowhere else), at most `timeout_s`; (the child's wait status or None, the stop signal or None)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        ended = _reap()
        if child in ended:
            return ended[child], None
        info: signal.struct_siginfo | None
        if deadline is None:
            info = signal.sigwaitinfo(_SIGNALS)
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                return None, None
            info = signal.sigtimedwait(_SIGNALS, left)
        if info is not None and info.si_signo != signal.SIGCHLD:
            return None, info.si_signo


def _end(child: int, status: int | None, stop: int | None, grace_s: float) -> int:
    """End the run's tree; the child's wait status."""
    if status is None and stop == STOP_SIGNAL:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child, signal.SIGTERM)
        status, _ = _wait(child, grace_s)  # a second stop (`KILL_SIGNAL`) cuts the grace short
    ended = kill_tree()
    if status is None:
        status = ended.get(child)
    if status is None:
        try:
            _, status = os.waitpid(child, 0)
        except ChildProcessError:
            status = signal.SIGKILL  # the wait status of "killed by SIGKILL"
    return status


def _spawn(cmd: list[str]) -> int:
    """Start the child in its own session (a process group the timeout's SIGTERM goes to), with stdin from
    /dev/null and the signal mask and dispositions a fresh process has."""
    return os.posix_spawnp(
        cmd[0],
        cmd,
        os.environ,
        file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)],
        setsid=True,
        setsigmask=(),
        setsigdef=tuple(_SIGNALS),
    )


def main(argv: list[str] | None = None) -> int:
    """Supervise one run (see the module's protocol); exits 0 once its tree is gone, 2 on a usage error."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 5 or args[3] != "--":
        print("usage: reaper.py STATUS_FD GRACE_S PARENT_PID -- CMD...", file=sys.stderr)
        return 2
    status_fd, grace_s, parent = int(args[0]), float(args[1]), int(args[2])
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    os.set_inheritable(status_fd, False)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, KILL_SIGNAL)  # the launcher died: end the run at once
    with os.fdopen(status_fd, "w", buffering=1) as report:
        if os.getppid() != parent:  # it died before prctl
            return 0
        try:
            child = _spawn(args[4:])
        except OSError as exc:
            print(f"reportgen: cannot start the run's child: {exc}", file=sys.stderr, flush=True)
            report.write("status 127\n")
            return 0
        report.write(f"pid {child}\n")
        status, stop = _wait(child)
        report.write(f"status {_returncode(_end(child, status, stop, grace_s))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
