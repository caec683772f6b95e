"""Tests of benchmarks/timing_fidelity.py (and its fidelity_* modules): a fresh `-p` that fails says why, and the sitting's file keeps it."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import fidelity_children
import timing_fidelity
from fidelity_records import GraphSide, Sitting

OOM = "Traceback (most recent call last):\n  ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n\n"
TIMINGS = fidelity_children.SEED_REPS_PREFIX + json.dumps([1.5, 1.4, 1.6]) + "\n"


def test_a_failed_p_prints_its_last_line_and_keeps_its_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    side = GraphSide(1)
    fidelity_children.seed_result(side, 0, 0, TIMINGS, 300.0)
    fidelity_children.seed_result(side, 1, 1, "$ python wrapper.py -p\n" + OOM, 380.0)
    logs = {"seed 1": tmp_path / "seed-1.log", "seed 1#1": tmp_path / "seed-1#1.log"}
    fidelity_children.report_failed_seeds(3, [side], logs)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"comparison 3: -p 'seed 1#1' exited 1 after 380 s (0 timings; log {logs['seed 1#1']}): "
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    ]
    assert side.seed_error is None and side.seed_reps_ms == [1.5, 1.4, 1.6]
    assert side.more_seeds[0].error is not None and side.more_seeds[0].error.endswith(OOM)


def test_a_failed_p_keeps_no_secret_and_prints_no_control_character(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyz0123")
    side = GraphSide(0)
    output = "connecting with hf_abcdefghijklmnopqrstuvwxyz0123\n\x1b[31mRuntimeError: boom\x1b[0m\n"
    fidelity_children.seed_result(side, 0, 1, output, 1.0)
    fidelity_children.report_failed_seeds(1, [side], {})
    assert side.seed_error is not None and "hf_abcdef" not in side.seed_error and "[redacted]" in side.seed_error
    out = capsys.readouterr().out
    assert "\x1b" not in out and out.rstrip().endswith("\\x1b[31mRuntimeError: boom\\x1b[0m")


def test_the_error_survives_the_sittings_file(tmp_path: Path) -> None:
    side = GraphSide(0)
    fidelity_children.seed_result(side, 0, 1, OOM, 12.0)
    fidelity_children.seed_result(side, 1, 1, OOM, 13.0)
    run = {"round": 1, "path": "p", "wall_s": 1.0, "eager_ms": 2.0, "compiled_ms": 1.0, "host_probe_ms": [1.0]}
    run |= {"compile_s": None, "inductor_cache": "kept-warm", "graphs": [dataclasses.asdict(side)]}
    path = tmp_path / "sitting.json"
    path.write_text(json.dumps({"recipe": "r.yaml", "variant": None, "device": "cpu", "bares": [], "runs": [run]}))
    sitting = Sitting(recipe="r.yaml", variant=None, work="w", tolerance_pct=3.0, tolerance_pp=3.0)
    timing_fidelity.continue_from(sitting, path)
    (read,) = sitting.runs[0].graphs
    assert [seed.error for seed in read.seeds] == [OOM, OOM]
