"""What one step costs the CPU in reportgen's timing process against a bare loop's: counts, not times.

    python benchmarks/step_calls.py RECIPE [--variant NAME] [--steps 3] [--work DIR] [--inductor-cache DIR] [--json OUT]

Fidelity sittings (`timing_fidelity.py`) read reportgen's compiled steps a few % slower than a bare loop's on lent
H200s, with the same kernels. A slower step is more CPU work per step, or the same work slowed. This counts the work:
Python function entries per eager and per compiled step (every thread with `sys.monitoring` on Python 3.12+, else
the calling thread's and new `threading` threads' `sys.setprofile`) and the calls Python code makes into C (builtins,
torch's and Triton's C functions), exact for given code and state whatever the host does, in two processes on the
same Inductor cache:

- reportgen's: `reportgen run RECIPE` as a user runs it, its child counting right after its own step timing
  (`reportgen.run.measure.time_interleaved`, wrapped through a `sitecustomize` this script writes into the child's
  `PYTHONPATH`; nothing of reportgen is changed);
- the bare loop's: a fresh process that builds the same workload, compiles it with the recipe's options, warms up
  and alternates the recipe's blocks as the run does, then counts the same way.

Beside the counts each side reports what a count cannot see: threads, tracked GC objects, profile or trace hooks,
and per uncounted step its CPU time and context switches (`getrusage`, noisy on a lent VM, so shown, not judged);
and each Triton kernel's autotune cache state and the config it launches with (a kernel tuned in its process on
the first call may launch another config in each: same kernel files, different work).
Prints the totals and the functions whose counts differ (wrapper file names folded: each side's cache names them).
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reportgen.bundle import LaunchChange

OUT_VARIABLE = "REPORTGEN_STEP_CALLS_OUT"
"""Where the run's child writes its side (set only for the run this script starts)."""
STEPS_VARIABLE = "REPORTGEN_STEP_CALLS_STEPS"
"""How many steps of each the run's child counts."""

HOOK = f"""import os, sys
if os.environ.get({OUT_VARIABLE!r}) and sys.orig_argv[1:3] == ["-m", "reportgen.run.child"]:
    sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
    import step_calls
    step_calls.wrap_run_timing()
"""
"""The child's `sitecustomize`: only `python -m reportgen.run.child` (not the launcher, not compile workers) counts."""

WRAPPER = re.compile(r"^.*/[a-z0-9]{2}/c[a-z0-9]{50,}\.py(?=::)")
"""A compiled module's path in an Inductor cache (`<cache>/xy/c<hash>.py`): folded, the two sides' caches differ."""

Counts = dict[str, int]

USAGE_STEPS = 50
"""Uncounted steps of each whose CPU time is read (threads' times come in 10 ms clock ticks)."""


PYTHON_CALLEES = (types.FunctionType, types.MethodType)
"""Callees whose entry `PY_START` counts; every other call from Python code (a builtin, a C extension's function,
a type) counts as a C call."""
C_CALL = "<C>::"
"""The prefix of a C call's key (`<C>::module.qualname`): `sys.monitoring`'s CALL event on 3.12+ (every callee but a
Python function), `sys.setprofile`'s `c_call` before (builtin functions and methods)."""


def _key(code: object) -> str:
    return f"{getattr(code, 'co_filename', '?')}::{getattr(code, 'co_name', '?')}"


def _c_key(callee: object) -> str:
    """A C callee's key: its module and qualified name (a bound builtin method: its type's), else its type's."""
    named = callee if hasattr(callee, "__qualname__") else type(callee)
    owner = getattr(callee, "__self__", None)
    module = getattr(named, "__module__", None) or getattr(type(owner), "__module__", None) or "?"
    return f"{C_CALL}{module}.{getattr(named, '__qualname__', '?')}"


