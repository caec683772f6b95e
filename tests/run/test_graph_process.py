"""The graph-timing process is started without Inductor's compile workers (it loads the run's cached kernels)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from reportgen.run.graph_process import RESULT_FILE, time_graphs_in_fresh_process


def test_the_graph_process_starts_no_compile_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the run's own `TORCHINDUCTOR_COMPILE_THREADS`, the process sees 1 (with 16, Inductor started a pool
    of 16 workers for kernels that were all in the cache: 16.6-19.9 s a process against 10.5-13.4 s)."""
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "16")
    seen = tmp_path / "seen"
    python = tmp_path / "python"  # stands in for the interpreter: records what it was given, writes no benchmark
    python.write_text(
        f'#!/bin/sh\necho "$TORCHINDUCTOR_COMPILE_THREADS $2 $3 $4" > {seen}\necho "[]" > "$3/{RESULT_FILE}"\n'
    )
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    assert time_graphs_in_fresh_process([], tmp_path, "cuda", str(python)) == []
    assert seen.read_text().split() == ["1", "reportgen.run.graph_process", str(tmp_path), "cuda"]
    assert os.environ["TORCHINDUCTOR_COMPILE_THREADS"] == "16"  # (the run's own is left as it was)
