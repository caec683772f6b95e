"""Source pages: their text, which kernels get one, and a Sphinx `-W` build of them."""

from __future__ import annotations

import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from reportgen.bundle import (
    MANIFEST_FILE,
    GraphModule,
    IndexedKernel,
    ModuleFile,
    ModuleIndex,
    read_analysis,
    read_manifest,
    write_analysis,
)
from reportgen.formats import module_index, parse_wrapper
from reportgen.pipeline import build as build_site
from reportgen.render.sources import (
    MAX_HIGHLIGHTED_BYTES,
    SourcePages,
    kernel_docname,
    kernel_page,
    select_kernels,
    source_link,
    sources_section,
    wrapper_docname,
    wrapper_page,
)
from tests.data import H100_FIXTURE

FIXTURE = H100_FIXTURE

FORWARD = textwrap.dedent(
    """\
    # AOT ID: ['0_forward']
    async_compile = AsyncCompile()

    # kernel path: /tmp/inductor/ab/cabc.py
    # Topologically Sorted Source Nodes: [mul, add], Original ATen: [aten.mul, aten.add]
    triton_poi_fused_add_mul_0 = async_compile.triton('triton_poi_fused_add_mul_0', '''
    import triton
    DOC = "`````"
    ''', device_str='cuda')

    # kernel path: /tmp/inductor/cd/ccde.py
    # Topologically Sorted Source Nodes: [sum_1], Original ATen: [aten.sum]
    triton_red_fused_sum_1 = async_compile.triton('triton_red_fused_sum_1', '''
    import triton
    ''', device_str='cuda')

    cpp_fused_relu_2 = async_compile.cpp_pybinding(['float*'], r'''
    extern "C" void kernel(float* out_ptr0) {}
    ''')

    async_compile.wait(globals())

    class Runner:
        def call(self, args):
            primals_1, primals_2 = args
            buf0 = extern_kernels.convolution(primals_1, primals_2)
            triton_poi_fused_add_mul_0.run(buf0)
    """
)
BACKWARD = FORWARD.replace("0_forward", "0_backward").replace("primals_2 = args", "tangents_1 = args")
KERNEL_MODULE = "import triton\ninductor_meta={'kernel_num_gb': 0.0125}\nDOC = '`````'\n"


def _graph(graph: int, source: str) -> GraphModule:
    return GraphModule(graph=graph, wrapper_path=f"modules/wrappers/w{graph}.py", info=parse_wrapper(source))


def _index(with_modules: bool = True) -> ModuleIndex:
    graphs = (_graph(0, FORWARD), _graph(1, BACKWARD))
    kernels = [
        IndexedKernel(
            graph=g.graph,
            source=k,
            module_path=f"modules/kernels/{k.kernel_path}" if with_modules and k.kernel_path else None,
            num_gb=0.0125 if with_modules and k.kernel_path else None,
        )
        for g in graphs
        for k in g.info.kernels
    ]
    return ModuleIndex(graphs=list(graphs), kernels=kernels)


def _picked(kernels: list[IndexedKernel]) -> list[tuple[int, str]]:
    return [(k.graph, k.name) for k in kernels]


def test_select_kernels_by_rank_in_every_graph() -> None:
    ranked = ["sm90_xmma_gemm", "triton_red_fused_sum_1", "triton_poi_fused_add_mul_0", "triton_red_fused_sum_1"]
    assert _picked(select_kernels(_index(), ranked)) == [
        (0, "triton_red_fused_sum_1"),
        (1, "triton_red_fused_sum_1"),
        (0, "triton_poi_fused_add_mul_0"),
        (1, "triton_poi_fused_add_mul_0"),
    ]
    assert _picked(select_kernels(_index(), ranked, limit=1)) == [(0, "triton_red_fused_sum_1")]


def test_select_kernels_without_ranking_takes_the_first() -> None:
    """No analysis, or no ranked name matches: graph order; embedded sources count as sources."""
    expected = [(0, "triton_poi_fused_add_mul_0"), (0, "triton_red_fused_sum_1"), (0, "cpp_fused_relu_2")]
    assert _picked(select_kernels(_index(), None, limit=3)) == expected
    assert _picked(select_kernels(_index(), ["aten::mm"], limit=3)) == expected
    assert len(select_kernels(_index(with_modules=False), None)) == 6


def test_select_kernels_profiled_cpp_name() -> None:
    """CPU profiler names carry the graph: `graph_1_cpp_fused_relu_2` is graph 1's kernel."""
    assert _picked(select_kernels(_index(), ["graph_1_cpp_fused_relu_2"])) == [(1, "cpp_fused_relu_2")]


