"""MyST Markdown text of the report pages: pure functions of bundle models, no file IO.

User text (titles, descriptions, kernel names, error messages) is escaped so it is shown as
written and can never inject MyST directives, roles or HTML.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reportgen.bundle import (
    Bundle,
    Environment,
    InductorCache,
    Kernel,
    KernelTable,
    Manifest,
    Roof,
    RunStatus,
    TimingSummary,
)
from reportgen.escape import myst_markdown
from reportgen.render.costs import COST_HEADER, cost_cells, costs_note, has_costs
from reportgen.render.kernel_names import short_kernel_name
from reportgen.render.markup import MISSING, SORTABLE, code_block, code_span, escape_md, figure, list_table
from reportgen.render.timing_text import (
    WALL_HEADING,
    host_probe_text,
    median_text,
    repeats_section,
    speedup_text,
    timing_method,
)

__all__ = ["ChartFiles", "kernels_text", "report_page", "report_title", "speedup_text"]


@dataclass(frozen=True)
class ChartFiles:
    """Chart images of a report page, as file names relative to the page; None = not drawn."""

    top_kernels: str | None = None
    categories: str | None = None
    step_times: str | None = None
    graph_categories: str | None = None
    timeline: str | None = None
    idle: str | None = None
    bandwidth: str | None = None
    modules: str | None = None
    roofline: str | None = None
    graph_rooflines: dict[str, str] | None = None
    """One roofline per graph with counted kernels: graph number (as text) -> file."""
    ranks: str | None = None
    """A distributed run's ranks over one profiled step."""

    def names(self) -> list[str]:
        """Every chart file drawn, the per-graph ones included."""
        found: list[str | None] = []
        for value in dataclasses.astuple(self):
            found += list(value.values()) if isinstance(value, dict) else [value]  # per-graph charts: a dict
        return [name for name in found if name is not None]


def _bullets(items: Iterable[tuple[str, str]]) -> str:
    return "\n".join(f"- **{key}:** {value}" for key, value in items)


def _summary(bundle: Bundle) -> str:
    manifest = bundle.manifest
    recipe, metrics, env = manifest.recipe, manifest.metrics, manifest.environment
    device = f"{env.device} ({escape_md(env.device_name)})" if env else f"{recipe.device} (not probed)"
    torch = env.versions.torch if env else None
    ci = (bundle.analysis.timing if bundle.analysis else None) or TimingSummary()
    items = [
        ("Model", code_span(recipe.model.ref)),
        ("Device", device),
        ("Torch", escape_md(torch) if torch else MISSING),
        ("Task", recipe.task),
        ("AMP", recipe.amp),
        ("Compile mode", escape_md(recipe.compile.mode)),
        ("Status", f"**{manifest.status.value}**"),
    ]
    wall = [
        ("Eager median", median_text(metrics.eager, ci.eager_median_ci_ms, ci.eager_cv)),
        ("Compiled median", median_text(metrics.compiled, ci.compiled_median_ci_ms, ci.compiled_cv)),
        ("Speedup", speedup_text(metrics, ci)),
        ("Host probe", host_probe_text(metrics)),
        ("Compile time", _compile_time(manifest)),
    ]
    repeats = repeats_section(bundle.analysis.figures, metrics) if bundle.analysis else ""  # what repeats leads
    parts = ("## Summary", _bullets(items), repeats, WALL_HEADING, _bullets(wall), timing_method(metrics, ci))
    return "\n\n".join(part for part in parts if part)


CACHE_NOTES: dict[InductorCache, str] = {
    "fresh": "cold: a fresh Inductor cache",
    "kept-empty": "cold: a kept Inductor cache, empty at the start",
    "kept-warm": "a kept Inductor cache from earlier runs: may be warm",
}
"""How the summary qualifies the compile time, by `Manifest.inductor_cache`."""


def _compile_time(manifest: Manifest) -> str:
    seconds = manifest.metrics.compile_time_s
    if seconds is None:
        return MISSING
    return f"{seconds:.1f} s ({CACHE_NOTES[manifest.inductor_cache]})"


