"""Tests of benchmarks/timing_fidelity.py (and its fidelity_* modules): a fresh `-p` that fails says why, and the
sitting's file keeps it; step figures pair block by block, and pairs are judged by comparison; two sittings share
a tree."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import fidelity_children
import fidelity_records
import fidelity_report
import fidelity_stats
import timing_fidelity
from fidelity_records import Bare, GraphSide, Run, Sitting

from reportgen.bundle import KernelLaunch

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


def _comparison(number: int, ours: list[tuple[float, float]], theirs: list[tuple[float, float]]) -> tuple[Run, Bare]:
    """A comparison whose reportgen and bare loop timed these (eager, compiled) blocks, in order."""
    run = Run(number, "p", 1.0, 1.0, 1.0, [1.0], None, "kept-warm")
    run.eager_samples_ms, run.compiled_samples_ms = [e for e, _ in ours], [c for _, c in ours]
    bare = Bare(number, 1.0, "cpu", 1.0, 1.0, [e for e, _ in theirs], [c for _, c in theirs], [1.0])
    return run, bare


def _sitting(*comparisons: tuple[Run, Bare]) -> Sitting:
    sitting = Sitting(recipe="r.yaml", variant=None, work="w", tolerance_pct=3.0, tolerance_pp=3.0)
    for run, bare in comparisons:
        sitting.runs.append(run)
        sitting.bares.append(bare)
    fidelity_report.update_pooled(sitting, 3.0, 3.0)
    return sitting


def test_step_figures_pair_each_block_with_the_bare_loops_block_of_the_same_turn() -> None:
    first = _comparison(1, [(11.0, 5.0), (30.0, 12.0)], [(10.0, 5.0), (20.0, 10.0)])
    older = _comparison(2, [], [(10.0, 5.0)])  # a sitting from before reportgen's blocks were kept
    last = _comparison(3, [(9.0, 6.0)], [(10.0, 5.0)])
    torn = _comparison(4, [(9.0, 6.0)], [(10.0, 5.0)])
    torn[0].compiled_samples_ms.append(6.0)  # a file that disagrees with itself pairs nothing
    groups = fidelity_report.paired_step_differences(_sitting(first, older, last, torn))
    assert groups["eager_ms"] == [pytest.approx([10.0, 50.0]), [], pytest.approx([-10.0]), []]
    assert groups["compiled_ms"] == [pytest.approx([0.0, 20.0]), [], pytest.approx([20.0]), []]
    # speedup: 11/5 against 10/5, 30/12 against 20/10, 9/6 against 10/5
    assert groups["speedup"] == [pytest.approx([10.0, 25.0]), [], pytest.approx([-25.0]), []]


def _offsets(per_comparison: list[list[float]]) -> Sitting:
    """Comparisons whose eager blocks read these % over the bare loop's (compiled blocks equal)."""
    return _sitting(
        *(
            _comparison(n, [(10.0 * (1 + d / 100), 5.0) for d in pairs], [(10.0, 5.0)] * len(pairs))
            for n, pairs in enumerate(per_comparison, 1)
        )
    )


def test_pairs_are_judged_by_comparison_not_as_independent_draws() -> None:
    """Comparisons offset ±4 %, tight within: every pair pooled as independent would read inside ±3 %; pooled by
    comparison they cannot decide. Pairs spread as widely but alike in every comparison: inside."""
    jitter = [0.01 * k for k in range(12)]
    apart = _offsets([[sign * 4 + j for j in jitter] for sign in (1, -1, 1, -1, 1, -1)])
    every = [v for v in apart.pooled["eager_ms paired"].values if v is not None]
    assert fidelity_stats.pool(list(every), 3.0).verdict == "inside"  # what pooling pairs as independent says
    assert fidelity_report.judged(apart, "eager_ms") is apart.pooled["eager_ms paired"]
    assert "eager_ms" in fidelity_report.undecided(apart)
    alike = _offsets([[-4 + 8 * k / 11 for k in range(12)] for _ in range(6)])
    assert fidelity_report.undecided(alike) == []
    assert "eager_ms" in fidelity_report.undecided(_offsets([list(jitter)] * 5))  # five comparisons: too few
    alike.pooled["graph 0 busy"] = apart.pooled["eager_ms paired"]  # an undecided busy figure …
    assert fidelity_report.undecided(alike) == ["graph 0 busy"]
    assert fidelity_report.undecided(alike, busy=False) == []  # … that a sitting without -p does not wait for


