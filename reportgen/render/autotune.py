"""MyST section of max-autotune's choices: per operation, what won, against the library call (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from reportgen.bundle import AutotuneOp, KernelLaunch, Tuning
from reportgen.render.markup import MISSING, code_span, escape_md, list_table, plural

__all__ = ["autotune_section", "autotune_summary", "launch_section"]


def _ms(value: float | None) -> str:
    return MISSING if value is None else f"{value:.4f}"


def _row(op: AutotuneOp) -> list[str]:
    winner = op.winner
    extern = op.extern_ms
    gain = MISSING
    if winner is not None and winner.ms and extern:
        gain = f"{extern / winner.ms:.2f}×"
    runner_up = op.choices[1] if len(op.choices) > 1 else None
    return [
        code_span(op.op),
        escape_md(op.sizes),
        escape_md(op.dtypes or MISSING),
        code_span(winner.name) if winner else MISSING,
        "template" if winner and winner.is_template else "library",
        _ms(winner.ms if winner else None),
        _ms(extern),
        gain,
        f"{code_span(runner_up.name)} {_ms(runner_up.ms)}" if runner_up else MISSING,
        str(op.num_choices or len(op.choices)),
        f"{op.tuning_s:.1f}" if op.benchmark_s is not None else MISSING,
    ]


def autotune_summary(ops: Sequence[AutotuneOp]) -> str:
    """One sentence: how many operations were tuned, how many a template won, and the time it took."""
    if not ops:
        return ""
    templates = sum(1 for op in ops if op.winner and op.winner.is_template)
    seconds = sum(op.tuning_s for op in ops)
    return (
        f"{plural(len(ops), 'operation')} autotuned in {seconds:.1f} s (benchmarking + precompiling); a generated "
        f"template won {templates}, the library call {len(ops) - templates}."
    )


def autotune_section(ops: Sequence[AutotuneOp], max_rows: int = 60) -> str:
    """Every operation max-autotune benchmarked, as Inductor's `AUTOTUNE` log reported it."""
    if not ops:
        return ""
    shown = list(ops)[:max_rows]
    header = ["Op", "Input sizes", "Dtypes", "Chosen", "Kind", "Chosen (ms)", "Library (ms)", "Gain",
              "Runner-up (ms)", "Choices", "Tuning (s)"]  # fmt: skip
    more = f" The first {max_rows} of {len(ops)} are listed." if len(ops) > max_rows else ""
    return "\n\n".join(
        [
            "## Autotuning",
            autotune_summary(ops)
            + " Read from Inductor's `AUTOTUNE` blocks in the run log (max-autotune prints one per operation "
            "it tunes). *Library* is the fastest extern choice (ATen → cuBLAS/cuDNN/oneDNN) among those "
            "logged; *Gain* is its time over the chosen one's, so 1.00× means the library call won." + more,
            list_table(header, [_row(op) for op in shown]),
        ]
    )


def launch_section(launches: Sequence[KernelLaunch], max_rows: int = 60) -> str:
    """How each Triton kernel's launch config was chosen, with those this run's process tuned itself listed: a
    config chosen by a benchmark in the process may differ in the next run, and the compiled step time with it."""
    if not launches:
        return ""
    by = {how: [k for k in launches if k.tuning == how] for how in get_args(Tuning)}
    counts = ", ".join(f"{how} {len(kernels)}" for how, kernels in by.items() if kernels)
    text = [
        "## Launch configs",
        f"{plural(len(launches), 'Triton kernel')} after the warm-ups ({counts}): *cached* ones launched the config "
        "Inductor's autotune cache held, the same in every run on this cache; *single* ones had one config; "
        "*tuned* ones were benchmarked in this run's process on their first call, so another run may choose "
        "another config.",
    ]
    if tuned := by["tuned"]:
        more = f" The first {max_rows} of {len(tuned)} are listed." if len(tuned) > max_rows else ""
        text[1] += f" Tuned in this run ({sum(k.tuning_ms for k in tuned):.1f} ms of benchmarks):{more}"
        rows = [
            [code_span(k.kernel), code_span(k.config), str(k.configs), f"{k.tuning_ms:.1f}"] for k in tuned[:max_rows]
        ]
        text.append(list_table(["Kernel", "Config launched", "Candidates", "Tuning (ms)"], rows))
    return "\n\n".join(text)
