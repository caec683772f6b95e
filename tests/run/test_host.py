"""A run's child among the host's other runs: its cores, the timing lock, and what it records of the others."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
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


MEASURE = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from reportgen.run import window
    from reportgen.run.host import HostPlacement, Measurements, apply_placement
    placement = HostPlacement(name=sys.argv[2], timing_lock=True, host_dir=sys.argv[1])
    run = Measurements(placement, apply_placement(placement))
    spans = []
    with run.measuring(lambda line: None):
        # both processes measure at once: start the windows only when the other run is here too (a loaded
        # machine may take longer to start the second interpreter than the first takes to finish)
        here = Path(sys.argv[1]) / f"ready-{sys.argv[2]}"
        here.touch()
        deadline = time.monotonic() + 30
        while len(list(Path(sys.argv[1]).glob("ready-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(3):
            with window.timed_window("steps"):
                began = time.time()
                time.sleep(0.2)
                spans.append((began, time.time()))
            time.sleep(0.15)  # untimed work between windows: holds nothing (long enough for the other to wake)
        with window.timed_window("compile benchmark", gpu_only=True):  # takes its turn too, counted apart
            began = time.time()
            time.sleep(0.5)
            spans.append((began, time.time()))
    print(json.dumps({"spans": spans, "isolation": run.isolation.model_dump(mode="json")}))
    """
)


def test_runs_take_turns_window_by_window_under_the_timing_lock(tmp_path: Path) -> None:
    """Two runs (real processes) measure at once: each timed window holds the host's lock, so no two windows
    overlap, while their measuring phases do (the lock is not held between windows); a GPU-only window takes
    the lock too and is counted apart."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MEASURE, str(tmp_path), name], env=env, stdout=subprocess.PIPE, text=True
        )
        for name in ("first", "second")
    ]
    found = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    spans = sorted(tuple(span) for run in found for span in run["spans"])
    assert len(spans) == 8
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans)), spans
    owners = [next(i for i, run in enumerate(found) if list(span) in run["spans"]) for span in spans]
    assert owners != sorted(owners), "the windows did not interleave: a whole phase held the lock"
    for run in found:
        isolation = run["isolation"]
        assert isolation["timing_lock"] and isolation["windows"] == 3 and 0.6 <= isolation["window_s"] < 1.0
        assert isolation["gpu_windows"] == 1 and isolation["gpu_window_s"] >= 0.5
        assert not isolation["coordinated"] and isolation["paused"] == {}
    assert max(run["isolation"]["window_wait_s"] for run in found) >= 0.1  # one of them waited for the other


def test_what_overlapped_the_measurements_is_recorded(tmp_path: Path) -> None:
    """Without the lock, a run that measured and one that compiled meanwhile are both named, with their phase."""
    with subprocess.Popen(["sleep", "60"]) as sleeper:  # pids of live processes: these runs are under way
        compiling = _other(tmp_path, "compiling", 1, lock=False)
        measuring = _other(tmp_path, "measuring", sleeper.pid, lock=False)
        measuring.enter("measuring")
        run = Measurements(_placement(tmp_path, "run", False), apply_placement(_placement(tmp_path, "run", False)))
        with run.measuring(print):
            time.sleep(0.05)
        sleeper.kill()
    assert sorted((c.name, c.pid, c.phases) for c in run.isolation.concurrent) == [
        ("compiling", 1, ["preparing"]),
        ("measuring", sleeper.pid, ["measuring"]),
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