def test_source_link() -> None:
    pages = SourcePages("b", kernels=frozenset({(1, "triton_red_fused_sum_1"), (0, "cpp_fused_relu_2")}))
    assert source_link(pages, None, "triton_red_fused_sum_1") == "{doc}`source <kernels/1-triton_red_fused_sum_1>`"
    assert source_link(pages, 0, "triton_red_fused_sum_1") is None
    assert source_link(pages, None, "sm90_xmma_gemm") is None
    assert source_link(pages, None, "graph_0_cpp_fused_relu_2", "<code>") == "{doc}`code <kernels/0-cpp_fused_relu_2>`"


def test_docnames() -> None:
    assert kernel_docname(1, "triton_poi_fused_add_0") == "kernels/1-triton_poi_fused_add_0"
    odd = kernel_docname(0, "void at::native::kernel<4>(int, T*)")
    assert odd.startswith("kernels/0-void_at_native_kernel_4_int_T-")
    assert len(kernel_docname(0, "triton_" + "x" * 300)) < 170
    assert wrapper_docname(_graph(0, FORWARD)) == "modules/w0"


def test_wrapper_page() -> None:
    pages = SourcePages("b", kernels=frozenset({(0, "triton_poi_fused_add_mul_0")}))
    text = wrapper_page(_graph(0, FORWARD), FORWARD, pages)
    assert text.startswith("---\norphan: true\nnosearch: true\n---\n\n# Forward graph (graph 0) wrapper\n")
    assert "{doc}`Back to the report <../index>`" in text
    assert "  - {doc}`triton_poi_fused_add_mul_0 <../kernels/0-triton_poi_fused_add_mul_0>`" in text
    assert "  - `aten.mul`, `aten.add`" in text
    assert "  - `triton_red_fused_sum_1`\n  - triton\n  - `aten.sum`" in text
    assert "  - `cpp_fused_relu_2`\n  - cpp\n  - —" in text
    assert "- `extern_kernels.convolution` × 1" in text
    assert "\n``````python\n# AOT ID: ['0_forward']\n" in text
    assert text.endswith("\n``````\n")
    assert "# Backward graph (graph 1) wrapper" in wrapper_page(_graph(1, BACKWARD), BACKWARD, pages)
    assert "{list-table}\n:header-rows: 1\n:class: reportgen-sortable\n" in text  # sorted and filtered in the browser


