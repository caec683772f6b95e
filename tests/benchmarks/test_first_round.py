"""Tests of benchmarks/first_round.py: which comparisons had a bare loop that compiled in its timed process (a
sitting's first round in a cache, unless the sitting warmed the bare loop up), and the file of the others, which
`timing_fidelity.py --report` reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import first_round
import timing_fidelity


def _record(number: int, machine: str, compiled: list[float], bare_compiled: list[float]) -> dict[str, object]:
    run = {"round": number, "path": f"/w/{machine}/{number}", "wall_s": 100.0 + number, "eager_ms": 10.0}
    run |= {"compiled_ms": 5.0, "host_probe_ms": [1.0], "compile_s": None, "inductor_cache": "kept-warm"}
    run |= {"graphs": [], "sitting": machine, "eager_samples_ms": [10.0] * len(compiled)}
    run["compiled_samples_ms"] = compiled
    bare = {"index": number, "wall_s": 90.0, "device": "cuda", "eager_ms": 10.0, "compiled_ms": 5.0}
    bare |= {"eager_samples_ms": [10.0] * len(bare_compiled), "compiled_samples_ms": bare_compiled}
    bare["host_probe_ms"] = [1.0]
    return {"run": run, "bare": bare}


def _file(path: Path, records: list[dict[str, object]], warmup: dict[str, object]) -> Path:
    data = {"recipe": "/x/.fidelity-r-60-steps-1.yaml", "variant": None, "work": "w", "device": "cuda"}
    data |= {"warmup": warmup, "runs": [r["run"] for r in records], "bares": [r["bare"] for r in records]}
    path.write_text(json.dumps(data))
    return path


def test_the_first_round_of_each_machine_compiled_unless_the_sitting_warmed_the_bare_loop(tmp_path: Path) -> None:
    # machine a: 2 rounds of 2; b: 1 round of 2; a sitting with a bare warm-up: none compiled
    old = [_record(n, "a", [9.8, 9.9, 10.0], [10.0] * 3) for n in (1, 2, 3, 4)]
    old += [_record(n, "b", [10.0, 10.3], [10.0, 10.0]) for n in (1, 2)]
    older = _file(tmp_path / "old.json", old, {"wall_s": 60.0})
    new = _file(tmp_path / "new.json", [_record(n, "c", [10.2], [10.0]) for n in (1, 2)], {"bare_cache": {}})
    found = [c for path in (older, new) for c in first_round.comparisons(path, groups=2)]
    assert [(c.machine, c.bare_compiled) for c in found] == [
        ("a", True),
        ("a", True),
        ("a", False),
        ("a", False),
        ("b", True),
        ("b", True),
        ("c", False),
        ("c", False),
    ]
    # median of 9.8/10, 9.9/10, 10/10 - 1 is -1 %; of 10/10 and 10.3/10 - 1 it is +1.5 %
    assert [round(c.medians["compiled_ms"], 6) for c in found[3:6]] == [-1.0, 1.5, 1.5]
    out = tmp_path / "warm.json"
    first_round.warm_file(found, out)
    pooled = timing_fidelity.reread([out], 3.0, 3.0)  # the file reads back as one sitting of the four comparisons
    assert [(run.sitting, run.round) for run in pooled.runs] == [("a", 3), ("a", 4), ("c", 1), ("c", 2)]
    assert [bare.compiled_samples_ms for bare in pooled.bares] == [[10.0] * 3, [10.0] * 3, [10.0], [10.0]]


def test_a_comparison_without_both_sides_blocks_is_left_out(tmp_path: Path) -> None:
    path = _file(tmp_path / "s.json", [_record(1, "a", [], [10.0]), _record(2, "a", [10.0], [10.0])], {})
    (only,) = first_round.comparisons(path, groups=1)
    assert (only.index, only.bare_compiled) == (1, False)  # the machine's second: its first round was the first


def test_the_summary_needs_two_values_and_the_file_one_comparison(tmp_path: Path) -> None:
    assert first_round.summary([], "compiled_ms") == "n 0"
    path = _file(tmp_path / "s.json", [_record(1, "a", [10.0], [10.0])], {})
    with pytest.raises(SystemExit, match="every comparison's bare loop compiled"):
        first_round.warm_file(list(first_round.comparisons(path, groups=3)), tmp_path / "warm.json")
    assert not (tmp_path / "warm.json").exists()


def test_a_files_machine_tag_reaches_the_terminal_on_one_escaped_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path / "s.json", [_record(1, "evil\n\x1b[2Jtag", [10.0], [10.0])], {})
    monkeypatch.setattr(sys, "argv", ["first_round.py", str(path)])
    assert first_round.main() == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\n" not in out
    assert out.splitlines()[0].startswith("evil") and "tag (" in out.splitlines()[0]


def test_by_seeded_splits_the_rounds_with_a_fresh_p_from_those_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [_record(n, "a", [10.4, 10.4], [10.0, 10.0]) for n in (1, 2)]  # +4 % each, a -p in their round
    for record, code in zip(records, (0, 1), strict=True):  # the second's -p failed: it ran all the same
        record["run"]["graphs"] = [{"graph": 0, "seed_exit_code": code}]  # type: ignore[index]
    records += [_record(n, "a", [10.0, 10.1], [10.0, 10.0]) for n in (3, 4)]  # +0.5 % each (median of 0 and 1 %)
    path = _file(tmp_path / "s.json", records, {"bare_cache": {}})
    assert [c.seeded for c in first_round.comparisons(path, groups=2)] == [True, True, False, False]
    monkeypatch.setattr(sys, "argv", ["first_round.py", str(path), "--by", "seeded"])
    assert first_round.main() == 0
    out = capsys.readouterr().out
    assert "compiled, with -p: +4.0 +4.0; without: +0.5 +0.5" in out
    assert "compiled, rounds with fresh -p processes: n 2, mean +4.00 % (SE 0.00)" in out
    assert "compiled, rounds without: n 2, mean +0.50 % (SE 0.00)" in out


def test_within_machines_takes_each_machines_own_difference_then_their_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Machine a reads +4 % with -p and 0 without, b +1 and -1 (its own offset is -2): the differences are +4 and
    +2, their mean +3 with t(1) = 12.706 times SD sqrt(2) / sqrt(2) = 12.706 either side. Machine c has one part
    only and is left out. The step windows' CPU beside each side is summed per part."""
    records = []
    for n, (machine, ratio, seeded) in enumerate(
        [("a", 1.04, True), ("a", 1.0, False), ("b", 1.01, True), ("b", 0.99, False), ("c", 1.02, True)], start=1
    ):
        record = _record(n, machine, [10.0 * ratio] * 2, [10.0, 10.0])
        if seeded:
            record["run"]["graphs"] = [{"graph": 0, "seed_exit_code": 0}]  # type: ignore[index]
        beside = {"reportgen": 0.05 if seeded else 0.01, "bare": 0.01}  # others' CPU s in 1 s of step windows
        cpu = {role: {"windows": 2, "open_s": 1.0, "others_s": s, "runs_s": 0.0} for role, s in beside.items()}
        cpu["reportgen"] |= {"holder_s": 1.01, "line_s": 0.02}  # the bare loop's file is as one from before them
        record["run"]["windows"] = {"steps_cpu": cpu}  # type: ignore[index]
        records.append(record)
    found = list(first_round.comparisons(_file(tmp_path / "s.json", records, {"bare_cache": {}}), groups=1))
    assert first_round.within_machines(found, "compiled_ms", "seeded") == (
        "machines 2 (+4.00 +2.00), mean +3.00 % [-9.71, +15.71]"
    )
    assert first_round.within_machines(found[:2], "compiled_ms", "seeded") == "machines 1"
    seeded = [c for c in found if c.seeded]  # three comparisons, 3 s of each side's step windows
    assert first_round.beside_steps(seeded) == (
        "bare others 10.0 ms/s (runs 0.0), own 0 ms/s, line 0.0 ms/s; "
        "reportgen others 50.0 ms/s (runs 0.0), own 1010 ms/s, line 20.0 ms/s"
    )
    assert first_round.beside_steps([]) == "not kept"


def test_cluster_pairs_rounds_of_one_machine_by_their_files_names(tmp_path: Path) -> None:
    """One machine's rounds in turn, with -p and without: `--cluster 'pair(\\d+)-'` makes each pair of files a
    machine of its own, so the within-machine difference is taken pair by pair."""
    import re

    files = []
    for pair, (with_p, without) in enumerate([(1.03, 1.0), (1.0, 0.99)], start=1):
        for seeds, ratio in ((1, with_p), (0, without)):
            record = _record(1, "boot-same", [10.0 * ratio] * 2, [10.0, 10.0])
            if seeds:
                record["run"]["graphs"] = [{"graph": 0, "seed_exit_code": 0}]  # type: ignore[index]
            files.append(_file(tmp_path / f"pair{pair}-seeds{seeds}.json", [record], {"bare_cache": {}}))
    found = [c for f in files for c in first_round.comparisons(f, 2, re.compile(r"pair(\d+)-"))]
    assert [c.machine for c in found] == ["1", "1", "2", "2"]
    assert first_round.within_machines(found, "compiled_ms", "seeded").startswith(
        "machines 2 (+3.00 +1.00), mean +2.00"
    )
    assert {c.machine for f in files for c in first_round.comparisons(f, 2)} == {"boot-same"}