@contextmanager
def counting() -> Iterator[collections.Counter[str]]:
    """Count Python function entries (`file::function`) and calls from Python into C (`<C>::module.qualname`) for
    the duration, in every thread where the interpreter lets a tool see them (all on 3.12+)."""
    calls: collections.Counter[str] = collections.Counter()
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        tool = next(t for t in range(6) if monitoring.get_tool(t) is None)  # a free id (0-5: tools')

        def start(code: object, offset: int) -> None:
            calls[_key(code)] += 1

        def call(code: object, offset: int, callee: object, arg0: object) -> None:
            if not isinstance(callee, PYTHON_CALLEES):  # those count at their PY_START
                calls[_c_key(callee)] += 1

        events = monitoring.events
        monitoring.use_tool_id(tool, "step_calls")
        monitoring.register_callback(tool, events.PY_START, start)
        monitoring.register_callback(tool, events.CALL, call)
        monitoring.set_events(tool, events.PY_START | events.CALL)
        try:
            yield calls
        finally:
            monitoring.set_events(tool, 0)
            for event in (events.PY_START, events.CALL):
                monitoring.register_callback(tool, event, None)
            monitoring.free_tool_id(tool)
        return

    def profile(frame: object, event: str, arg: object) -> None:
        if event == "call":
            calls[_key(getattr(frame, "f_code", None))] += 1
        elif event == "c_call":  # (before 3.12: builtin functions and methods, not types)
            calls[_c_key(arg)] += 1

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def folded(calls: collections.Counter[str]) -> Counts:
    """Counts keyed by a name that means the same in both processes: site-packages paths cut, wrappers folded."""
    out: collections.Counter[str] = collections.Counter()
    for key, n in calls.items():
        key = key.rsplit("site-packages/", 1)[-1]
        out[WRAPPER.sub("<compiled module>", key)] += n
    return dict(sorted(out.items()))


