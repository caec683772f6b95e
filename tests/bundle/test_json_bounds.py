"""A bundle's JSON files are bounded once parsed: size, nesting, lengths, strings and numbers; each past one is
one located message or warning, never a traceback."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import MAX_JSON_BYTES, RunStatus, load_bundle, read_analysis, read_manifest
from reportgen.bundle.json_bounds import MAX_JSON_DEPTH, MAX_JSON_ITEMS, MAX_JSON_STRING_CHARS
from reportgen.errors import BundleError

__all__: list[str] = []

MakeBundle = Callable[..., Path]


def _edit(path: Path, change: Callable[[dict], None], raw: Callable[[str], str] = lambda text: text) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(raw(json.dumps(data)))


def test_a_json_file_over_its_size_bound_is_not_read(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = make_bundle(tmp_path, "big")
    assert MAX_JSON_BYTES == 32 << 20
    _edit(
        bundle / "analysis.json",
        lambda d: d.update(findings=[]),
        lambda t: t[:-1] + ', "pad": "' + "x" * (33 << 20) + '"}',
    )
    started = time.monotonic()
    with pytest.raises(BundleError, match="over the 33554432-byte bound"):
        read_analysis(bundle)
    assert time.monotonic() - started < 1


def test_a_long_string_is_cut_with_one_warning(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    bundle = make_bundle(tmp_path, "long")
    _edit(bundle / "manifest.json", lambda d: d.update(error="E" * (5 << 20)))
    with caplog.at_level(logging.WARNING):
        manifest = read_manifest(bundle)
    error = manifest.error or ""
    assert len(error) == MAX_JSON_STRING_CHARS and error.endswith("… [cut]")
    assert [r.getMessage() for r in caplog.records] == [
        f"{bundle / 'manifest.json'}: 1 strings cut to 262144 characters"
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            lambda t: t[:-1] + ', "x": ' + "[" * (MAX_JSON_DEPTH + 2) + "]" * (MAX_JSON_DEPTH + 2) + "}",
            "nested deeper than 64",
        ),
        (lambda t: t[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid JSON: maximum recursion depth"),
        (lambda t: t[:-1] + ', "x": [' + ",".join(["0"] * (MAX_JSON_ITEMS + 1)) + "]}", "250,001 entries at x"),
        (
            lambda t: t.replace('"profiled_steps": 3', '"profiled_steps": 1' + "0" * 5000),
            "invalid JSON: Exceeds the limit",
        ),
    ],
    ids=["deep", "deeper-than-the-parser", "long-list", "int-of-5000-digits"],
)
def test_structure_past_a_bound_is_one_located_error(
    tmp_path: Path, make_bundle: MakeBundle, raw: Callable[[str], str], message: str
) -> None:
    bundle = make_bundle(tmp_path, "odd")
    _edit(bundle / "analysis.json", lambda d: None, raw)
    with pytest.raises(BundleError) as info:
        read_analysis(bundle)
    assert message in info.value.message and info.value.path == str(bundle / "analysis.json")


def test_non_finite_numbers_become_missing_or_leave_their_row(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    """NaN, Infinity and 1e999 (Infinity once parsed): an optional number becomes None (shown as "—"), a kernel
    row whose time is not a number is left out, so is a sample, and a step-times block whose median is not."""
    bundle = make_bundle(tmp_path, "nan")

    def kernels(data: dict) -> None:
        rows = data["kernels"]["kernels"]
        rows[0]["device_time_us"], rows[2]["share"] = "INF", "NAN"

    def numbers(text: str) -> str:
        return text.replace('"INF"', "Infinity").replace('"NAN"', "NaN")

    _edit(bundle / "analysis.json", kernels, numbers)

    def metrics(data: dict) -> None:
        data["metrics"].update(compile_time_s="BIG")
        data["metrics"]["eager"]["median_ms"] = "NAN"
        data["metrics"]["compiled"]["samples_ms"][1] = "-INF"
        data["wall_time_s"] = 5.0

    _edit(
        bundle / "manifest.json", metrics, lambda t: numbers(t).replace('"BIG"', "1e999").replace('"-INF"', "-Infinity")
    )
    with caplog.at_level(logging.WARNING):
        loaded = load_bundle(bundle)
    assert loaded.analysis is not None
    names = [k.name for k in loaded.analysis.kernels.kernels]
    assert len(names) == 3 and "triton_poi_fused_add_mul_sigmoid_1" not in names
    assert loaded.manifest.metrics.compile_time_s is None
    assert loaded.manifest.metrics.eager is None and loaded.manifest.metrics.speedup is None
    compiled = loaded.manifest.metrics.compiled
    assert compiled is not None and len(compiled.samples_ms) == 4 and compiled.median_ms == 80.0
    warnings = [r.getMessage() for r in caplog.records]
    assert any("manifest.json: 3 numbers not finite" in w and "first at metrics.compile_time_s" in w for w in warnings)
    assert any("analysis.json: 2 numbers not finite" in w for w in warnings)


def test_a_required_number_with_nowhere_to_go_refuses_the_file(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = make_bundle(tmp_path, "total", status=RunStatus.ok)
    _edit(bundle / "manifest.json", lambda d: d.update(wall_time_s="NAN"), lambda t: t.replace('"NAN"', "NaN"))
    with pytest.raises(BundleError, match=r"invalid manifest\.json: wall_time_s: Field required"):
        read_manifest(bundle)
