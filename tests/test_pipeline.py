"""End to end on the CPU: recipes → child runs → bundles → MyST → `sphinx-build -W` → HTML."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

RECIPES = Path(__file__).resolve().parent / "data" / "recipes"
PNG = b"\x89PNG\r\n\x1a\n"


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reportgen", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=1200
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("e2e")
    recipes = [RECIPES / f"{name}.yaml" for name in ("addmul", "tiny_train", "addmul_variants", "autotune_mlp")]
    proc = _cli("report", *recipes, "-o", "results", "--out", "site", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "site: " in proc.stdout
    return work


def _images(html: Path) -> list[Path]:
    srcs = re.findall(r'<img[^>]+src="([^"]+)"', html.read_text(encoding="utf-8"))
    return [(html.parent / s).resolve() for s in srcs]


@pytest.mark.slow
def test_report_page_shows_cpu_kernels_charts_and_step_times(site: Path) -> None:
    html = site / "site" / "_build" / "html" / "reports" / "addmul" / "index.html"
    text = html.read_text(encoding="utf-8")
    assert "cpp_fused_add_mul_0" in text
    assert "cpp_fused" in text
    assert "&lt;tiny&gt;" in text and "<tiny>" not in text
    for word in ("eager", "compiled", "speedup"):
        assert word in text.lower()
    images = _images(html)
    assert len(images) >= 3
    for image in images:
        data = image.read_bytes()
        assert data.startswith(PNG) and len(data) > 2000, image


@pytest.mark.slow
def test_training_report_and_index(site: Path) -> None:
    root = site / "site" / "_build" / "html"
    train = (root / "reports" / "tiny_train" / "index.html").read_text(encoding="utf-8")
    assert "cpp_fused" in train
    index = (root / "reports" / "index.html").read_text(encoding="utf-8")
    assert "addmul" in index and "tiny_train" in index
    assert (site / "results" / "addmul" / "analysis.json").is_file()


@pytest.mark.slow
def test_max_autotune_choices_reach_the_bundle_and_the_pages(site: Path) -> None:
    from reportgen.bundle import AUTOTUNE_TEMPLATE_PREFIXES, load_bundle

    bundle = load_bundle(site / "results" / "autotune_mlp--max-autotune")
    assert bundle.capture is not None and bundle.capture.autotune, "no AUTOTUNE block parsed from run.log"
    op = bundle.capture.autotune[0]
    assert op.op in ("packed_linear", "mm", "addmm", "linear") and len(op.choices) >= 2
    assert op.benchmark_s is not None and op.num_choices and op.num_choices >= 2
    assert not load_bundle(site / "results" / "autotune_mlp--default").capture.autotune
    categories = {k.category for k in bundle.analysis.kernels.kernels}
    # Which choice wins is a timing on a shared host: the C++ GEMM template (profiled as graph_0_gemm_..._kernel)
    # or oneDNN/MKL. The kernel table follows the winners either way.
    winners = [o.winner.name for o in bundle.capture.autotune if o.winner is not None]
    if any(name.startswith(AUTOTUNE_TEMPLATE_PREFIXES) for name in winners):
        assert "cpp_template" in categories, winners
    else:
        assert "extern_gemm" in categories and "cpp_template" not in categories, winners
    root = site / "site" / "_build" / "html" / "reports"
    page = (root / "autotune_mlp--max-autotune" / "index.html").read_text(encoding="utf-8")
    assert "Autotuning" in page and op.winner.name in page
    assert "autotuned in" in (root / "autotune_mlp--default" / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_run_exits_nonzero_when_a_recipe_fails(tmp_path: Path) -> None:
    proc = _cli("run", RECIPES / "raising.yaml", "-o", "results", cwd=tmp_path)
    assert proc.returncode == 1
    assert "raising: failed" in proc.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nmodle: {}\n", "unknown key 'modle'"),
        ("name: [x\n", "recipe.yaml:"),
    ],
)
def test_bad_recipe_is_one_line_without_traceback(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "recipe.yaml").write_text(text)
    proc = _cli("run", "recipe.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_variants_are_compared_side_by_side(site: Path) -> None:
    root = site / "site" / "_build" / "html" / "reports"
    assert (site / "results" / "addmul_variants--default" / "manifest.json").is_file()
    page = (root / "addmul_variants--fullgraph" / "index.html").read_text(encoding="utf-8")
    assert "Variants" in page and "addmul_variants--default/index.html" in page
    assert "Only in" in page
    index = (root / "index.html").read_text(encoding="utf-8")
    assert "fullgraph" in index


@pytest.mark.slow
def test_findings_come_first_on_the_report_page(site: Path) -> None:
    text = (site / "site" / "reports" / "addmul" / "index.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("## ")]
    assert lines[0] == "## Findings"


def test_variant_option_selects_variants_and_rejects_unknown_names(tmp_path: Path) -> None:
    from reportgen.errors import RecipeError
    from reportgen.pipeline import _selected
    from reportgen.recipe import load_recipe

    path = RECIPES / "addmul_variants.yaml"
    recipe = load_recipe(path)
    assert [v.name for v in _selected(recipe, path, ["fullgraph"])] == ["fullgraph"]  # type: ignore[union-attr]
    assert len(_selected(recipe, path, None)) == len(recipe.variants) > 1
    assert _selected(load_recipe(RECIPES / "addmul.yaml"), path, ["fullgraph"]) == [None]
    with pytest.raises(RecipeError, match="no variant 'nope'; expected one of default, fullgraph"):
        _selected(recipe, path, ["nope"])
    proc = _cli("run", path, "--variant", "nope", "-o", "results", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "addmul_variants.yaml: recipe 'addmul_variants' has no variant 'nope'" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_running_needs_no_rendering_libraries() -> None:
    """`reportgen run` works where only torch and the run's deps are installed (e.g. a GPU image)."""
    code = (
        "import sys; from reportgen import cli, pipeline; import reportgen.run.child, reportgen.analyze;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'nbformat', 'nbclient', 'sphinx', 'matplotlib', 'myst_parser', 'docutils', 'jinja2'}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_build_analyses_bundles_that_have_no_analysis(tmp_path: Path) -> None:
    import shutil

    from reportgen.bundle import read_analysis
    from reportgen.pipeline import analyze_missing

    source = Path(__file__).resolve().parent / "data" / "bundles" / "fused_add_mul"
    bundle = tmp_path / "results" / "fused_add_mul"
    shutil.copytree(source, bundle)
    before = read_analysis(bundle)
    (bundle / "analysis.json").unlink()
    assert analyze_missing(tmp_path / "results") == [bundle]
    after = read_analysis(bundle)
    assert after is not None and before is not None
    assert after.kernels == before.kernels
    assert analyze_missing(tmp_path / "results") == []  # analysed once


def test_build_warns_about_a_bundle_whose_trace_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from reportgen.pipeline import analyze_missing

    bundle = tmp_path / "results" / "fused_add_mul"
    shutil.copytree(Path(__file__).resolve().parent / "data" / "bundles" / "fused_add_mul", bundle)
    (bundle / "analysis.json").unlink()
    raw = (bundle / "trace.json.gz").read_bytes()
    (bundle / "trace.json.gz").write_bytes(raw[: len(raw) // 2])
    assert analyze_missing(tmp_path / "results") == [bundle]
    assert not (bundle / "analysis.json").exists()
    err = capsys.readouterr().err
    assert "reportgen: warning: fused_add_mul not analysed: " in err
    assert "truncated gzip" in err
    # the reason reaches the page too, and goes once the trace can be read
    from reportgen.bundle import load_bundle
    from reportgen.render.pages import ChartFiles, report_page

    loaded = load_bundle(bundle)
    assert loaded.analysis is None and "truncated gzip" in (loaded.analysis_error or "")
    page = report_page(loaded, ChartFiles())
    assert "## Analysis failed" in page and "truncated gzip" in page
    (bundle / "trace.json.gz").write_bytes(raw)
    assert analyze_missing(tmp_path / "results") == [bundle]
    assert load_bundle(bundle).analysis_error is None and not (bundle / "analysis-error.txt").exists()


def test_a_recipe_as_its_variant_runs_it() -> None:
    """`pipeline.variant_recipe`: the recipe with a variant's options applied; as written without one; a variant the
    recipe lacks is a `RecipeError` naming it."""
    from reportgen.errors import RecipeError
    from reportgen.pipeline import variant_recipe
    from reportgen.recipe import load_recipe

    path = Path(__file__).resolve().parents[1] / "recipes" / "mixnet_l.yaml"
    written = load_recipe(path)
    assert variant_recipe(path, None) == written
    chosen = variant_recipe(path, "reduce-overhead")
    assert (chosen.compile.mode, chosen.variants) == ("reduce-overhead", [])
    with pytest.raises(RecipeError, match="nope"):
        variant_recipe(path, "nope")
