"""Whether a window had the host to itself, counted: the CPU time others used while it was open.

The host here may be busy with anything (the suite's other worker, CI's neighbours), so the host-wide count is
only ever asserted from below; what the coordinator's own runs used is asserted both ways."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reportgen.run import window
from reportgen.run.pause import CpuSample, WindowCpu, cpu_sample
from reportgen.run.window_host import Coordinator

ROOT = Path(__file__).resolve().parents[2]

HOLD_S = 1.5
"""Long enough that a busy loop gets 0.1 s of CPU in a window even on 2 CPUs shared by ten runnable processes."""

HOLDER = textwrap.dedent(
    """
    import json, sys, time
    from reportgen.run import window
    window.connect()
    with window.timed_window("steps"):
        time.sleep(float(sys.argv[1]))
    log = window.log()
    print(json.dumps([log.others_cpu_s, log.runs_cpu_s, log.stolen_s]))
    """
)

needs_proc = pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="CPU time is read from /proc")


def _one_window(*, register: bool, pause: bool = True) -> WindowCpu:
    """A holder sleeping `HOLD_S` in its window beside a busy loop (a run the coordinator knows, or not)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # the loop is running
        with Coordinator(settle_s=0.0, pause=pause) as coordinator:
            if register:
                coordinator.register(spinner.pid, "spinner")
            env = dict(os.environ, PYTHONPATH=str(ROOT), **{window.SOCKET_VARIABLE: coordinator.path})
            command = [sys.executable, "-c", HOLDER, str(HOLD_S)]
            done = subprocess.run(command, env=env, check=True, timeout=60, capture_output=True, text=True)
        [cpu] = coordinator.foreign
        assert len(coordinator.granted) == 1 and cpu.open_s >= HOLD_S
        # the holder's own log got the coordinator's counts (what reaches its bundle's isolation)
        assert json.loads(done.stdout) == [round(cpu.others_s, 3), round(cpu.runs_s, 3), round(cpu.stolen_s, 3)]
        return cpu
    finally:
        spinner.kill()
        spinner.wait()


@needs_proc
def test_a_paused_run_uses_nothing_in_the_window() -> None:
    assert _one_window(register=True).runs_s <= 0.05


@needs_proc
def test_a_run_left_going_is_counted_as_a_runs_and_an_unknown_process_as_the_hosts() -> None:
    going = _one_window(register=True, pause=False)
    assert going.runs_s >= 0.1
    assert going.others_s >= going.runs_s - 0.05  # the runs are part of the host's others
    unknown = _one_window(register=False)
    assert unknown.runs_s == 0.0
    assert unknown.others_s >= 0.1


def test_a_window_s_counts_never_go_negative() -> None:
    """A process of the set that ends inside the window takes its time away from `own`: clamped, not negative."""
    go = CpuSample(10.0, 1.0, 5.0, 2.0)
    assert CpuSample(10.5, 1.0, 6.0, 1.5).since(go, 0.3) == WindowCpu(0.3, 0.0, 0.0, 0.0)
    assert CpuSample(12.0, 1.5, 5.5, 2.5).since(go, 0.3) == WindowCpu(0.3, 1.5, 0.5, 0.5)


@needs_proc
def test_a_sample_counts_this_process_as_own_and_its_busy_time_on_the_host() -> None:
    before = cpu_sample([os.getpid()])
    until = time.process_time() + 0.2
    while time.process_time() < until:
        pass
    after = cpu_sample([os.getpid()], runs=[os.getpid()])
    assert after.own_s - before.own_s >= 0.1
    assert after.host_busy_s - before.host_busy_s >= 0.1
    assert after.runs_s >= after.own_s - 0.01  # the same process, counted in either set