def test_a_large_wrapper_is_shown_as_plain_text() -> None:
    """Pygments would spend seconds on each build that writes it; the text stays whole."""
    large = FORWARD + "# padding\n" * (MAX_HIGHLIGHTED_BYTES // 10)
    text = wrapper_page(_graph(0, large), large, SourcePages("b"))
    assert "\n``````text\n# AOT ID: ['0_forward']\n" in text
    assert text.count("# padding\n") == MAX_HIGHLIGHTED_BYTES // 10


def test_kernel_page() -> None:
    index = _index()
    kernel = index.kernel(0, "triton_poi_fused_add_mul_0")
    assert kernel is not None
    text = kernel_page(kernel, _graph(0, FORWARD), KERNEL_MODULE)
    assert text.startswith("---\norphan: true\nnosearch: true\n---\n\n# `triton_poi_fused_add_mul_0`\n")
    assert "- **Graph:** {doc}`Forward graph (graph 0) <../modules/w0>`" in text
    assert "- **ATen ops:** `aten.mul`, `aten.add`" in text
    assert "- **Source nodes:** `mul`, `add`" in text
    assert "- **Source:** `modules/kernels/cabc.py`, defined at line 6 of the wrapper" in text
    assert "- **Memory traffic:** 12.5 MB per call" in text
    assert "``````python\nimport triton\n" in text
    cpp = index.kernel(0, "cpp_fused_relu_2")
    assert cpp is not None
    text = kernel_page(cpp, _graph(0, FORWARD), 'extern "C" void kernel(float* out_ptr0) {}')
    assert "- **Source:** embedded in the wrapper, defined at line 17 of the wrapper" in text
    assert "```cpp\nextern" in text
    assert "Memory traffic" not in text


def test_sources_section() -> None:
    assert sources_section(SourcePages("b")) == ""
    pages = SourcePages("b", wrappers=((0, "forward", "modules/w0"),), kernels=frozenset({(0, "k")}))
    assert sources_section(pages).startswith(
        "## Compiled modules\n\n- {doc}`Forward graph (graph 0) wrapper <modules/w0>`"
    )


def _add_modules(bundle_dir: Path, files: dict[str, str], kinds: dict[str, str]) -> None:
    modules = []
    for order, (rel, text) in enumerate(files.items()):
        (bundle_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (bundle_dir / rel).write_text(text)
        modules.append(ModuleFile(path=rel, kind=kinds[rel], order=order, size_bytes=len(text)))  # type: ignore[arg-type]
    manifest = read_manifest(bundle_dir).model_copy(update={"modules": modules})
    (bundle_dir / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2))
    analysis = read_analysis(bundle_dir)
    assert analysis is not None
    write_analysis(
        bundle_dir, analysis.model_copy(update={"sources": module_index(bundle_dir, modules)})
    )  # as analyze does


def test_sphinx_build(tmp_path: Path, make_bundle) -> None:  # type: ignore[no-untyped-def]
    """Rendered source pages build with `-W -n`; only ranked kernels with a source get a page."""
    results = tmp_path / "results"
    bundle = make_bundle(results, "mix", kernels=[("triton_poi_fused_add_mul_0", "pointwise", 10.0, 2)])
    files = {"modules/wrappers/w0.py": FORWARD, "modules/wrappers/w1.py": BACKWARD}
    files["modules/kernels/cabc.py"] = KERNEL_MODULE
    _add_modules(bundle, files, {path: path.split("/")[1][:-1] for path in files})
    html = build_site(results, tmp_path / "docs")
    report = html / "reports" / "mix"
    assert sorted(p.name for p in (report / "kernels").iterdir()) == [
        "0-triton_poi_fused_add_mul_0.html",
        "1-triton_poi_fused_add_mul_0.html",
    ]
    assert sorted(p.name for p in (report / "modules").iterdir()) == ["w0.html", "w1.html"]
    assert 'href="modules/w1.html"' in (report / "index.html").read_text()
    assert 'href="../kernels/0-triton_poi_fused_add_mul_0.html"' in (report / "modules" / "w0.html").read_text()
    # Source pages stay out of the search index; the report, whose kernel table names every kernel, is in it.
    search = (html / "searchindex.js").read_text()
    assert '"reports/mix/index"' in search and "triton_poi_fused_add_mul_0" in search
    assert '"inductor_meta"' not in search  # a word of the kernel's source only


def _fixture_modules() -> tuple[dict[str, str], dict[str, str]]:
    wrappers = (
        "c6chtauzmuq3wge6v3wvchq352bcaw46j5yn5bop2ofdobpkpfbi.py",
        "ctjxqyt7q2vttlv7rerv4g5g6k4uhfhihx3qg6mgbdt3bj4dbhhs.py",
    )
    files: dict[str, str] = {}
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        members = {Path(m.name).name: m for m in tar.getmembers() if m.isfile()}
        for name in [*wrappers, *sorted(set(members) - set(wrappers))]:
            kind = "wrappers" if name in wrappers else "kernels"
            files[f"modules/{kind}/{name}"] = tar.extractfile(members[name]).read().decode()  # type: ignore[union-attr]
    return files, {path: path.split("/")[1][:-1] for path in files}


@pytest.mark.slow
def test_sphinx_build_real_wrappers(tmp_path: Path, make_bundle) -> None:  # type: ignore[no-untyped-def]
    """The 1.9 MB and 2.8 MB mixnet_l wrappers as pages, plus 40 kernel pages: a `-W` build in seconds."""
    results = tmp_path / "results"
    bundle = make_bundle(results, "mixnet")
    _add_modules(bundle, *_fixture_modules())
    index = module_index(bundle, read_manifest(bundle).modules)
    assert [(g.kind, len(g.info.kernels)) for g in index.graphs] == [("forward", 241), ("backward", 278)]
    start = time.perf_counter()
    html = build_site(results, tmp_path / "docs")
    elapsed = time.perf_counter() - start
    report = html / "reports" / "mixnet"
    assert len(list((report / "kernels").iterdir())) == 40
    page = report / "modules" / "ctjxqyt7q2vttlv7rerv4g5g6k4uhfhihx3qg6mgbdt3bj4dbhhs.html"
    assert page.stat().st_size > 2_800_000  # the whole 2.8 MB source, as plain text (over MAX_HIGHLIGHTED_BYTES)
    assert elapsed < 90, f"render + sphinx-build took {elapsed:.1f} s"


def test_picking_source_pages_costs_a_lookup_per_name_not_a_scan() -> None:
    """An analysis made elsewhere may rank 250,000 kernel names against an index of as many kernels: picking the
    pages scanned the index once per name (quadratic: hours at that size). 40,000 of each take well under a second."""
    from reportgen.bundle import IndexedKernel, KernelSource, ModuleIndex

    count = 40_000
    kernels = [
        IndexedKernel(
            graph=0,
            source=KernelSource(
                name=f"triton_poi_fused_{n}",
                backend="triton",
                kernel_path=None,
                source_nodes=[],
                aten_ops=[],
                line=1,
                end_line=1,
            ),
            module_path=None,
            num_gb=None,
        )
        for n in range(count)
    ]
    index = ModuleIndex(graphs=[], kernels=kernels)
    ranked = [f"unknown_{n}" for n in range(count)] + ["triton_poi_fused_7"]
    started = time.monotonic()
    picked = select_kernels(index, ranked)
    assert time.monotonic() - started < 2.0
    assert picked == []  # no kernel has a source (no module, a one-line definition)