def test_a_file_that_continued_another_is_not_pooled_with_it_twice(tmp_path: Path) -> None:
    def record(number: int, wall_s: float) -> dict[str, object]:
        run, bare = _comparison(number, [(10.0, 5.0)], [(10.0, 5.0)])
        run.path, run.wall_s = f"/w/results/{number}", wall_s
        return {"run": dataclasses.asdict(run), "bare": dataclasses.asdict(bare)}

    def sitting_file(name: str, *records: dict[str, object]) -> Path:
        path = tmp_path / name
        data = {"recipe": "r.yaml", "variant": None, "work": "w", "device": "cuda"}
        data |= {"runs": [r["run"] for r in records], "bares": [r["bare"] for r in records]}
        path.write_text(json.dumps(data))
        return path

    first, second, other = record(1, 600.0), record(2, 610.0), record(1, 605.0)
    earlier, later = sitting_file("a.json", first), sitting_file("b.json", first, second)
    assert len(timing_fidelity.reread([later], 3.0, 3.0).runs) == 2
    assert len(timing_fidelity.reread([earlier, sitting_file("c.json", other)], 3.0, 3.0).runs) == 2
    with pytest.raises(SystemExit, match=r"b\.json: comparison 1 \(/w/results/1\) is pooled already"):
        timing_fidelity.reread([earlier, later], 3.0, 3.0)


