"""The graph-timing process: started without Inductor's compile workers (it loads the run's cached kernels), early
(it waits for the run's request), and never left behind."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reportgen.bundle import GRAPHS_DIR
from reportgen.run import graph_process, window
from reportgen.run.graph_process import RESULT_FILE, WAIT_FLAG, GraphTimer


def test_the_graph_process_starts_no_compile_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the run's own `TORCHINDUCTOR_COMPILE_THREADS`, the process sees 1 (with 16, Inductor started a pool
    of 16 workers for kernels that were all in the cache: 16.6-19.9 s a process against 10.5-13.4 s)."""
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "16")
    seen = tmp_path / "seen"
    python = tmp_path / "python"  # stands in for the interpreter: records what it was given, writes no benchmark
    python.write_text(
        f'#!/bin/sh\necho "$TORCHINDUCTOR_COMPILE_THREADS $2 $3 $4 $5" > {seen}\necho "[]" > "$3/{RESULT_FILE}"\n'
    )
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    timer = GraphTimer(tmp_path, "cuda", str(python))
    try:
        assert timer.time([]) == []
    finally:
        timer.close()
    assert seen.read_text().split() == ["1", "reportgen.run.graph_process", str(tmp_path), "cuda", WAIT_FLAG]
    assert os.environ["TORCHINDUCTOR_COMPILE_THREADS"] == "16"  # (the run's own is left as it was)


def test_a_waiting_process_the_run_never_asks_exits_without_a_result(tmp_path: Path) -> None:
    """The real process, started early: ready (torch and Inductor imported), then its stdin closes with no request
    (the run failed before its captures): it exits 0, leaving nothing."""
    command = [sys.executable, "-m", "reportgen.run.graph_process", str(tmp_path), "cpu", WAIT_FLAG]
    process = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=120) == 0
    assert list(tmp_path.iterdir()) == []


def test_a_timer_closed_unasked_ends_its_process_and_leaves_no_folder(tmp_path: Path) -> None:
    python = tmp_path / "python"  # stands in for the interpreter: waits for ever, as a process never asked would
    python.write_text("#!/bin/sh\nexec sleep 600\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    started = time.monotonic()
    timer = GraphTimer(bundle, "cpu", str(python))
    assert (bundle / GRAPHS_DIR).is_dir()
    timer.close()
    assert time.monotonic() - started < 10 and list(bundle.iterdir()) == []


def test_the_request_carries_the_timed_window_variables_of_that_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The timing lock is taken after the process started: the request line sets it, and drops what is unset."""
    monkeypatch.setenv(window.ROLE_VARIABLE, "stale")
    monkeypatch.setenv(window.LOCK_VARIABLE, "")  # recorded, so the value the request sets is undone after
    monkeypatch.delenv(window.LOCK_VARIABLE)
    line = json.dumps({window.LOCK_VARIABLE: "/tmp/host/timing.lock", window.ROLE_VARIABLE: None})
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    assert graph_process._wait_for_request()
    assert os.environ[window.LOCK_VARIABLE] == "/tmp/host/timing.lock" and window.ROLE_VARIABLE not in os.environ
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert not graph_process._wait_for_request()
