"""A run's child among the host's other runs: its cores, the timing lock, and what it records of the others."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from reportgen.run.host import ACTIVITY_DIR, HostPlacement, Measurements, apply_placement, end_activity

__all__: list[str] = []


def _placement(tmp_path: Path, name: str, lock: bool = True) -> HostPlacement:
    return HostPlacement(name=name, timing_lock=lock, host_dir=str(tmp_path))


def _other(tmp_path: Path, name: str, pid: int, lock: bool) -> Measurements:
    """A run standing in for another process's (its activity file says pid `pid`)."""
    run = Measurements(_placement(tmp_path, name, lock), apply_placement(_placement(tmp_path, name, lock)))
    (tmp_path / ACTIVITY_DIR / f"{os.getpid()}.json").rename(tmp_path / ACTIVITY_DIR / f"{pid}.json")
    run.record.pid, run.path = pid, tmp_path / ACTIVITY_DIR / f"{pid}.json"
    run.enter("preparing")  # rewritten with its pid
    return run


def test_measurements_take_turns_under_the_timing_lock(tmp_path: Path) -> None:
    """Two runs (a thread stands in for the other child) measure at once: the second waits for the first, and
    nothing else measured during its own measurements."""
    first = _other(tmp_path, "first", 1, lock=True)
    second = Measurements(_placement(tmp_path, "second"), apply_placement(_placement(tmp_path, "second")))
    windows: dict[str, float] = {}
    inside = threading.Event()

    def measure_first() -> None:
        with first.measuring(print):
            inside.set()
            time.sleep(0.5)
            windows["first ended"] = time.monotonic()

    thread = threading.Thread(target=measure_first)
    thread.start()
    inside.wait(5)
    with second.measuring(print):
        windows["second began"] = time.monotonic()
    thread.join()
    assert windows["second began"] >= windows["first ended"]
    assert second.isolation.timing_lock and second.isolation.lock_wait_s >= 0.3
    assert second.isolation.concurrent == [] and second.isolation.measured_alone
    assert first.isolation.lock_wait_s < 0.3


def test_what_overlapped_the_measurements_is_recorded(tmp_path: Path) -> None:
    """Without the lock, a run that measured and one that compiled meanwhile are both named, with their phase."""
    compiling = _other(tmp_path, "compiling", 1, lock=False)  # pids of live processes: these runs are under way
    measuring = _other(tmp_path, "measuring", os.getppid(), lock=False)
    measuring.enter("measuring")
    run = Measurements(_placement(tmp_path, "run", False), apply_placement(_placement(tmp_path, "run", False)))
    with run.measuring(print):
        time.sleep(0.05)
    assert sorted((c.name, c.pid, c.phases) for c in run.isolation.concurrent) == [
        ("compiling", 1, ["preparing"]),
        ("measuring", os.getppid(), ["measuring"]),
    ]
    assert not run.isolation.measured_alone and not run.isolation.timing_lock
    assert compiling.isolation.concurrent == []


def test_a_run_ended_by_its_launcher_stops_counting(tmp_path: Path) -> None:
    gone = tmp_path / ACTIVITY_DIR / "123456789.json"
    gone.parent.mkdir()
    gone.write_text(json.dumps({"name": "killed", "pid": 123456789, "phases": [["preparing", time.time() - 60]]}))
    end_activity(tmp_path, 123456789)
    phases = json.loads(gone.read_text())["phases"]
    assert [p[0] for p in phases] == ["preparing", "done"]
    run = Measurements(_placement(tmp_path, "later", lock=False), apply_placement(_placement(tmp_path, "later")))
    with run.measuring(print):
        pass
    assert run.isolation.concurrent == [] and not run.isolation.timing_lock


def test_the_child_keeps_to_its_cores(tmp_path: Path) -> None:
    core = min(os.sched_getaffinity(0))
    seen: list[object] = []

    def child() -> None:  # a thread: pinning it leaves the test process as it was
        isolation = apply_placement(HostPlacement(name="pinned", cpus=[core], host_dir=str(tmp_path)))
        seen.extend([isolation.cpus, os.sched_getaffinity(0)])

    thread = threading.Thread(target=child)
    thread.start()
    thread.join()
    assert seen == [[core], {core}]
