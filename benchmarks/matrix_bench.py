"""A matrix's cost and truth: throughput over a host's GPUs, and step times under concurrency against alone.

    python benchmarks/matrix_bench.py [--work DIR] [--runs-per-gpu N] alone RECIPES... [--company RECIPES...]
        [--variant NAME] [--rounds 2]
    python benchmarks/matrix_bench.py [--work DIR] [--runs-per-gpu N] [--isolation KIND] throughput RECIPES...

`--runs-per-gpu N` and `--isolation KIND` are passed to the `--gpus all` runs (the concurrent side) of either
sub-command (`default`: no flag, reportgen's default: one run per GPU, `cores+lock`); `throughput` takes several of
each (`--runs-per-gpu default,2 --isolation default,lock`: one `--gpus all` pass per combination, every one against
the same `--gpus 1` pass, into `all/` for the defaults, `all-N/`, `all-lock/` or `all-N-lock/` otherwise).

`alone`: the recipes run one at a time (`--gpus 1`) and through the matrix scheduler (`--gpus all`, with the
`--company` recipes beside them, so that something compiles while they time), alternating, `--rounds` times each
(plain, matrix, plain, matrix, ...), so the host's drift shows as the spread between runs of one kind; a round
whose results directory already holds bundles (an earlier call with the same --work) is not run again, so the
rounds can be split over several calls. Prints per recipe the eager and compiled medians, the host probe, device
time and launches per profiled step, per-graph busy %, with the matrix's difference from the plain mean and the
round-by-round difference's mean with its 95 % interval; then the matrix runs' isolation (devices, cores,
compile threads, timing lock, what else ran, pauses, drain).

`throughput`: the recipes with `--gpus 1` then `--gpus all` on the same machine, back to back, each run with a
fresh Inductor cache (no --inductor-cache here: the second pass would compile warm); the `--gpus all` pass
starts from a copy of the first pass's results, the history a nightly's results directory holds, which the
scheduler plans from (longest first; a fresh directory gives it no durations). Prints both wall
times and their ratio, then per run the step-time medians and per-graph busy % of the concurrent run against the
one alone (`--gpus 1`), and each concurrent run's isolation. Both sub-commands keep their results under --work
(`one/`, `all/`; `plain-N/`, `matrix-N/`) and print the command to build one site from them.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from reportgen.bundle import Bundle, iter_bundles, load_bundle
from reportgen.escape import one_line
from reportgen.matrix import ISOLATIONS

__all__: list[str] = []


_EXTRA: list[str] = []
"""Arguments every `reportgen run` gets (`--inductor-cache DIR`)."""
_MATRIX: list[str] = ["--gpus", "all"]
"""Arguments of the concurrent side (`--runs-per-gpu N` and `--isolation KIND` added)."""
_PER_GPU: list[str] = ["default"]
"""`--runs-per-gpu`: one value for `alone`, one `--gpus all` pass each for `throughput`."""
_ISOLATION: list[str] = ["default"]
"""`--isolation`: the same."""


def _run(args: list[str], results: Path) -> float:
    """`reportgen run ARGS -o RESULTS`; its wall seconds."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "reportgen", "run", *args, *_EXTRA, "-o", str(results)], check=False)
    return time.monotonic() - started


def _pct(value: float | None, reference: float | None) -> str:
    if value is None or not reference:
        return "—"
    return f"{(value / reference - 1) * 100:+.1f} %"