def _analysis_failure(bundle: Bundle) -> str:
    if bundle.analysis is not None or not bundle.analysis_error:
        return ""
    return "\n\n".join(
        [
            "## Analysis failed",
            "The run ended ok, but its trace could not be analysed, so this page has no kernel tables, "
            "GPU-busy numbers or findings. Fix the cause and run `reportgen build` again: bundles without "
            "an analysis are analysed at every build.",
            code_block(bundle.analysis_error),
        ]
    )


def _failure(bundle: Bundle, log_tail: str | None) -> str:
    manifest = bundle.manifest
    if manifest.status is RunStatus.ok:
        return _analysis_failure(bundle)
    exit_code = "none" if manifest.exit_code is None else str(manifest.exit_code)
    parts = [
        "## Failure",
        f"The run ended with status **{manifest.status.value}** (exit code {exit_code}).",
        code_block(manifest.error) if manifest.error else "No error message was recorded.",
    ]
    if log_tail:
        parts += ["### Log tail", code_block(log_tail)]
    return "\n\n".join(parts)


def _charts(chart_files: ChartFiles) -> str:
    figures = []
    if chart_files.step_times:
        figures.append(
            figure(
                chart_files.step_times,
                "Eager and compiled step times",
                "Median step time; error bars span the inter-quartile range.",
            )
        )
    if chart_files.top_kernels:
        figures.append(
            figure(chart_files.top_kernels, "Longest kernels by time", "Longest kernels, coloured by category.")
        )
    if chart_files.categories:
        figures.append(figure(chart_files.categories, "Time per kernel category", "Time per kernel category."))
    return "\n\n".join(["## Charts", *figures]) if figures else ""


def _kernel_row(rank: int, kernel: Kernel) -> list[str]:
    return [
        str(rank),
        code_span(short_kernel_name(kernel.name)),
        escape_md(kernel.category),
        f"{kernel.device_time_us / 1000:.3f}",
        str(kernel.count),
        f"{kernel.mean_us:.1f}",
        f"{100 * kernel.share:.1f}",
    ]


def _kernels(table: KernelTable | None, max_kernels: int, roof: Roof | None, roofline: str | None) -> str:
    parts = ["## All kernels", kernels_text(table, max_kernels, roof)]
    if roofline:
        parts.append(figure(roofline, "Roofline", "Kernels of known FLOPs against the GPU's roofs, sized by time."))
    return "\n\n".join(parts)


def kernels_text(table: KernelTable | None, max_kernels: int, roof: Roof | None = None) -> str:
    """The `max_kernels` longest kernels: a sentence and a sortable table (no heading: embeddable alone)."""
    if table is None:
        return "No kernel table: the bundle has not been analysed or has no trace."
    if not table.kernels:
        return "The profiler recorded no kernels."
    shown = table.kernels[:max_kernels]
    share = 100 * sum(k.share for k in shown)
    time_kind = "device time" if table.device == "cuda" else "self CPU time"
    intro = (
        f"{len(shown)} of {len(table.kernels)} kernels ({share:.1f} % of {time_kind}), "
        f"times summed over {table.profiled_steps} profiled steps "
        f"({table.total_us / 1000:.2f} ms in all)."
    )
    header = ["Rank", "Kernel", "Category", "Total (ms)", "Count", "Mean (µs)", "Share (%)"]
    rows = [_kernel_row(rank, k) for rank, k in enumerate(shown, start=1)]
    if not has_costs(table):
        return "\n\n".join([intro, list_table(header, rows, classes=SORTABLE)])
    rows = [[*row, *cost_cells(k)] for row, k in zip(rows, shown, strict=True)]
    table_text = list_table([*header, *COST_HEADER], rows, classes=SORTABLE)
    return "\n\n".join([intro, table_text, costs_note(table, roof)])


