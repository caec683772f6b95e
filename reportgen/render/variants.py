"""MyST text comparing the variants of one recipe (default vs reduce-overhead vs max-autotune, ...).

Each variant ran in its own process with its own eager baseline, so speedups are within-process ratios. One
variant is faster or slower than another only where the 95 % intervals of their compiled medians (from the
analysis, `Analysis.timing`) do not overlap; otherwise the difference is within noise.
"""

from __future__ import annotations

from collections.abc import Sequence

from reportgen.bundle import Analysis, Bundle, Interval, Kernel, Manifest, StepTimes, TimingSummary, format_ms
from reportgen.render.autotune import autotune_summary
from reportgen.render.kernel_names import short_kernel_name
from reportgen.render.markup import MISSING, code_span, escape_md, list_table, page_link, page_name

__all__ = ["compiled_verdict", "kernel_diff", "variants_section"]

_SHORT_KINDS = {"forward": "fwd", "backward": "bwd"}


def _times(times: StepTimes | None, interval: Interval | None) -> str:
    """The median and its interval, `80.00 (79.10–81.20)`."""
    if times is None:
        return MISSING
    return f"{format_ms(times.median_ms)} ({MISSING if interval is None else f'{format_ms(interval.low)}–{format_ms(interval.high)}'})"


def _timing(bundle: Bundle) -> TimingSummary:
    return (bundle.analysis.timing if bundle.analysis else None) or TimingSummary()


def compiled_verdict(bundle: Bundle, base: Bundle) -> str:
    """`faster` or `slower` than `base` when the intervals of the compiled medians do not overlap, else
    `within noise`; `baseline` for `base` itself, MISSING without both intervals."""
    if bundle.name == base.name:
        return "baseline"
    mine, theirs = _timing(bundle).compiled_median_ci_ms, _timing(base).compiled_median_ci_ms
    if mine is None or theirs is None:
        return MISSING
    if mine.high < theirs.low:
        return "faster"
    return "slower" if mine.low > theirs.high else "within noise"


def _busy(analysis: Analysis | None) -> str:
    if analysis is None:
        return MISSING
    parts = []
    for graph in analysis.graphs:
        busy, _ = graph.headline_busy
        if graph.graph is not None and busy is not None:
            parts.append(f"{_SHORT_KINDS.get(graph.kind, graph.kind)} {busy:.0f}")
    return ", ".join(parts) or MISSING


def _row(bundle: Bundle, base: Bundle, links: bool) -> list[str]:
    m = bundle.manifest
    metrics, timing = m.metrics, _timing(bundle)
    speedup = metrics.speedup
    peak = metrics.peak_memory_compiled_bytes
    cudagraphs = bundle.capture.diagnostics.cudagraphs if bundle.capture else MISSING
    return [
        page_link(escape_md(m.variant or m.name), f"../{page_name(bundle.name)}/index")
        if links
        else escape_md(m.variant or m.name),
        escape_md(m.recipe.compile.mode),
        m.status.value,
        _times(metrics.eager, timing.eager_median_ci_ms),
        _times(metrics.compiled, timing.compiled_median_ci_ms),
        compiled_verdict(bundle, base),
        MISSING if speedup is None else f"{speedup:.2f}×",
        _compile(m),
        MISSING if peak is None else f"{peak / 2**20:.0f}",
        _busy(bundle.analysis),
        cudagraphs,
    ]


def _compile(manifest: Manifest) -> str:
    """Seconds; a compile from a kept cache that held earlier runs is marked, since it may be warm."""
    seconds = manifest.metrics.compile_time_s
    if seconds is None:
        return MISSING
    return f"{seconds:.1f} (warm cache)" if manifest.inductor_cache == "kept-warm" else f"{seconds:.1f}"


def kernel_diff(
    base: Sequence[Kernel], other: Sequence[Kernel], top: int = 10
) -> tuple[list[Kernel], list[Kernel], list[tuple[str, float, float]]]:
    """Kernels only in `other`, only in `base`, and the largest changes in total time (name, base µs, other µs)."""
    base_by = {k.name: k for k in base}
    other_by = {k.name: k for k in other}
    only_other = [k for k in other if k.name not in base_by][:top]
    only_base = [k for k in base if k.name not in other_by][:top]
    changes = [(n, base_by[n].device_time_us, other_by[n].device_time_us) for n in base_by.keys() & other_by.keys()]
    changes.sort(key=lambda c: abs(c[2] - c[1]), reverse=True)
    return only_other, only_base, changes[:top]


def _kernel_list(kernels: Sequence[Kernel]) -> str:
    if not kernels:
        return "none"
    return ", ".join(f"{code_span(short_kernel_name(k.name))} ({k.device_time_us / 1000:.2f} ms)" for k in kernels)


def _diff_section(base: Bundle, other: Bundle) -> str:
    if base.analysis is None or other.analysis is None:
        return ""
    only_other, only_base, changes = kernel_diff(base.analysis.kernels.kernels, other.analysis.kernels.kernels)
    templates = [k for k in other.analysis.kernels.kernels if k.category == "triton_template"]
    rows = [
        [code_span(short_kernel_name(n)), f"{b / 1000:.3f}", f"{o / 1000:.3f}", f"{(o - b) / 1000:+.3f}"]
        for n, b, o in changes
    ]
    parts = [
        f"### {escape_md(other.manifest.variant or other.name)} vs {escape_md(base.manifest.variant or base.name)}",
        f"- **Only in {escape_md(other.manifest.variant or '')}:** {_kernel_list(only_other)}",
        f"- **Only in {escape_md(base.manifest.variant or '')}:** {_kernel_list(only_base)}",
        f"- **Templates chosen by autotuning:** {_kernel_list(templates[:10])}",
    ]
    if other.capture and other.capture.autotune:
        parts.append(f"- **Autotuning:** {autotune_summary(other.capture.autotune)}")
    if rows:
        header = ["Kernel", *(f"{escape_md(b.manifest.variant or b.name)} (ms)" for b in (base, other)), "Change (ms)"]
        parts.append(list_table(header, rows, "Largest changes in kernel time"))
    return "\n\n".join(parts)


def variants_section(bundle: Bundle, siblings: Sequence[Bundle], links: bool = True) -> str:
    """Side-by-side table of every variant of the bundle's recipe, and kernel diffs against the first.

    :param links: each variant links its report page (a site's); False: names only (an embedding page)
    """
    if len(siblings) < 2:
        return ""
    base = siblings[0]
    base_name = escape_md(base.manifest.variant or base.name)
    header = ["Variant", "Mode", "Status", "Eager ms (95 % interval)", "Compiled ms (95 % interval)",
              f"Compiled vs {base_name}", "Speedup", "Compile (s)", "Peak memory (MiB)", "Busy % per graph",
              "CUDA graphs"]  # fmt: skip
    parts = [
        "## Variants",
        "Each variant ran in its own process with its own Inductor cache and its own eager baseline "
        "(timed interleaved with the compiled steps); busy % is PyTorch's `-p` definition where available. "
        "Compile times are cold unless marked: a warm cache skips compilation and autotuning. "
        "Step times are medians with their 95 % bootstrap intervals; a variant's compiled step is faster or "
        f"slower than {base_name}'s only where the two intervals do not overlap, otherwise within noise.",
        list_table(header, [_row(b, base, links) for b in siblings]),
    ]
    if bundle.name != base.name:  # by name: the page's bundle may be a redacted copy of its sibling's
        parts.append(_diff_section(base, bundle))
    else:
        parts.extend(_diff_section(base, other) for other in siblings[1:])
    return "\n\n".join(p for p in parts if p)
