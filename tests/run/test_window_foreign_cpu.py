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


BUSY_HOLDER = textwrap.dedent(
    """
    import subprocess, sys, threading, time
    from reportgen.run import window
    window.connect()
    spin = "import time\\nuntil = time.process_time() + 0.6\\nwhile time.process_time() < until: pass"
    worker = subprocess.Popen([sys.executable, "-c", "import time\\ntime.sleep(0.3)\\n" + spin])  # busy in the window
    with window.timed_window("steps"):
        born = subprocess.Popen([sys.executable, "-c", spin])  # one more, started in the window
        busy = threading.Thread(target=lambda: exec(spin))  # a thread beside the timed one
        busy.start()
        time.sleep(3.0)  # time for all three to finish on 2 CPUs beside the suite's other worker
        busy.join()
    assert (worker.wait(), born.wait()) == (0, 0)  # reaped after the window: until then, counted as the line's
    """
)


@needs_proc
def test_a_holders_own_threads_and_its_line_are_counted_apart_from_the_others() -> None:
    """What the holder's side did beside its timed thread: a busy thread shows in `holder_s`, a busy child (a compile
    worker, the graph process; one started before the window, one in it) in `line_s`. The host's others are not
    asserted: the suite's other worker shares this host."""
    with Coordinator(settle_s=0.0) as coordinator:
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{window.SOCKET_VARIABLE: coordinator.path})
        subprocess.run([sys.executable, "-c", BUSY_HOLDER], env=env, check=True, timeout=60)
    [cpu] = coordinator.foreign
    assert cpu.holder_s >= 0.5  # its busy thread's 0.6 s (the timed thread slept)
    assert cpu.line_s >= 1.0  # the two workers' 1.2 s (10 ms ticks, and a start of each inside)


def test_a_window_s_counts_never_go_negative() -> None:
    """A process of the set that ends inside the window takes its time away from `own`: clamped, not negative."""
    go = CpuSample(10.0, 1.0, 5.0, 2.0)
    assert CpuSample(10.5, 1.0, 6.0, 1.5).since(go, 0.3) == WindowCpu(0.3, 0.0, 0.0, 0.0)
    assert CpuSample(12.0, 1.5, 5.5, 2.5).since(go, 0.3) == WindowCpu(0.3, 1.5, 0.5, 0.5)
    line = CpuSample(10.0, 1.0, 5.0, 2.0, holder_s=1.0, line_s=3.0)
    assert CpuSample(10.0, 1.0, 5.0, 2.0, 1.25, 2.0).since(line, 0.3) == WindowCpu(0.3, 0.0, 0.0, 0.0, 0.25, 0.0)


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