def thread_cpu_s() -> dict[str, float]:
    """CPU seconds so far of each thread of this process, by name (`/proc/self/task/*/`: Python's name for its
    threads, else the OS's, e.g. torch's `pt_autograd_0`; same names summed; empty where there is no /proc). Clock
    ticks: 10 ms steps, so read over many steps."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    python = {t.native_id: t.name for t in threading.enumerate()}
    found: collections.Counter[str] = collections.Counter()
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:
        return {}
    for task in tasks:
        try:
            name = python.get(int(task.name)) or (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        found[name] += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15 of stat)
    return dict(found)


def usage_per_step(step: Callable[[], None], steps: int) -> dict[str, object]:
    """CPU ms and context switches per step over `steps` uncounted steps: the process's (`getrusage`) and each
    thread's that used any (a thread busy beside the step is CPU the step competes with)."""
    before, threads = resource.getrusage(resource.RUSAGE_SELF), thread_cpu_s()
    for _ in range(steps):
        step()
    after, threads_after = resource.getrusage(resource.RUSAGE_SELF), thread_cpu_s()
    per_thread = {n: (s - threads.get(n, 0.0)) * 1e3 / steps for n, s in threads_after.items()}
    return {
        "cpu_ms": (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3 / steps,
        "voluntary_switches": (after.ru_nvcsw - before.ru_nvcsw) / steps,
        "involuntary_switches": (after.ru_nivcsw - before.ru_nivcsw) / steps,
        "thread_cpu_ms": {n: round(ms, 3) for n, ms in sorted(per_thread.items()) if ms > 0},
    }


class Stepper(Protocol):
    """What is counted: `reportgen.run.workload.Workload` (or a test's stand-in)."""

    def step(self, fn: Callable[..., object]) -> None: ...

    def synchronize(self) -> None: ...


def tuned_kernels() -> dict[str, dict[str, object]]:
    """Each Triton kernel of this process's Inductor modules by `kernel@source` (two processes' kernels pair):
    how its launch config was chosen (`cached`, `tuned` in this process, `single`), its candidates, the ms spent
    tuning it here, and the config it launches with (`reportgen.run.inductor.kernel_launches`, as a bundle keeps)."""
    from fidelity_records import launch_records

    from reportgen.run import inductor

    return launch_records(inductor.kernel_launches(inductor.loaded_modules()))


def kernel_choices(sides: dict[str, dict]) -> tuple[int, list[str]]:
    """How many kernels both sides launched, and those launched with different configs."""
    from fidelity_records import launch_key

    shared, changes = _other_configs(sides)
    return shared, [launch_key(c) for c in changes]


def _other_configs(sides: dict[str, dict]) -> tuple[int, list[LaunchChange]]:
    from fidelity_records import other_configs

    return other_configs(sides["reportgen"].get("kernels", {}), sides["bare"].get("kernels", {}))


def measure_side(work: Stepper, eager: Callable[..., object], compiled: Callable[..., object], steps: int) -> dict:
    """This process's counts per step of each function, and the state beside them."""
    step, sync = work.step, work.synchronize
    side: dict[str, object] = {
        "python": sys.version.split()[0],
        "threads": sorted(t.name for t in threading.enumerate()),
        "gc_tracked": len(gc.get_objects()),
        "hooks": [repr(sys.getprofile()), repr(sys.gettrace())],
        "intra_op_threads": getattr(sys.modules.get("torch"), "get_num_threads", lambda: None)(),
        "steps": steps,
    }
    side["kernels"] = tuned_kernels()  # after the warm-ups: each kernel's config is chosen
    for name, fn in (("eager", eager), ("compiled", compiled)):
        sync()
        with counting() as calls:
            for _ in range(steps):
                step(fn)
            sync()
        usage = usage_per_step(lambda fn=fn: (step(fn), sync()), max(steps, USAGE_STEPS))  # type: ignore[misc]
        c_calls = sum(n for key, n in calls.items() if key.startswith(C_CALL))
        side[name] = {
            "calls_per_step": (sum(calls.values()) - c_calls) / steps,
            "c_calls_per_step": c_calls / steps,
            "functions": folded(calls),
            "usage": usage,
        }
    return side


def wrap_run_timing() -> None:
    """In reportgen's child: after its step timing, count and write this side (`OUT_VARIABLE`)."""
    from reportgen.run import measure

    timed = measure.time_interleaved

    def wrapped(workload, eager, compiled, samples, block_steps=1):  # type: ignore[no-untyped-def]
        result = timed(workload, eager, compiled, samples, block_steps)
        side = measure_side(workload, eager, compiled, int(os.environ.get(STEPS_VARIABLE, "3")))
        Path(os.environ[OUT_VARIABLE]).write_text(json.dumps(side), encoding="utf-8")
        return result

    measure.time_interleaved = wrapped


def bare_side(recipe_path: Path, variant: str | None, steps: int, out: Path) -> None:
    """In a fresh process: the recipe's workload as the fidelity bare loop builds, compiles and warms it up
    (`fidelity_children.warmed_workload`), the run's alternating blocks, then the count."""
    from fidelity_children import warmed_workload

    recipe, work, compiled = warmed_workload(recipe_path, variant)
    for _ in range(recipe.profile.steps):
        for fn in (work.model, compiled):
            for _ in range(recipe.profile.block_steps):
                work.step(fn)
        work.synchronize()
    out.write_text(json.dumps(measure_side(work, work.model, compiled, steps)), encoding="utf-8")


def differences(sides: dict[str, dict], figure: str, top: int = 15) -> list[tuple[str, float, float]]:
    """Functions whose count per step differs between reportgen's side and the bare loop's, largest first."""
    ours, bare = (sides[s][figure]["functions"] for s in ("reportgen", "bare"))
    steps = {s: sides[s]["steps"] for s in sides}
    rows = [(k, ours.get(k, 0) / steps["reportgen"], bare.get(k, 0) / steps["bare"]) for k in set(ours) | set(bare)]
    rows = [r for r in rows if r[1] != r[2]]
    return sorted(rows, key=lambda r: (-abs(r[1] - r[2]), r[0]))[:top]


def run_both(recipe: Path, variant: str | None, steps: int, work: Path, cache: Path | None = None) -> dict[str, dict]:
    """Both sides on one Inductor cache (`reportgen run --inductor-cache`: `cache`, default `work/cache`; a fidelity
    sitting's carried one, say): reportgen's run first, then the bare process."""
    cache = cache or work / "cache"
    hook = work / "hook"
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    env = dict(os.environ, **{STEPS_VARIABLE: str(steps)})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(hook), env.get("PYTHONPATH", "")) if p)
    env[OUT_VARIABLE] = str(work / "reportgen.json")
    command = [sys.executable, "-m", "reportgen", "run", str(recipe), "-o", str(work / "results")]
    command += ["--inductor-cache", str(cache)] + (["--variant", variant] if variant else [])
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    from reportgen.pipeline import select_variant, variant_recipe
    from reportgen.recipe import load_recipe
    from reportgen.run import child_env

    if not (work / "reportgen.json").is_file():
        raise SystemExit(
            f"{work / 'reportgen.json'}: reportgen's run child counted nothing (is it `-m reportgen.run.child`?)"
        )
    written = load_recipe(recipe)
    bundle = written.bundle_name(select_variant(written, variant, recipe))  # the run's kept cache is named after it
    bare_env = child_env(variant_recipe(recipe, variant), cache / bundle)  # the run's environment
    command = [sys.executable, __file__, str(recipe), "--bare-side", str(work / "bare.json"), "--steps", str(steps)]
    subprocess.run(command + (["--variant", variant] if variant else []), env=bare_env, check=True)
    return {name: json.loads((work / f"{name}.json").read_text(encoding="utf-8")) for name in ("reportgen", "bare")}