def _num(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None else f"{value:{spec}}"


def _medians(bundle: Bundle) -> dict[str, float | None]:
    """Eager and compiled step medians (ms), host probe median (ms), device time per profiled step (ms, median:
    what the host cannot move), launches per step, and each graph's busy % (union)."""
    metrics = bundle.manifest.metrics
    row: dict[str, float | None] = {
        "eager ms": metrics.eager.median_ms if metrics.eager else None,
        "compiled ms": metrics.compiled.median_ms if metrics.compiled else None,
        "host probe ms": statistics.median(metrics.host_probe_ms) if metrics.host_probe_ms else None,
    }
    figures = bundle.analysis.figures if bundle.analysis else None
    for side in ("eager", "compiled"):
        steps = getattr(figures, side, None) if figures is not None else None
        if steps is not None and steps.device_us:
            row[f"{side} device ms/step"] = statistics.median(steps.device_us) / 1000
            launches = steps.counts.get("launches")
            row[f"{side} launches/step"] = float(statistics.median(launches)) if launches else None
    for graph in bundle.analysis.graphs if bundle.analysis else []:
        if graph.graph is not None:
            row[f"busy % {graph.label}"] = graph.busy_union_percent
    return row


def _isolation(bundle: Bundle) -> str:
    iso = bundle.manifest.isolation
    if iso is None:
        return "not recorded"
    others = ", ".join(f"{c.name} ({'+'.join(c.phases)})" for c in iso.concurrent) or "none"
    return one_line(  # names and notes come from bundles: one terminal line, control characters shown
        f"devices={iso.devices} cpus={iso.cpus or 'any'} compile_threads={iso.compile_threads} "
        f"timing_lock={iso.timing_lock} lock_wait={iso.lock_wait_s:.1f}s measured={_num(iso.measured_s, '.1f')}s "
        f"alone={iso.measured_alone} others={others} windows={iso.windows} in {iso.window_s:.1f}s "
        f"gpu_windows={iso.gpu_windows} in {iso.gpu_window_s:.1f}s "
        f"(waited {iso.window_wait_s:.1f}s, coordinated={iso.coordinated}) "
        f"paused={', '.join(f'{n} {s:.1f}s' for n, s in iso.paused.items()) or 'none'} drain={iso.drain_s:.2f}s "
        f"others_cpu={iso.others_cpu_s:.2f}s (runs {iso.runs_cpu_s:.2f}s) stolen={iso.stolen_s:.2f}s notes={iso.notes or '-'}"
    )


def _paired(plain: list[float], matrix: list[float]) -> str:
    """Round-by-round matrix / plain - 1 (%): mean and its Student-t 95 % interval (rounds pair up in order)."""
    diffs = [100 * (m / p - 1) for p, m in zip(plain, matrix, strict=False) if p]
    if len(diffs) < 2:
        return "—"
    mean = statistics.mean(diffs)
    half = _T95.get(len(diffs) - 1, 2.0) * statistics.stdev(diffs) / len(diffs) ** 0.5
    return f"{mean:+.1f} % [{mean - half:+.1f}, {mean + half:+.1f}]"


_T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
"""Student's t, two-sided 95 %, by degrees of freedom."""


def _alone(args: argparse.Namespace, work: Path) -> None:
    variant = ["--variant", args.variant] if args.variant else []
    company = list(args.company or [])
    bundles: dict[str, list[Bundle]] = {"plain": [], "matrix": []}
    for round_ in range(1, args.rounds + 1):
        for kind in ("plain", "matrix"):
            results = work / f"{kind}-{round_}"
            if not any(iter_bundles(results)):  # a round done by an earlier call (same --work) is kept
                # plain: the recipes one at a time; matrix: with their company, over every GPU
                extra = ["--gpus", "1"] if kind == "plain" else [*company, *_MATRIX]
                _run([*args.recipes, *variant, *extra], results)
            bundles[kind] += [load_bundle(b) for b in iter_bundles(results)]
    names = sorted({b.path.name for b in bundles["plain"]})
    for name in names:
        rows = {kind: [_medians(b) for b in found if b.path.name == name] for kind, found in bundles.items()}
        keys = list(dict.fromkeys(k for found in rows.values() for row in found for k in row))
        table = []
        for key in keys:
            plain = [r[key] for r in rows["plain"] if r.get(key) is not None]
            matrix = [r[key] for r in rows["matrix"] if r.get(key) is not None]
            if not plain and not matrix:  # e.g. launches on a CPU run
                continue
            mean_plain = statistics.mean(plain) if plain else None  # type: ignore[type-var]
            mean_matrix = statistics.mean(matrix) if matrix else None  # type: ignore[type-var]
            if key.startswith("busy"):
                both = None if mean_matrix is None or mean_plain is None else mean_matrix - mean_plain
                diff, paired = _num(both, "+.1f") + " pp", "—"
            else:
                diff, paired = _pct(mean_matrix, mean_plain), _paired(plain, matrix)  # type: ignore[arg-type]
            table.append([key, " ".join(_num(v) for v in plain), " ".join(_num(v) for v in matrix), diff, paired])
        headers = ["", "plain runs", "matrix runs", "matrix vs plain mean", "paired by round, 95 %"]
        print(f"\n{name}:\n" + tabulate(table, headers=headers, disable_numparse=True))
    for bundle in bundles["matrix"]:
        if bundle.path.name in names:
            print(f"isolation of {bundle.path}: {_isolation(bundle)}")
    print(f"one site: reportgen build {' '.join(str(p) for p in sorted(work.glob('*-*')))} --out {work / 'site'}")


def _window_bound(bundles: list[Bundle], one_s: float, gpus: int = 2) -> str:
    """The `--gpus 1` pass's time in timed windows, and the throughput `gpus` GPUs can reach at most: a window
    pauses every other run on the host, so windows never overlap anything (Amdahl: 1 / (W + (1 - W) / gpus))."""
    window_s = sum(b.manifest.isolation.window_s for b in bundles if b.manifest.isolation is not None)
    share = window_s / one_s if one_s > 0 else 0.0
    bound = 1 / (share + (1 - share) / gpus) if share < 1 else 1.0
    return (
        f"timed windows of the --gpus 1 pass: {window_s:.1f} s of {one_s:.1f} s ({share:.1%}); "
        f"with the others paused in each, {gpus} GPUs reach at most x{bound:.2f} (perfect balance)"
    )


def _flag(flag: str, value: str) -> list[str]:
    return [] if value == "default" else [flag, value]


def _throughput(args: argparse.Namespace, work: Path) -> None:
    if _EXTRA:
        print("note: with --inductor-cache the second pass compiles warm: its wall time is not comparable")
    variants = [arg for name in args.variant or [] for arg in ("--variant", name)]
    one_s = _run([*args.recipes, *variants, "--gpus", "1"], work / "one")
    alone = {b.name: load_bundle(b) for b in iter_bundles(work / "one")}
    passes = []
    for per_gpu, isolation in [(n, kind) for n in _PER_GPU for kind in _ISOLATION]:
        concurrent = ["--gpus", "all", *_flag("--runs-per-gpu", per_gpu), *_flag("--isolation", isolation)]
        results = work / "-".join(["all", *(v for v in (per_gpu, isolation) if v != "default")])
        if not results.exists():  # the history a nightly's results directory holds: longest first
            shutil.copytree(work / "one", results, symlinks=True)
        all_s = _run([*args.recipes, *variants, *concurrent], results)
        passes.append((results, f"{' '.join(concurrent)}: {all_s:.1f} s, throughput x{one_s / all_s:.2f}"))
        print(f"--gpus 1: {one_s:.1f} s; {passes[-1][1]}", flush=True)
    print(_window_bound(list(alone.values()), one_s) + "\n")
    for results, summary in passes:
        print(f"{summary} ({results.name}/)")
        _truth(results, alone)
        print(f"one site: reportgen build {results} --out {work / 'site'}\n")


def _truth(results: Path, alone: dict[str, Bundle]) -> None:
    """Each concurrent run's figures against the same run alone, and its isolation."""
    table = []
    for path in iter_bundles(results):
        concurrent, single = load_bundle(path), alone.get(path.name)
        if single is None:
            continue
        ours, theirs = _medians(concurrent), _medians(single)
        for key, value in ours.items():
            diff = _pct(value, theirs.get(key))
            if key.startswith("busy"):
                other = theirs.get(key)
                diff = "—" if value is None or other is None else f"{value - other:+.1f} pp"
            table.append([path.name, key, _num(theirs.get(key)), _num(value), diff])
    print(tabulate(table, headers=["run", "", "alone (--gpus 1)", "concurrent", "difference"], disable_numparse=True))
    for path in iter_bundles(results):
        print(f"isolation of {path.name}: {_isolation(load_bundle(path))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=None, help="where results go (default: a new temporary dir)")
    parser.add_argument("--inductor-cache", type=Path, help="passed to every run: warm compiles after the first")
    parser.add_argument(
        "--runs-per-gpu",
        default="default",
        help="passed to the --gpus all runs; default: no flag (throughput: a pass each, e.g. default,2)",
    )
    parser.add_argument(
        "--isolation",
        default="default",
        help="passed to the --gpus all runs; default: no flag (throughput: a pass each, e.g. default,lock)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    alone = sub.add_parser("alone", help="plain runs against matrix runs of the recipes, alternating")
    alone.add_argument("recipes", nargs="+")
    alone.add_argument("--company", nargs="*", help="recipes that run beside them in the matrix rounds only")
    alone.add_argument("--variant")
    alone.add_argument("--rounds", type=int, default=2)
    through = sub.add_parser("throughput", help="--gpus 1 then --gpus all, back to back")
    through.add_argument("recipes", nargs="+")
    through.add_argument("--variant", action="append", help="only these variants of recipes that have them")
    args = parser.parse_args()
    _PER_GPU[:] = [n.strip() for n in str(args.runs_per_gpu).split(",")]
    if not all(n == "default" or n.isdigit() for n in _PER_GPU) or (args.command == "alone" and len(_PER_GPU) > 1):
        parser.error("--runs-per-gpu expects default or a count (throughput: several, e.g. default,2)")
    _ISOLATION[:] = [n.strip() for n in str(args.isolation).split(",")]
    kinds = ("default", *ISOLATIONS)
    if not all(k in kinds for k in _ISOLATION) or (args.command == "alone" and len(_ISOLATION) > 1):
        parser.error(f"--isolation expects one of {', '.join(kinds)} (throughput: several, e.g. default,lock)")
    _MATRIX.extend([*_flag("--runs-per-gpu", _PER_GPU[0]), *_flag("--isolation", _ISOLATION[0])])
    if args.inductor_cache:
        _EXTRA.extend(["--inductor-cache", str(args.inductor_cache)])
    work = args.work or Path(tempfile.mkdtemp(prefix="matrix-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"results under {work}", flush=True)
    (_alone if args.command == "alone" else _throughput)(args, work)


if __name__ == "__main__":
    main()
