"""Builds of Sphinx projects that use `reportgen.sphinx`, run as `python -m sphinx` in tmp_path."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
BUNDLE = HERE.parent / "data" / "bundles" / "fused_add_mul"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
IMG_SRC = re.compile(r'<img [^>]*src="([^"]+)"')


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """The example project and the test bundle, copied with their relative layout kept."""
    shutil.copytree(HERE / "example", tmp_path / "sphinx_ext" / "example")
    shutil.copytree(BUNDLE, tmp_path / "data" / "bundles" / BUNDLE.name)
    return tmp_path / "sphinx_ext" / "example"


def build(source: Path, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Run sphinx-build on `source` into `out`; the result holds its stdout and stderr."""
    command = [sys.executable, "-m", "sphinx", "--no-color", *options, "-b", "html", str(source), str(out)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def assert_images(page: Path) -> list[str]:
    """The page's image sources; each must be a PNG file of the built site."""
    sources = IMG_SRC.findall(page.read_text(encoding="utf-8"))
    for src in sources:
        assert (page.parent / src).read_bytes().startswith(PNG_MAGIC), src
    return sources


def test_build_embeds_report_summary_and_charts(example: Path, tmp_path: Path) -> None:
    result = build(example, tmp_path / "html", "-W", "-n")
    assert result.returncode == 0, result.stderr
    page = tmp_path / "html" / "index.html"
    html = page.read_text(encoding="utf-8")
    assert "triton_poi_fused_add_mul_0" in html
    for number in ("0.94×", "0.118 ms", "0.125 ms", "3.5 s", "NVIDIA H200", "2.11.0+cu130", "<strong>ok</strong>"):
        assert number in html, number
    names = {Path(src).name for src in assert_images(page)}
    assert {"step_times.png", "top_kernels.png", "categories.png", "timeline.png", "idle_gaps.png"} <= names
    assert 'alt="Step times of the fused add-mul run"' in html
    assert 'style="width: 60%;"' in html
    # The report nests under "The whole report" (h2); the host's next h2 is a sibling again.
    assert re.search(r"<h3>Fused A \* B \+ C<a", html)
    assert re.search(r"<h4>Summary<a", html)
    assert re.search(r"<h2>After the report<a", html)
    assert re.search(r'href="(_downloads/[0-9a-f]+/recipe\.yaml)"', html)
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_touching_the_bundle_rereads_the_page(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "html"
    assert build(example, out, "-W", "-n").returncode == 0
    again = build(example, out, "-W", "-n")
    assert "0 added, 0 changed, 0 removed" in again.stdout
    manifest = tmp_path / "data" / "bundles" / BUNDLE.name / "manifest.json"
    later = time.time() + 5
    os.utime(manifest, (later, later))
    touched = build(example, out, "-W", "-n")
    assert touched.returncode == 0, touched.stderr
    assert "0 added, 1 changed, 0 removed" in touched.stdout
    assert "reading sources... [100%] index" in touched.stdout
    assert_images(out / "index.html")


def test_parallel_build(example: Path, tmp_path: Path) -> None:
    for n in range(6):  # more than 5 documents: Sphinx reads in parallel only then
        page = f"---\norphan: true\n---\n# Page {n}\n\n```{{perf-summary}} ../../data/bundles/fused_add_mul\n```\n\n"
        page += "```{perf-chart} ../../data/bundles/fused_add_mul\n:kind: categories\n```\n"
        (example / f"page{n}.md").write_text(page, encoding="utf-8")
    out = tmp_path / "html"
    result = build(example, out, "-W", "-n", "-j", "2")
    assert result.returncode == 0, result.stderr
    for n in range(6):
        assert [Path(src).name for src in assert_images(out / f"page{n}.html")] == ["categories.png"]
    cached = sorted(p.name for p in (out / ".doctrees" / "_reportgen").iterdir())
    assert len(cached) == 1
    assert cached[0].startswith("fused_add_mul-")


def test_missing_bundle_warns_once(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["reportgen.sphinx"]\n', encoding="utf-8")
    (source / "index.md").write_text("# Missing\n\n```{perf-report} ../no/such/bundle\n```\n", encoding="utf-8")
    result = build(source, tmp_path / "html")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, result.stderr
    assert "index.md:3" in warnings[0]
    assert "perf-report: no bundle at '../no/such/bundle'" in warnings[0]  # not "re-run the recipe": nothing is there
    assert f"(nothing at {source / '../no/such/bundle'})" in warnings[0] and "re-run" not in warnings[0]
    assert warnings[0].endswith("[reportgen.bundle]")
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert '<div class="admonition warning">' in html
    assert "no bundle at" in html


def test_an_absolute_bundle_path_and_a_wrong_kind_say_one_thing_each(tmp_path: Path) -> None:
    """`/ABS/bundle` outside the project is read where it is (Sphinx's "/x is the project's" only when that
    exists); an unknown `:kind:` is one error naming the choices, not a warning and an error."""
    shutil.copytree(BUNDLE, tmp_path / "elsewhere" / BUNDLE.name)
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["reportgen.sphinx"]\n', encoding="utf-8")
    absolute = tmp_path / "elsewhere" / BUNDLE.name
    page = f"# Abs\n\n```{{perf-summary}} {absolute}\n```\n\n```{{perf-chart}} {absolute}\n:kind: nope\n```\n"
    (source / "index.md").write_text(page, encoding="utf-8")
    result = build(source, tmp_path / "html")
    problems = [line for line in result.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert len(problems) == 1, result.stderr
    assert "perf-chart needs a :kind: option, one of categories" in problems[0] and "(got 'nope')" in problems[0]
    assert "NVIDIA H200" in (tmp_path / "html" / "index.html").read_text(encoding="utf-8")


RST_INDEX = """\
Host
====

.. note::

   .. perf-report:: fused_add_mul
      :max-kernels: 1

.. perf-chart:: fused_add_mul
   :kind: bandwidth

.. perf-summary:: corrupt
"""


def test_rst_host_bundle_root_and_problems(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copytree(BUNDLE, tmp_path / "bundles" / BUNDLE.name)
    (tmp_path / "bundles" / "corrupt").mkdir()
    (tmp_path / "bundles" / "corrupt" / "manifest.json").write_text("{", encoding="utf-8")
    conf = 'extensions = ["reportgen.sphinx"]\nreportgen_bundle_root = "../bundles"\n'
    (source / "conf.py").write_text(conf, encoding="utf-8")
    (source / "index.rst").write_text(RST_INDEX, encoding="utf-8")
    result = build(source, tmp_path / "html", "-n")
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 2, result.stderr
    assert "index.rst:9" in warnings[0]
    assert "has no data for a 'bandwidth' chart [reportgen.chart]" in warnings[0]
    assert "index.rst:12" in warnings[1]
    assert "cannot read bundle 'corrupt'" in warnings[1]
    assert "invalid JSON" in warnings[1]
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    # Inside an admonition the report's headings become rubrics.
    assert '<p class="reportgen-report rubric" id="fused-a-b-c">Fused A * B + C</p>' in html
    assert '<p class="rubric" id="summary">Summary</p>' in html
    assert "1 of 1 kernels" in html
    assert_images(tmp_path / "html" / "index.html")


def test_build_imports_neither_torch_nor_the_runner(example: Path, tmp_path: Path) -> None:
    script = (
        "import sys\nfrom sphinx.cmd.build import main\n"
        f"assert main(['-W', '-q', '-b', 'html', {str(example)!r}, {str(tmp_path / 'html')!r}]) == 0\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('torch.', 'reportgen.run'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_credentials_in_an_embedded_bundle_never_reach_the_page(example: Path, tmp_path: Path) -> None:
    """A bundle from elsewhere whose description and recipe copy hold credentials: redacted on the page."""
    bundle = tmp_path / "data" / "bundles" / BUNDLE.name
    token, password = "ghp_" + "Xy12" * 9, "pw-embedded-42"
    manifest = (bundle / "manifest.json").read_text(encoding="utf-8")
    marker = '"description": "'
    assert marker in manifest
    (bundle / "manifest.json").write_text(
        manifest.replace(marker, f"{marker}token {token} at https://u:{password}@h/ ", 1), encoding="utf-8"
    )
    (bundle / "recipe.yaml").write_text(
        (bundle / "recipe.yaml").read_text(encoding="utf-8") + f"# {token}\n", encoding="utf-8"
    )
    result = build(example, tmp_path / "html")
    assert result.returncode == 0, result.stderr
    for path in (tmp_path / "html").rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes() and password.encode() not in path.read_bytes(), path
    assert "https://u:[redacted]&#64;h/" in (tmp_path / "html" / "index.html").read_text(encoding="utf-8")


def test_perf_trend_draws_the_kept_runs_and_notes_a_single_one(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(BUNDLE, results / "fused_add_mul")
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["reportgen.sphinx"]\n', encoding="utf-8")
    (source / "index.md").write_text("# Trend\n\n```{perf-trend} ../results/fused_add_mul\n```\n", encoding="utf-8")
    one = build(source, tmp_path / "one", "-W")  # one run: a note on the page, no warning (it is no mistake)
    assert one.returncode == 0 and "WARNING" not in one.stderr, one.stderr
    assert "shows from its second run on" in (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    kept = results / ".history" / "fused_add_mul" / "20250101T000000-00000000"
    shutil.copytree(BUNDLE, kept)
    manifest = kept / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"started_at": "2026-11-22', '"started_at": "2026-11-01'))
    result = build(source, tmp_path / "html", "-W")
    assert result.returncode == 0, result.stderr
    page = tmp_path / "html" / "index.html"
    assert [Path(src).name.startswith("trend-") for src in assert_images(page)] == [True]
    assert 'alt="Trend over 2 runs: ' in page.read_text(encoding="utf-8")
    # The history index is the build's, not the host's nor the results': nothing written beside them.
    assert not list(tmp_path.glob("src/**/*.sqlite")) and not list(results.glob("**/*.sqlite"))
    # Its dependencies are the runs' files, so a build with nothing changed reads nothing again ...
    again = build(source, tmp_path / "html", "-W")
    assert "0 added, 0 changed, 0 removed" in again.stdout, again.stdout
    # ... and a new run (the latest's manifest rewritten) reads the page again.
    later = time.time() + 5
    os.utime(results / "fused_add_mul" / "manifest.json", (later, later))
    assert "0 added, 1 changed, 0 removed" in build(source, tmp_path / "html", "-W").stdout


def test_perf_overview_lists_every_run_failures_first_without_links(tmp_path: Path) -> None:
    """Issue 29: an embedding project gets the front page's state of the runs; its rows link nowhere (it has no
    report pages), so `-W -n` passes; an unreadable bundle is one warning (suppressible), counted."""
    results = tmp_path / "results"
    shutil.copytree(BUNDLE, results / "a-gpu")
    shutil.copytree(BUNDLE, results / "b-crashed")
    manifest = results / "b-crashed" / "manifest.json"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace('"status": "ok"', '"status": "failed"'), encoding="utf-8"
    )
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["reportgen.sphinx"]\nexclude_patterns = ["_build"]\n')
    (source / "index.md").write_text("# Team\n\n```{perf-overview} ../results\n```\n", encoding="utf-8")
    result = build(source, tmp_path / "html", "-W", "-n")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "2 runs: 1 failed, 1 ok." in html
    assert html.index("<strong>failed</strong>") < html.index("<p>ok</p>")  # the failed run's row comes first
    assert "reports/" not in html
    (results / "c-bad").mkdir()
    (results / "c-bad" / "manifest.json").write_text("{", encoding="utf-8")
    again = build(source, tmp_path / "html2", "-W", "-n")
    assert again.returncode == 1 and "perf-overview: cannot read bundle 'c-bad'" in again.stderr
    quiet = build(source, tmp_path / "html3", "-W", "-n", "-D", "suppress_warnings=reportgen.bundle")
    assert quiet.returncode == 0, quiet.stderr
    assert "2 runs: 1 failed, 1 ok; 1 bundle could not be read" in (tmp_path / "html3" / "index.html").read_text()


FINE_RST = """\
Host
====

Kernels
-------

.. perf-kernels:: fused_add_mul
   :top: 1

.. perf-kernels:: fused_add_mul
   :graph: 0

.. perf-kernels:: fused_add_mul
   :graph: 7

Findings
--------

.. perf-findings:: fused_add_mul

Variants
--------

.. perf-variants:: fused_add_mul--max-autotune

Whole report, out of the contents
---------------------------------

.. perf-report:: fused_add_mul
   :no-toc:
"""


def test_finer_directives_in_an_rst_host(tmp_path: Path) -> None:
    """A kernel table (of the bundle, of one graph), the findings, the variants and a report that adds nothing to
    the host's table of contents, each on its own, in reStructuredText."""
    results = tmp_path / "results"
    shutil.copytree(BUNDLE, results / BUNDLE.name)
    variant = results / "fused_add_mul--max-autotune"  # a second variant of the same recipe
    shutil.copytree(BUNDLE, variant)
    manifest = json.loads((variant / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(name=variant.name, variant="max-autotune")
    (variant / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    source = tmp_path / "src"
    source.mkdir()
    conf = 'extensions = ["reportgen.sphinx"]\nreportgen_bundle_root = "../results"\n'
    (source / "conf.py").write_text(conf, encoding="utf-8")
    (source / "index.rst").write_text(FINE_RST, encoding="utf-8")
    result = build(source, tmp_path / "html", "-n")
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert (
        len(warnings) == 1
        and "perf-kernels: bundle 'fused_add_mul' has no compiled graph 7 (its graphs: 0)" in (warnings[0])
    ), result.stderr
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    tables = re.findall(r"<table[^>]*reportgen-sortable[^>]*>.*?</table>", html, re.S)
    assert "1 of 1 kernels" in html and len(tables) >= 2
    assert "ATen ops fused" in tables[1]  # the graph's table has the graph's columns
    assert 'class="admonition' in html.split('id="findings"')[1].split('id="variants"')[0]
    assert "max-autotune" in html.split('id="variants"')[1] and "Compile (s)" in html
    after = html.split('id="whole-report-out-of-the-contents"')[1].split("</h2>", 1)[1].split("</main>")[0]
    after = after.split('class="sphinxsidebar"')[0]
    assert "<h2" not in after and "<h3" not in after and 'rubric" id="summary"' in after
    assert sorted(re.findall(r"<h2>([^<]+)<a", html)) == sorted(
        ["Kernels", "Findings", "Variants", "Whole report, out of the contents"]
    )
