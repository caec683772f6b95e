"""The run's processes, from the parent's side: start the child under its supervisor (`reaper`), wait for it
within the run's timeout, and end the run's whole process tree at its end, its timeout or an interrupt.

The supervisor (a script of the standard library, `python -I -S reaper.py`) is a child subreaper: whatever the
recipe starts (`setsid` grandchildren, daemons) stays below it and is killed with the run. The parent only
signals the supervisor; one that does not end in time is killed with its process group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from reportgen.run.host import end_activity
from reportgen.run.reaper import KILL_SIGNAL, STOP_SIGNAL

__all__ = ["KILL_GRACE_S", "spawn", "stop_runs"]

KILL_GRACE_S = 10.0
"""After the timeout's SIGTERM, how long the child's process group has to exit before everything is killed."""
_REAPER = Path(__file__).with_name("reaper.py")
"""The run's supervisor, started as a script (`python -I -S`: the standard library only, nothing on PYTHONPATH)."""
_REAPER_SLACK_S = 10.0
"""How long the supervisor may take to kill and reap the run's tree before it is killed itself."""
_LIVE: set[subprocess.Popen[bytes]] = set()
"""The supervisors running now (several when a matrix fills a host's GPUs), for `stop_runs`."""


def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, sig)


def _end(proc: subprocess.Popen[bytes], graceful: bool) -> None:
    """Ask the run's supervisor to end the run's tree (`reaper`: with the child's grace, or at once) and wait;
    a supervisor that does not end in time is killed with its process group."""
    steps = ((STOP_SIGNAL, KILL_GRACE_S + _REAPER_SLACK_S),) if graceful else ()
    for sig, wait_s in (*steps, (KILL_SIGNAL, _REAPER_SLACK_S)):
        _signal(proc, sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait for the run; on timeout end its whole process tree. Returns True if it timed out."""
    try:
        proc.wait(timeout=timeout_s)
        return False
    except subprocess.TimeoutExpired:
        _end(proc, graceful=True)
        return True


def _reported(status_fd: int) -> dict[str, int]:
    """What the supervisor wrote on its status pipe (`reaper`): `pid` and `status`, those it got to."""
    os.set_blocking(status_fd, False)
    chunks = []
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(status_fd, 4096):
            chunks.append(chunk)
    found = {}
    for line in b"".join(chunks).decode("ascii", errors="replace").splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            found[key] = int(value)
    return found


def spawn(cmd: list[str], env: dict[str, str], log_path: Path, timeout_s: float, host_dir: Path) -> tuple[int, bool]:
    """Run the child under its supervisor (`reaper`: the run's whole process tree ends with it) with its output
    in `log_path`; its exit code, and whether it timed out."""
    status_fd, report_fd = os.pipe()
    try:
        with open(log_path, "wb") as log:
            supervisor = [
                sys.executable,
                "-I",
                "-S",
                str(_REAPER),
                str(report_fd),
                str(KILL_GRACE_S),
                str(os.getpid()),
            ]
            proc = subprocess.Popen(
                [*supervisor, "--", *cmd],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
                pass_fds=(report_fd,),
            )
    except BaseException:
        os.close(status_fd)
        raise
    finally:
        os.close(report_fd)
    _LIVE.add(proc)
    try:
        timed_out = _wait(proc, timeout_s)
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C): the run ends now, whole
            _end(proc, graceful=False)
        _LIVE.discard(proc)
        reported = _reported(status_fd)
        os.close(status_fd)
        if "pid" in reported:
            end_activity(host_dir, reported["pid"])  # a killed child could not say that it ended
    return reported.get("status", proc.returncode), timed_out


def stop_runs() -> None:
    """End every running run with its whole process tree (an interrupted matrix): their runs end as `killed`."""
    for proc in list(_LIVE):
        _signal(proc, KILL_SIGNAL)
