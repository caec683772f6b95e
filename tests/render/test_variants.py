from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import Bundle, Interval, Kernel, TimingSummary, load_bundle
from reportgen.render.variants import _compile, compiled_verdict, kernel_diff, variants_section

MakeBundle = Callable[..., Path]


def _k(name: str, us: float) -> Kernel:
    return Kernel(name=name, category="triton_pointwise", device_time_us=us, count=1, share=0.1)


def test_kernel_diff_lists_new_gone_and_changed_kernels() -> None:
    base = [_k("a", 100.0), _k("b", 50.0), _k("gone", 10.0)]
    other = [_k("a", 40.0), _k("b", 55.0), _k("triton_tem_fused_mm_0", 30.0)]
    only_other, only_base, changes = kernel_diff(base, other)
    assert [k.name for k in only_other] == ["triton_tem_fused_mm_0"]
    assert [k.name for k in only_base] == ["gone"]
    assert changes == [("a", 100.0, 40.0), ("b", 50.0, 55.0)]


def test_compile_column_marks_a_warm_cache(tmp_path: Path, make_bundle: MakeBundle) -> None:
    manifest = load_bundle(make_bundle(tmp_path, "mixnet")).manifest
    cold = manifest.metrics.compile_time_s
    assert _compile(manifest) == f"{cold:.1f}"
    assert _compile(manifest.model_copy(update={"inductor_cache": "kept-empty"})) == f"{cold:.1f}"
    assert _compile(manifest.model_copy(update={"inductor_cache": "kept-warm"})) == f"{cold:.1f} (warm cache)"
    no_time = manifest.model_copy(update={"metrics": manifest.metrics.model_copy(update={"compile_time_s": None})})
    assert _compile(no_time) == "—"


def _variant(tmp_path: Path, make_bundle: MakeBundle, variant: str, compiled_ci: tuple[float, float] | None) -> Bundle:
    """A variant's bundle (compiled median 80 ms) whose analysis holds `compiled_ci` as the compiled interval."""
    bundle = load_bundle(make_bundle(tmp_path, f"mixnet--{variant}"))
    assert bundle.analysis is not None
    interval = None if compiled_ci is None else Interval(low=compiled_ci[0], high=compiled_ci[1])
    timing = TimingSummary(eager_median_ci_ms=Interval(low=118.0, high=122.0), compiled_median_ci_ms=interval)
    return dataclasses.replace(
        bundle,
        manifest=bundle.manifest.model_copy(update={"variant": variant}),
        analysis=bundle.analysis.model_copy(update={"timing": timing}),
    )


def test_compiled_verdict_only_outside_the_noise(tmp_path: Path, make_bundle: MakeBundle) -> None:
    base = _variant(tmp_path, make_bundle, "default", (79.0, 81.0))
    assert compiled_verdict(base, base) == "baseline"
    assert compiled_verdict(_variant(tmp_path, make_bundle, "fast", (70.0, 78.9)), base) == "faster"
    assert compiled_verdict(_variant(tmp_path, make_bundle, "slow", (81.1, 90.0)), base) == "slower"
    assert compiled_verdict(_variant(tmp_path, make_bundle, "touching", (70.0, 79.0)), base) == "within noise"
    assert compiled_verdict(_variant(tmp_path, make_bundle, "overlap", (80.5, 95.0)), base) == "within noise"
    assert compiled_verdict(_variant(tmp_path, make_bundle, "unknown", None), base) == "—"
    # A median far below the base's does not make a variant faster when its own interval reaches the base's.
    wide = _variant(tmp_path, make_bundle, "wide", (50.0, 79.5))
    assert compiled_verdict(wide, base) == "within noise"


def test_variants_table_shows_intervals_and_verdicts(tmp_path: Path, make_bundle: MakeBundle) -> None:
    base = _variant(tmp_path, make_bundle, "default", (79.0, 81.0))
    fast = _variant(tmp_path, make_bundle, "max-autotune", (70.0, 75.0))
    noisy = _variant(tmp_path, make_bundle, "reduce-overhead", (78.0, 90.0))
    text = variants_section(base, [base, fast, noisy])
    assert "* - Variant\n  - Mode\n  - Status\n  - Eager ms (95 % interval)\n  - Compiled ms (95 % interval)\n" in text
    assert "  - Compiled vs default\n  - Speedup\n" in text
    rows = text.split("* - [")[1:]
    assert "  - 120.00 (118.00–122.00)\n  - 80.00 (79.00–81.00)\n  - baseline\n  - 1.50×\n" in rows[0]
    assert "  - 80.00 (70.00–75.00)\n  - faster\n" in rows[1]
    assert "  - 80.00 (78.00–90.00)\n  - within noise\n" in rows[2]
    assert "faster or slower than default's only where the two intervals do not overlap" in text
    without = dataclasses.replace(base, analysis=None)
    assert "  - 120.00 (—)\n  - 80.00 (—)\n  - baseline\n" in variants_section(without, [without, fast])
