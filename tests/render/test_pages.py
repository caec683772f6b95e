"""Tests of reportgen.render.pages (page text)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import Bundle, Interval, RunStatus, TimingSummary, load_bundle
from reportgen.render.markup import code_block, code_span, escape_md
from reportgen.render.pages import ChartFiles, report_page

MakeBundle = Callable[..., Path]
CHARTS = ChartFiles(top_kernels="top.png", categories="cat.png", step_times="steps.png")
GPU_BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundles" / "fused_add_mul"
EVIL_TITLE = "<script>alert(1)</script> {eval-rst} `x` [a](b) *b* | 1. %c"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<script>", r"\<script\>"),
        ("{eval-rst}", r"\{eval\-rst\}"),
        ("`code`", r"\`code\`"),
        ("a\n\n  b", "a b"),
        ("1. first", r"1\. first"),
        ("a & b | c", r"a \& b \| c"),
        ("plain text", "plain text"),
    ],
)
def test_escape_md(text: str, expected: str) -> None:
    assert escape_md(text) == expected


def test_code_span_and_block_outlast_backticks() -> None:
    assert code_span("a`b") == "``a`b``"
    assert code_span("`x`") == "`` `x` ``"
    assert code_block("x\n```\ny", "text") == "````text\nx\n```\ny\n````"


def test_report_page_ok(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(make_bundle(tmp_path, "mixnet", title="Mixnet L"))
    page = report_page(bundle, CHARTS, recipe_yaml="name: mixnet\n")
    assert page.startswith("# Mixnet L\n")
    assert "- **Device:** cuda (NVIDIA H100 80GB HBM3)" in page
    assert "- **Speedup:** 1.50×" in page
    assert "- **Eager median:** 120.00 ms" in page
    assert "- **Compile time:** 160.0 s" in page
    assert "* - 1\n  - `triton_per_fused__native_batch_norm_legit_functional_0`" in page
    assert "  - `at::native::vectorized_elementwise_kernel`\n  - aten\\_native" in page
    assert "  - 9.100\n  - 30\n  - 303.3\n  - 43.3" in page
    assert "```{figure} top.png\n:alt: Longest kernels by time" in page
    assert "```yaml\nname: mixnet\n```" in page
    assert "`TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1`" in page
    assert "## Failure" not in page
    assert [line for line in page.splitlines() if line.startswith("# ")] == ["# Mixnet L"]


def test_report_page_escapes_user_text(tmp_path: Path, make_bundle: MakeBundle) -> None:
    kernels = [("evil<script>`{eval-rst}`", "other", 10.0, 1)]
    bundle = load_bundle(make_bundle(tmp_path, "evil", title=EVIL_TITLE, kernels=kernels))
    page = report_page(bundle, ChartFiles())
    assert "<script>alert" not in page.split("```", 1)[0]
    assert page.startswith(r"# \<script\>alert\(1\)\</script\> \{eval\-rst\} \`x\` \[a\]\(b\)")
    assert "  - `` evil<script>`{eval-rst}` ``" in page
    assert "## Charts" not in page


def test_report_page_failed(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(make_bundle(tmp_path, "crash", status=RunStatus.failed))
    page = report_page(bundle, ChartFiles(), log_tail="line 1\nTraceback ```")
    assert "The run ended with status **failed** (exit code 1)." in page
    assert "```text\nRuntimeError: CUDA error: an illegal memory access <b>was</b> `encountered`\n```" in page
    assert "### Log tail\n\n````text\nline 1\nTraceback ```\n````" in page
    assert "- **Speedup:** —" in page
    assert "No kernel table" in page
    assert "The recipe file is missing" in page


def test_report_page_gives_the_variants_own_description(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(make_bundle(tmp_path, "mixnet--max-autotune", title="Mixnet L"))
    manifest = bundle.manifest.model_copy(
        update={"variant": "max-autotune", "variant_description": "autotuned GEMM\n templates <b>, CUDA graphs."}
    )
    page = report_page(dataclasses.replace(bundle, manifest=manifest), CHARTS)
    assert page.startswith("# Mixnet L — max\\-autotune\n")
    assert "\n**Variant `max-autotune`**: autotuned GEMM templates \\<b\\>, CUDA graphs.\n" in page
    plain = report_page(bundle, CHARTS)
    assert "**Variant" not in plain


TIMING = TimingSummary(
    eager_median_ci_ms=Interval(low=118.8, high=121.2),
    compiled_median_ci_ms=Interval(low=79.2, high=80.8),
    speedup_ci=Interval(low=1.46, high=1.53),
    eager_cv=0.026,
    compiled_cv=0.025,
    resamples=2000,
    paired=True,
)
METHOD = (
    "Step times are measured in blocks of {steps} run back to back with one synchronisation per block, eager and "
    "compiled blocks alternating, {blocks}; medians are shown with 95 % bootstrap intervals, and CV (standard "
    "deviation ÷ mean of the blocks) is the run-to-run noise."
)


def _with_timing(bundle: Bundle, timing: TimingSummary | None) -> Bundle:
    assert bundle.analysis is not None
    return dataclasses.replace(bundle, analysis=bundle.analysis.model_copy(update={"timing": timing}))


def test_summary_shows_intervals_noise_and_the_timing_method(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = _with_timing(load_bundle(make_bundle(tmp_path, "mixnet")), TIMING)
    summary = report_page(bundle, CHARTS).split("## Summary\n\n", 1)[1].split("\n\n## ", 1)[0]
    wall = summary.split("### Wall figures (host-dependent)\n\n", 1)[1]
    _, bullets, method = wall.split("\n\n")
    assert "- **Eager median:** 120.00 ms (95 % interval 118.80–121.20 ms), CV 2.6 %" in bullets.splitlines()
    assert "- **Compiled median:** 80.00 ms (95 % interval 79.20–80.80 ms), CV 2.5 %" in bullets.splitlines()
    assert "- **Speedup:** 1.50× (95 % interval 1.46–1.53×)" in bullets.splitlines()
    assert method == METHOD.format(steps="1 step", blocks="5 blocks each")


def test_timing_method_states_the_hosts_noise_when_probed(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = _with_timing(load_bundle(make_bundle(tmp_path, "mixnet")), TIMING.model_copy(update={"host_cv": 0.264}))
    page = report_page(bundle, CHARTS)
    assert (
        METHOD.format(steps="1 step", blocks="5 blocks each") + " Before each pair of blocks a fixed CPU workload was "
        "timed: its CV of 26 % is how much the host's CPU speed varied meanwhile (launch-bound steps are CPU time)."
    ) in page


def test_timing_method_names_block_size_and_uneven_counts(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(make_bundle(tmp_path, "mixnet"))
    metrics = bundle.manifest.metrics
    assert metrics.eager is not None and metrics.compiled is not None
    eager = metrics.eager.model_copy(update={"block_steps": 5})
    compiled = metrics.compiled.model_copy(update={"block_steps": 5, "samples_ms": metrics.compiled.samples_ms[:4]})
    manifest = bundle.manifest.model_copy(
        update={"metrics": metrics.model_copy(update={"eager": eager, "compiled": compiled})}
    )
    page = report_page(dataclasses.replace(bundle, manifest=manifest), CHARTS)
    assert METHOD.format(steps="5 steps", blocks="5 and 4 blocks respectively") in page


def test_summary_without_timing_marks_intervals_unknown(tmp_path: Path, make_bundle: MakeBundle) -> None:
    page = report_page(load_bundle(make_bundle(tmp_path, "mixnet")), CHARTS)  # analysed before timing existed
    assert "- **Eager median:** 120.00 ms (95 % interval —), CV —\n" in page
    assert "- **Speedup:** 1.50× (95 % interval —)\n" in page
    assert "Step times are measured in blocks of 1 step" in page
    failed = report_page(load_bundle(make_bundle(tmp_path, "crash", status=RunStatus.failed)), ChartFiles())
    assert "- **Eager median:** —\n" in failed and "- **Speedup:** —\n" in failed
    assert "Step times are measured" not in failed


def test_summary_shows_sub_millisecond_steps_to_three_digits() -> None:
    timing = TimingSummary(
        eager_median_ci_ms=Interval(low=0.11622, high=0.11921),
        compiled_median_ci_ms=Interval(low=0.12253, high=0.12909),
        speedup_ci=Interval(low=0.912, high=0.959),
        eager_cv=0.139,
        compiled_cv=0.202,
    )
    page = report_page(_with_timing(load_bundle(GPU_BUNDLE), timing), ChartFiles())
    assert "- **Eager median:** 0.118 ms (95 % interval 0.116–0.119 ms), CV 13.9 %\n" in page
    assert "- **Compiled median:** 0.125 ms (95 % interval 0.123–0.129 ms), CV 20.2 %\n" in page
    assert "- **Speedup:** 0.94× (95 % interval 0.91–0.96×)\n" in page
    assert METHOD.format(steps="1 step", blocks="20 blocks each") in page


def test_a_table_shows_at_most_its_bound_of_rows() -> None:
    """A bundle made elsewhere may list 250,000 kernels: a page's table stops at `MAX_TABLE_ROWS` and says how many
    rows it left out."""
    from reportgen.render.markup import MAX_TABLE_ROWS, list_table

    rows = ([str(n), f"k{n}"] for n in range(MAX_TABLE_ROWS + 1234))
    table = list_table(["#", "kernel"], rows)
    assert table.count("* - ") == MAX_TABLE_ROWS + 2  # header, the rows, the note
    assert f"… 1,234 more rows (a table shows at most {MAX_TABLE_ROWS:,})" in table
    assert f"* - {MAX_TABLE_ROWS - 1}\n" in table and f"* - {MAX_TABLE_ROWS}\n" not in table
    small = list_table(["#"], [["1"], ["2"]])
    assert small.count("* - ") == 3 and "more rows" not in small
