"""Tests of benchmarks/config_timing.py: which kernels differ between two processes' launches, how often a wrapper
launches each, and that a kernel that cannot be timed is reported while the rest go on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import config_timing

A, B = "XBLOCK: 512, num_warps: 8", "XBLOCK: 1024, num_warps: 4"


def _calls(ours: dict[str, str], bare: dict[str, str]) -> dict[str, dict[str, dict[str, dict[str, object]]]]:
    def side(configs: dict[str, str]) -> dict[str, dict[str, dict[str, object]]]:
        return {
            "kernels": {
                f"{k}@c{k}.py": {"kernel": k, "source": f"c{k}.py", "config": c, "tuning": "cached", "configs": 2}
                for k, c in configs.items()
            }
        }

    return {"reportgen": side(ours), "bare": side(bare)}


def test_only_kernels_both_sides_ran_with_other_configs_differ() -> None:
    calls = _calls({"k1": A, "k2": A, "k3": A}, {"k1": A, "k2": B})  # k3: the bare side never ran it
    assert config_timing.differing(calls) == [("k2", "ck2.py", A, B)]


def test_launches_are_counted_in_wrappers_not_in_the_kernels_own_harness(tmp_path: Path) -> None:
    (tmp_path / "ck2.py").write_text("def call(args):\n    k2.run(*args)\n")  # its own harness: not a launch
    (tmp_path / "cfwd.py").write_text("k2.run(a)\nk1.run(b)\nk2.run(c)\n")
    (tmp_path / "cbwd.py").write_text("k2.run(d)\n")
    modules = sorted(tmp_path.glob("c*.py"))
    assert config_timing.launches_per_step("k2", "ck2.py", modules) == 2
    assert config_timing.launches_per_step("k9", "ck9.py", modules) == 0


def test_a_kernel_that_cannot_be_timed_is_reported_and_the_json_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache" / "ab"
    cache.mkdir(parents=True)
    (cache / "ck2.py").write_text("raise RuntimeError('no device here')\n")
    (cache / "cwrapper.py").write_text("k2.run(a)\nk2.run(b)\n")
    calls, out = tmp_path / "calls.json", tmp_path / "out.json"
    calls.write_text(json.dumps(_calls({"k2": A}, {"k2": B})))
    assert config_timing.main([str(calls), str(tmp_path / "cache"), "--rounds", "1", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["kernels"]
    assert row["launches"] == 2 and row["reportgen"] == A and row["bare"] == B
    assert row["error"] == "RuntimeError: no device here" and "reportgen_ms" not in row
    assert "0 of 1 differing kernels timed" in capsys.readouterr().out
