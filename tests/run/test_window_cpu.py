"""A coordinator that names a CPU: every window's thread runs there alone, and gets its CPUs back after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reportgen.run import window
from reportgen.run.window_host import Coordinator, Turns

ROOT = Path(__file__).resolve().parents[2]

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="pinning is only visible with two CPUs or more")

CLIENT = textwrap.dedent(
    """
    import json, os, sys, threading, time
    from reportgen.run import window
    window.connect()
    seen = []
    for what in sys.argv[1:]:
        with window.timed_window(what):
            started = threading.Thread(target=time.sleep, args=(2.0,))  # a thread born inside the window
            started.start()
            seen.append({"inside": sorted(os.sched_getaffinity(0)), "at": time.monotonic()})
        seen[-1]["after"] = sorted(os.sched_getaffinity(0))
        seen[-1]["thread_after"] = sorted(os.sched_getaffinity(started.native_id))
    print(json.dumps({"seen": seen, "cpu": window.log().cpu, "notes": window.log().notes}))
    """
)


def _client(coordinator: Coordinator, role: str, *windows: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.update({window.SOCKET_VARIABLE: coordinator.path, window.ROLE_VARIABLE: role})
    return subprocess.Popen([sys.executable, "-c", CLIENT, *windows], env=env, stdout=subprocess.PIPE, text=True)


@needs_two_cpus
def test_paired_processes_time_on_the_named_cpu_and_get_their_cpus_back() -> None:
    cpu = CPUS[-1]
    with Coordinator(Turns(("bare", "reportgen")), settle_s=0.0, pause=False, cpu=cpu) as coordinator:
        clients = [_client(coordinator, role, "steps", "steps") for role in ("bare", "reportgen")]
        outs = [json.loads(p.communicate(timeout=60)[0]) for p in clients]
        order = [role for role, _, _, _ in coordinator.granted]
    assert order == ["bare", "reportgen", "bare", "reportgen"]  # the pairs took turns
    for out in outs:
        assert out["cpu"] == cpu and out["notes"] == []
        for window_seen in out["seen"]:
            assert window_seen["inside"] == [cpu]  # both sides of every pair on the same CPU
            assert window_seen["after"] == CPUS  # and the thread's own CPUs back after the window
            assert window_seen["thread_after"] == CPUS  # a thread started inside inherited the pin: undone


@needs_two_cpus
def test_without_a_cpu_the_windows_stay_where_the_scheduler_puts_them() -> None:
    with Coordinator(settle_s=0.0, pause=False) as coordinator:
        out = json.loads(_client(coordinator, "reportgen", "steps").communicate(timeout=60)[0])
    assert out["cpu"] is None and out["seen"][0]["inside"] == CPUS


def test_a_cpu_the_process_may_not_use_is_noted_not_pinned() -> None:
    before = os.sched_getaffinity(0)
    notes = len(window.log().notes)
    with window.pinned(max(before) + 1000):
        assert os.sched_getaffinity(0) == before
    assert any("not among" in note for note in window.log().notes[notes:])


def test_a_child_process_s_cpu_reaches_the_parent_s_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(window, "_LOG", window.WindowLog())
    child = tmp_path / "windows.json"
    child.write_text(json.dumps({"windows": 3, "cpu": 5}), encoding="utf-8")  # as the graph-timing process dumps it
    window.merge_log(child)
    assert window.log().cpu == 5 and window.log().windows == 3
    child.write_text(json.dumps({"windows": 1, "cpu": True}), encoding="utf-8")  # not a CPU: ignored
    window.merge_log(child)
    assert window.log().cpu == 5 and window.log().windows == 4
