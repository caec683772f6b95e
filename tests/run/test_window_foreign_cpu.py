"""Whether a window had the host to itself, counted: the CPU time others used while it was open."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reportgen.run import window
from reportgen.run.pause import CpuSample, cpu_sample
from reportgen.run.window_host import Coordinator

ROOT = Path(__file__).resolve().parents[2]

HOLD_S = 0.6

HOLDER = textwrap.dedent(
    """
    import sys, time
    from reportgen.run import window
    window.connect()
    with window.timed_window("steps"):
        time.sleep(float(sys.argv[1]))
    """
)

needs_proc = pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="CPU time is read from /proc")


def _spinner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _one_window(register_spinner: bool) -> tuple[float, float]:
    """A holder sleeping `HOLD_S` in its window beside a busy loop, registered (so paused) or not: the window's
    (others' CPU seconds, stolen seconds)."""
    spinner = _spinner()
    try:
        time.sleep(0.3)  # the loop is running
        with Coordinator(settle_s=0.0) as coordinator:
            if register_spinner:
                coordinator.register(spinner.pid, "spinner")
            env = dict(os.environ, PYTHONPATH=str(ROOT), **{window.SOCKET_VARIABLE: coordinator.path})
            subprocess.run([sys.executable, "-c", HOLDER, str(HOLD_S)], env=env, check=True, timeout=60)
            assert len(coordinator.foreign) == len(coordinator.granted) == 1
            open_s, others_s, stolen_s = coordinator.foreign[0]
            assert open_s >= HOLD_S
            return others_s, stolen_s
    finally:
        spinner.kill()
        spinner.wait()


@needs_proc
def test_a_busy_process_left_running_is_counted_and_a_paused_one_is_not() -> None:
    foreign_running, _ = _one_window(register_spinner=False)
    foreign_paused, _ = _one_window(register_spinner=True)
    # the loop alone keeps one CPU busy for the whole window; paused, it uses nothing (ticks are 10 ms)
    assert foreign_running >= 0.5 * HOLD_S, foreign_running
    assert foreign_paused <= 0.25 * HOLD_S, foreign_paused


@needs_proc
def test_the_holders_own_cpu_is_not_foreign() -> None:
    """The process that holds the window may burn every cycle it likes: that is its measurement."""
    spin = textwrap.dedent(
        """
        import time
        from reportgen.run import window
        window.connect()
        with window.timed_window("steps"):
            until = time.monotonic() + 0.6
            while time.monotonic() < until:
                pass
        """
    )
    with Coordinator(settle_s=0.0) as coordinator:
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{window.SOCKET_VARIABLE: coordinator.path})
        subprocess.run([sys.executable, "-c", spin], env=env, check=True, timeout=60)
    _, foreign, _ = coordinator.foreign[0]
    assert foreign <= 0.15, foreign


def test_a_sample_s_differences_never_go_negative() -> None:
    """A process of the set that ends inside the window takes its time away from `own`: clamp, not negative."""
    go, end = CpuSample(10.0, 1.0, 5.0), CpuSample(10.5, 1.0, 6.0)
    assert end.foreign_since(go) == (0.0, 0.0)
    assert CpuSample(12.0, 1.5, 5.5).foreign_since(go) == (1.5, 0.5)


@needs_proc
def test_own_time_counts_this_process() -> None:
    before = cpu_sample([os.getpid()])
    until = time.process_time() + 0.2
    while time.process_time() < until:
        pass
    after = cpu_sample([os.getpid()])
    assert after.own_s - before.own_s >= 0.1
    assert after.host_busy_s - before.host_busy_s >= 0.1