def test_two_sittings_in_one_tree_each_keep_their_own_steps_copy(tmp_path: Path) -> None:
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text("name: tiny\nmodel: {factory: 'torch.nn:Identity'}\nprofile: {steps: 5}\n", encoding="utf-8")
    other = (
        "import sys; sys.path.insert(0, sys.argv[1]); import timing_fidelity as t; from pathlib import Path\n"
        "with t.recipe_with_steps(Path(sys.argv[2]), 7) as copy: print(copy)\n"
    )
    benchmarks = str(Path(timing_fidelity.__file__).parent)
    with timing_fidelity.recipe_with_steps(recipe, 9) as ours:
        done = subprocess.run([sys.executable, "-c", other, benchmarks, str(recipe)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        theirs = Path(done.stdout.strip())
        assert theirs.parent == ours.parent and theirs != ours and not theirs.exists()
        assert "steps: 9" in ours.read_text(encoding="utf-8")  # the other sitting's exit left ours in place
    assert not ours.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["tiny.yaml"]


def test_seeds_zero_starts_no_p_and_one_or_more_is_capped_by_reportgens_rounds() -> None:
    warm = types.SimpleNamespace(graphs=[types.SimpleNamespace(unprofiled_reps_ms=[[1.0]] * 3)])
    assert [timing_fidelity.seeds_per_graph(warm, n) for n in (0, 1, 3, 5)] == [0, 1, 3, 3]  # type: ignore[arg-type]


def test_without_p_no_window_waits_for_a_partner() -> None:
    """`--seeds 0` once left reportgen's graph profile paired with a `-p` that never came: a CPU sitting's runs
    waited 12 min for it (`partner_wait_s`)."""
    graphs = [types.SimpleNamespace(graph=g, unprofiled_reps_ms=[[1.0, 1.1]] * 3) for g in (0, 1)]
    warm = types.SimpleNamespace(graphs=graphs)
    assert timing_fidelity._group_policy(warm, swapped=False, seeds=0).pairs == []  # type: ignore[arg-type]
    paired = timing_fidelity._group_policy(warm, swapped=False, seeds=1).pairs  # type: ignore[arg-type]
    assert len(paired) == 2 * (2 + 1) and all(a[0].startswith("seed") and b[0] == "reportgen" for a, b in paired)


def test_a_sitting_continues_one_of_the_same_recipe_and_steps_whichever_process_copied_it() -> None:
    key = timing_fidelity.recipe_key
    assert key("/w/recipes/.fidelity-resnet50-60-steps-8841.yaml") == ".fidelity-resnet50-60-steps.yaml"
    assert key("/tmp/work/recipes/.fidelity-resnet50-60-steps.yaml") == ".fidelity-resnet50-60-steps.yaml"
    assert key("recipes/.fidelity-resnet50-40-steps-8841.yaml") != key("recipes/.fidelity-resnet50-60-steps-1.yaml")
    assert key("recipes/mixnet_l.yaml") == "mixnet_l.yaml" != key("recipes/.fidelity-mixnet_l-24-steps-7.yaml")


def test_each_comparison_names_its_sitting_and_the_report_groups_them(capsys: pytest.CaptureFixture[str]) -> None:
    sitting = _offsets([[4.0] * 6] * 3 + [[-4.0] * 6] * 3)
    for n, run in enumerate(sitting.runs):
        run.sitting = "boot-a" if n < 3 else "boot-b"
    fidelity_report.update_pooled(sitting, 3.0, 3.0)
    fidelity_report.report(sitting)
    out = capsys.readouterr().out
    assert "by sitting: boot-a (+4.0, +4.0, +4.0); boot-b (-4.0, -4.0, -4.0)" in out
    assert "comparisons' SD within machines 0.00, machines' SD beyond it 5.66 (F — on 1 and 4 df)" in out  # 32 ** 0.5
    assert "(spans both the bootstrap over machines, their comparisons, then pairs [" in out
    assert "] and Student-t over 2 machines' medians [" in out
    tag = fidelity_records.sitting_tag()
    assert re.fullmatch(r"boot-[0-9a-f]{8}|start-\d{8}T\d{6}", tag), tag  # this machine's boot id (else the time)
    assert fidelity_records.sitting_tag() == tag  # two sittings of one machine are one cluster


def test_the_report_says_whether_both_sides_ran_the_same_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    sitting = _offsets([[0.0] * 3] * 3)
    for run, bare in zip(sitting.runs, sitting.bares, strict=True):
        run.kernel_modules, bare.kernel_modules = ["ka.py", "kb.py"], ["ka.py", "kb.py"]
    sitting.bares[2].kernel_modules = ["ka.py", "kc.py", "kd.py"]
    fidelity_report.report(sitting)
    out = capsys.readouterr().out
    assert "the same in 2 of 3 comparisons; comparison 3: 1 only reportgen's, 2 only the bare loop's" in out


def test_the_report_says_whether_both_sides_launched_the_same_configs(capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel tuned in each process on its first call may launch another config in each: the report says where
    and splits the compiled medians by it (comparison 2: +4 %; 3 and 4: -1 % and 0 %; 1 has no launches)."""
    sitting = _offsets([[0.0] * 3] * 4)
    for number, (run, bare) in enumerate(zip(sitting.runs, sitting.bares, strict=True)):
        kernels = [KernelLaunch(kernel="triton_red_fused_0", source="ca.py", config="XBLOCK: 1", tuning="tuned",
                                configs=4),
                   KernelLaunch(kernel="triton_poi_fused_1", source="cb.py", config="XBLOCK: 1024", tuning="cached",
                                configs=2)]  # fmt: skip
        run.launches, bare.launches = (fidelity_records.launch_records(kernels) for _ in range(2))
        bare.compiled_ms, run.compiled_ms = 10.0, 10.0 * (1.01, 1.04, 0.99, 1.0)[number]
    sitting.bares[1].launches["triton_red_fused_0@ca.py"]["config"] = "XBLOCK: 8"
    sitting.runs[0].launches = {}  # a file from before launches were kept: not compared
    sitting.runs[0].compiled_ms = 10.0
    fidelity_report.report(sitting)
    out = capsys.readouterr().out
    assert (
        "launch configs, reportgen's against the bare loop's: the same in 2 of 3 comparisons (kernels tuned in their "
        "own process: 1-1); other configs in #2: 1 of 2 (triton_red_fused_0); the same configs: compiled medians' "
        "ratio - 1 -0.50 % over 2; other configs: compiled medians' ratio - 1 +4.00 % over 1"
    ) in out


def test_until_decided_starts_p_only_for_graphs_whose_busy_is_undecided(tmp_path: Path) -> None:
    """mixnet_l's forward busy was decided after 6 comparisons while its backward was not: a round's forward `-p`
    then cost minutes and 5-7 GiB of GPU memory each (24 processes ran out of it) for no verdict."""
    sitting = _offsets([[-4 + 8 * k / 11 for k in range(12)] for _ in range(6)])
    sitting.pooled["graph 0 busy"] = sitting.pooled["eager_ms paired"]  # inside ±3
    sitting.pooled["graph 1 busy"] = _offsets([[s * 4.0] * 12 for s in (1, -1) * 3]).pooled["eager_ms paired"]
    assert [fidelity_report.decided(sitting, f"graph {g} busy") for g in (0, 1, 2)] == [True, False, False]
    graphs = [types.SimpleNamespace(graph=g, unprofiled_reps_ms=[[1.0, 1.1]] * 3) for g in (0, 1, 2)]
    warm = types.SimpleNamespace(graphs=graphs)
    plan = timing_fidelity.Plan(tmp_path / "r.yaml", None, tmp_path, 1, 12, 3.0, 3.0, None)
    assert timing_fidelity.graphs_to_seed(plan, sitting, warm) == [1, 2]  # type: ignore[arg-type]
    assert timing_fidelity.graphs_to_seed(plan, _sitting(), warm) == [0, 1, 2]  # type: ignore[arg-type]
    fixed = dataclasses.replace(plan, until_decided=None)  # a fixed number of rounds measures every graph
    assert timing_fidelity.graphs_to_seed(fixed, sitting, warm) is None  # type: ignore[arg-type]
    paired = timing_fidelity._group_policy(warm, swapped=False, seeds=2, seeded=[1, 2]).pairs  # type: ignore[arg-type]
    assert {(a[1].split()[1], b[1]) for a, b in paired} == {
        (g, w) for g in "12" for w in (f"graph {g} timing 0", f"graph {g} timing 1", f"graph {g} profile")
    }
    assert len(paired) == 2 * (2 * 2 + 1)  # per graph: two timings x two -p, and the profile


def test_each_comparison_records_its_placement_and_the_report_groups_by_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """resnet50's comparisons on GPU 0 with CPUs 16-31 read compiled -2.9 to -7.3 %, those on GPU 1 with CPUs 0-15
    around 0: machine and placement were confounded until each comparison said where it ran."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setattr(fidelity_records.os, "sched_getaffinity", lambda pid: set(range(16)))
    assert fidelity_records.placement() == "GPU 1, CPUs 0-15"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setattr(fidelity_records.os, "sched_getaffinity", lambda pid: {5, 0, 2, 3})
    assert fidelity_records.placement() == "GPU all, CPUs 0,2-3,5"
    sitting = _offsets([[-5.0] * 6] * 2 + [[1.0] * 6] * 4)
    for n, run in enumerate(sitting.runs):
        run.sitting, run.placement = f"boot-{n % 2}", "GPU 0, CPUs 16-31" if n < 2 else "GPU 1, CPUs 0-15"
    fidelity_report.report(sitting)
    out = capsys.readouterr().out
    assert "by placement: GPU 0, CPUs 16-31 (-5.0, -5.0); GPU 1, CPUs 0-15 (+1.0, +1.0, +1.0, +1.0)" in out


def test_the_bare_warm_up_fills_the_bare_loops_own_cache_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """reportgen's warm-up leaves the bare loop's graphs uncached (another FX-graph-cache key); the sitting's bare
    warm-up compiles them once, alone, so that no timed bare loop compiles: a real CPU compile, twice."""
    from reportgen.recipe import load_recipe
    from reportgen.run import child_env

    recipe = Path(__file__).resolve().parents[1] / "data" / "recipes" / "addmul.yaml"
    env = child_env(load_recipe(recipe), tmp_path / "cache")
    plan = timing_fidelity.Plan(recipe, None, tmp_path, 1, None, 3.0, 3.0, None, round_timeout_s=300)
    first, second = (Sitting(str(recipe), None, str(tmp_path), 3.0, 3.0) for _ in range(2))
    timing_fidelity.warm_up_bare(plan, first, env)
    timing_fidelity.warm_up_bare(plan, second, env)
    missed, hit = first.warmup["bare_cache"], second.warmup["bare_cache"]
    assert isinstance(missed, dict) and isinstance(hit, dict)
    assert missed["fxgraph_cache_miss"] >= 1 and missed["fxgraph_cache_hit"] == 0  # compiled: nothing cached yet
    assert hit["fxgraph_cache_hit"] == missed["fxgraph_cache_miss"] and hit["fxgraph_cache_miss"] == 0
    assert "warm-up bare loop:" in capsys.readouterr().out


def test_a_run_keeps_its_childs_stages_and_one_line_shows_them(tmp_path: Path) -> None:
    """Where a warm-up's wall went (stage by stage, from the bundle's manifest), on a real canned CPU bundle; a file
    from before the field reads with none."""
    import shutil

    bundle = tmp_path / "addmul"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "cpu-history-addmul" / "addmul", bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    expected = manifest["metrics"]["stages_s"]
    run = fidelity_records.read_run(bundle, 0, 30.0)
    assert run.stages_s == expected and len(expected) >= 5
    line = timing_fidelity.stages_line(run.stages_s)
    assert line.count(" s, ") == len(expected) - 1
    assert f"compile {expected['compile']:.1f} s" in line
    assert timing_fidelity.stages_line({}) == "not recorded"
    old = {k: v for k, v in dataclasses.asdict(run).items() if k not in ("stages_s", "graphs")}
    assert Run(**old).stages_s == {}


def test_each_roles_step_windows_sum_what_the_rest_of_the_host_used_meanwhile() -> None:
    """`steps_cpu`: only step windows count, per role; a `-p` left running beside reportgen's steps shows as its
    `runs_s` there and not beside the bare loop's."""
    from reportgen.run.pause import WindowCpu
    from reportgen.run.window import STEPS_WINDOW

    windows = [
        ("bare", STEPS_WINDOW, 0.0, 0.2),
        ("reportgen", STEPS_WINDOW, 0.3, 0.5),
        ("seed", "seed 0 timing 0", 0.6, 0.7),
        ("reportgen", "graph 0 timing 0", 0.8, 0.9),
        ("reportgen", STEPS_WINDOW, 1.0, 1.2),
    ]
    cpus = [WindowCpu(0.2, 0.01, 0.0, 0.0, 0.2, 0.0), WindowCpu(0.2, 0.12, 0.1, 0.01, 0.21, 0.05)]
    cpus += [WindowCpu(0.1, 5.0, 5.0, 1.0, 9.0, 9.0), WindowCpu(0.1, 7.0, 7.0, 0.0, 9.0, 9.0)]
    cpus += [WindowCpu(0.2, 0.03, 0.02, 0.0, 0.25, 0.1)]
    summary = timing_fidelity._window_summary(windows, cpus)
    bare = {"windows": 1, "open_s": 0.2, "others_s": 0.01, "runs_s": 0.0, "stolen_s": 0.0, "holder_s": 0.2}
    mine = {"windows": 2, "open_s": 0.4, "others_s": 0.15, "runs_s": 0.12, "stolen_s": 0.01, "holder_s": 0.46}
    assert summary["steps_cpu"] == {"bare": bare | {"line_s": 0.0}, "reportgen": mine | {"line_s": 0.15}}
    assert "steps_cpu" not in timing_fidelity._window_summary(windows)  # a sitting from before: as it was


def test_the_bare_warm_ups_own_benchmarks_each_take_a_gpu_only_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bare loop's first compiled call runs inside `inductor.benchmarks_in`, whose windows are the run child's
    (`COMPILE_BENCHMARK_WINDOW`, GPU only): a benchmark there takes its turn as reportgen's do. A CPU compile has no
    GPU benchmark, so the stand-in opens one window where Inductor would, and the compile happens inside."""
    import contextlib

    import torch

    from reportgen.run import inductor, window

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    opened: list[tuple[str, bool]] = []
    frames: list[int] = []

    @contextlib.contextmanager
    def recording_window(what: str, *, gpu_only: bool = False) -> Iterator[None]:
        opened.append((what, gpu_only))
        yield

    @contextlib.contextmanager
    def one_benchmark(factory: Callable[[], contextlib.AbstractContextManager[object]]) -> Iterator[bool]:
        frames.append(torch._dynamo.utils.counters["stats"]["unique_graphs"])
        yield True
        frames.append(torch._dynamo.utils.counters["stats"]["unique_graphs"])
        with factory():  # a benchmark of the first call
            pass

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    monkeypatch.setattr(window, "timed_window", recording_window)
    monkeypatch.setattr(inductor, "benchmarks_in", one_benchmark)
    recipe = Path(__file__).resolve().parents[1] / "data" / "recipes" / "addmul.yaml"
    fidelity_children.warmed_workload(recipe, None)
    assert opened == [(window.COMPILE_BENCHMARK_WINDOW, True)]
    assert frames[0] == 0 and frames[1] >= 1  # compiled within


def _figures(device_us: list[float], kernels: dict[str, float]) -> dict[str, object]:
    from reportgen.bundle import Figures, StepFigures

    side = StepFigures(profiled_steps=len(device_us), device_us=device_us, active_us=device_us, kernels=kernels)
    return Figures(device="cuda", compiled=side, eager=side).model_dump(mode="json")


def test_the_report_says_whether_an_offset_is_on_the_device_and_which_kernels_differ(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each side's device time per profiled step (median of its steps) and its kernels by name: comparison 2's
    reportgen ran cuDNN's other algorithm for 2 % more device time; comparison 1 has no figures (a file from
    before); 3 is equal to the microsecond."""
    sitting = _offsets([[0.0] * 3] * 3)
    conv = {"triton_poi_fused_0": 1.0, "sm90_xmma_fprop_a": 2.0}
    for run, bare in zip(sitting.runs[1:], sitting.bares[1:], strict=True):
        run.figures = bare.figures = _figures([1000.0, 1010.0, 990.0], conv)
    sitting.runs[1].figures = _figures([1020.0, 5000.0, 1019.0], {"triton_poi_fused_0": 1.0, "sm90_xmma_fprop_b": 2.0})
    fidelity_report.report(sitting)
    out = capsys.readouterr().out
    for side in ("compiled", "eager"):
        assert (
            f"device time per {side} step, reportgen's profiled steps against the bare loop's - 1 (shown, not "
            "judged): median +1.00 % over 2 (#2 +2.00, #3 +0.00); kernels per step the same by name in 1 of 2; "
            "other in #2: 2 (sm90_xmma_fprop_a, sm90_xmma_fprop_b)"
        ) in out


def test_the_bare_loop_profiles_its_steps_as_the_run_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real CPU compile of `a * b + c`: the bare loop's own profile has the recipe's profiled steps on each side,
    eager dispatching the model's two ATen ops once a step, compiled neither (one fused C++ kernel)."""
    from reportgen.bundle import Figures

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    recipe_path = Path(__file__).resolve().parents[1] / "data" / "recipes" / "addmul.yaml"
    recipe, work, compiled = fidelity_children.warmed_workload(recipe_path, None)
    figures = Figures.model_validate(fidelity_children.profiled_figures(work, compiled, recipe))
    assert figures.device == "cpu" and figures.eager is not None and figures.compiled is not None
    assert figures.eager.profiled_steps == figures.compiled.profiled_steps == recipe.profile.profiled_steps == 2
    assert figures.eager.aten_ops == {"aten::add": 1.0, "aten::mul": 1.0}
    assert "aten::mul" not in figures.compiled.aten_ops and "aten::add" not in figures.compiled.aten_ops
    assert len(figures.compiled.device_us) == 2 and all(us > 0 for us in figures.eager.device_us)


def test_a_bare_profile_that_fails_leaves_the_timed_medians_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bare loop's own profile is a diagnostic: when it cannot be read, the process still returns its medians
    (real timing of the recipe's model; eager stands in for compiled, no compile needed), with no figures, and its
    log says why."""
    from reportgen.pipeline import variant_recipe
    from reportgen.run.workload import build_workload

    def unreadable(*args: object) -> dict[str, object]:
        raise RuntimeError("trace past its bounds")

    def uncompiled(recipe_path: Path, variant: str | None) -> tuple[object, object, object]:
        recipe = variant_recipe(recipe_path, variant)
        work = build_workload(recipe, str(recipe_path.parent), "cpu")
        return recipe, work, work.model

    monkeypatch.setattr(fidelity_children, "warmed_workload", uncompiled)
    monkeypatch.setattr(fidelity_children, "profiled_figures", unreadable)
    recipe = Path(__file__).resolve().parents[1] / "data" / "recipes" / "addmul.yaml"
    found = fidelity_children.bare_loop(recipe, None)
    assert found["figures"] == {} and len(found["compiled_samples_ms"]) == 3  # type: ignore[arg-type]
    assert "bare loop's profile not read: RuntimeError: trace past its bounds" in capsys.readouterr().err