def report(sides: dict[str, dict]) -> str:
    """Both sides as text, for a terminal: names from the processes (files, threads) pass `escape.one_line`."""
    from reportgen.escape import one_line

    lines = []
    for name, side in sides.items():
        usage = {f: side[f]["usage"] for f in ("eager", "compiled")}
        lines.append(
            f"{name}: Python {side['python']}; function entries per step: eager {side['eager']['calls_per_step']:g}, "
            f"compiled {side['compiled']['calls_per_step']:g}; calls into C per step: "
            + ", ".join(f"{f} {side[f].get('c_calls_per_step', float('nan')):g}" for f in ("eager", "compiled"))
            + f"; threads {one_line(', '.join(side['threads']))}; "
            f"GC-tracked objects {side['gc_tracked']}; hooks {side['hooks']}; "
            f"torch's intra-op threads {side.get('intra_op_threads')}"
        )
        lines += [
            f"  {f} per uncounted step: CPU {u['cpu_ms']:.2f} ms, switches {u['voluntary_switches']:.1f} voluntary, "
            f"{u['involuntary_switches']:.2f} involuntary; by thread (ms) "
            + ", ".join(f"{one_line(t)} {ms:.2f}" for t, ms in u.get("thread_cpu_ms", {}).items())
            for f, u in usage.items()
        ]
    for name, side in sides.items():
        states = collections.Counter(str(k["tuning"]) for k in side.get("kernels", {}).values())
        tuning = sum(float(k["tuning_ms"]) for k in side.get("kernels", {}).values())
        lines.append(
            f"{name}'s Triton kernels: {sum(states.values())} ("
            + ", ".join(f"{one_line(state)} {n}" for state, n in sorted(states.items()))
            + f"), tuned in this process for {tuning:.1f} ms"
        )
    from fidelity_records import launch_key

    shared, differing = _other_configs(sides)
    lines.append(f"configs launched: the same in {shared - len(differing)} of the {shared} kernels both sides ran")
    lines += [
        f"  {one_line(launch_key(c))}: reportgen {one_line(c.after)}, bare {one_line(c.before)}" for c in differing
    ]
    for figure in ("eager", "compiled"):
        rows = differences(sides, figure)
        lines.append(f"{figure}: " + ("the same functions, the same number of times" if not rows else "differs:"))
        lines += [f"  {one_line(key)}: reportgen {a:g}, bare {b:g} per step" for key, a, b in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--steps", type=int, default=3, help="counted steps of each (default 3)")
    parser.add_argument("--work", type=Path, help="work directory (default: a temporary one)")
    parser.add_argument("--inductor-cache", type=Path, help="the kept Inductor caches' folder (default WORK/cache)")
    parser.add_argument("--json", type=Path, help="write both sides here")
    parser.add_argument("--bare-side", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_side is not None:
        bare_side(args.recipe.resolve(), args.variant, args.steps, args.bare_side)
        return 0
    with tempfile.TemporaryDirectory(prefix="step-calls-") as tmp:
        work = args.work or Path(tmp)
        sides = run_both(args.recipe.resolve(), args.variant, args.steps, work, args.inductor_cache)
    if args.json is not None:
        args.json.write_text(json.dumps(sides, indent=1), encoding="utf-8")
    print(report(sides))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