def _environment(env: Environment | None) -> str:
    heading = "## Environment"
    if env is None:
        return f"{heading}\n\nNot recorded: the run ended before its environment was probed."
    versions = [(k, escape_md(v)) for k, v in env.versions.model_dump().items() if v is not None]
    gpus = [
        f"- GPU {g.index}: {escape_md(g.name)}, {g.total_memory_bytes / 2**30:.1f} GiB, "
        f"{g.multiprocessor_count} SMs, capability {escape_md(g.capability)}"
        + (f", peak {g.peak_bandwidth_gbps:.0f} GB/s" if g.peak_bandwidth_gbps else "")
        for g in env.gpus
    ]
    memory = f"{env.host.memory_bytes / 2**30:.1f} GiB" if env.host.memory_bytes else MISSING
    host = [("CPU", escape_md(env.host.cpu)), ("Cores", str(env.host.cpu_count)), ("Memory", memory)]
    variables = [f"- {code_span(f'{k}={v}')}" for k, v in sorted(env.env.items())]
    return "\n\n".join(
        [
            heading,
            "### Versions",
            _bullets(versions),
            "### Hardware",
            _bullets(host) + ("\n" + "\n".join(gpus) if gpus else ""),
            "### Environment variables",
            "\n".join(variables) if variables else "None of the recorded variables were set.",
        ]
    )


def _recipe(bundle: Bundle, recipe_yaml: str | None) -> str:
    if recipe_yaml is None:
        text = bundle.manifest.recipe.model_dump_json(indent=2, exclude_defaults=True)
        return "## Recipe\n\nThe recipe file is missing; as validated:\n\n" + code_block(text, "json")
    return "\n\n".join(
        [
            "## Recipe",
            "{download}`Download recipe.yaml <recipe.yaml>`",
            code_block(recipe_yaml, "yaml"),
        ]
    )


def report_title(manifest: Manifest) -> str:
    """The recipe's title, with ` — <variant>` for a variant's run."""
    title = manifest.recipe.display_title
    return f"{title} — {manifest.variant}" if manifest.variant else title


def _description(text: str) -> str:
    """The recipe's description as the Markdown it is written in, shown safely (`reportgen.escape.myst_markdown`)."""
    return myst_markdown(text)


def _variant(manifest: Manifest) -> str:
    """The variant's own description, which the recipe's (shared by every variant) cannot give."""
    if not manifest.variant:
        return ""
    text = f"**Variant {code_span(manifest.variant)}**"
    if manifest.variant_description.strip():
        text += ": " + escape_md(" ".join(manifest.variant_description.split()).rstrip("."))
    return text + "."


def report_page(
    bundle: Bundle,
    chart_files: ChartFiles,
    *,
    recipe_yaml: str | None = None,
    log_tail: str | None = None,
    max_kernels: int = 50,
    inductor_sections: Sequence[str] = (),
    leading_sections: Sequence[str] = (),
    trailing_sections: Sequence[str] = (),
) -> str:
    """The report page of one bundle.

    :param chart_files: charts already drawn next to the page
    :param recipe_yaml: the bundle's recipe.yaml text; when given, the page links a copy of it
        that the caller places next to the page as `recipe.yaml`
    :param log_tail: last lines of the run's log, shown for runs that did not end ok
    :param max_kernels: rows of the kernel table
    :param leading_sections: sections placed first, right under the title (findings)
    :param inductor_sections: GPU-busy, per-graph and benchmark sections (`render.graphs`), placed after the charts
    :param trailing_sections: sections placed after the environment, before the recipe (downloads)
    """
    recipe = bundle.manifest.recipe
    sections = [
        f"# {escape_md(report_title(bundle.manifest))}",
        *leading_sections,
        _description(recipe.description),
        _variant(bundle.manifest),
        _summary(bundle),
        _failure(bundle, log_tail),
        _charts(chart_files),
        *inductor_sections,
        _kernels(
            bundle.analysis.kernels if bundle.analysis else None,
            max_kernels,
            bundle.analysis.roof if bundle.analysis else None,
            chart_files.roofline,
        ),
        _environment(bundle.manifest.environment),
        *trailing_sections,
        _recipe(bundle, recipe_yaml),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"
