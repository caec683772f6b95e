"""MyST text of the compiled-source pages: one per wrapper, one per important kernel.

Pure functions of the module index and source texts. Pages live next to the report page::

    <bundle>/modules/<wrapper stem>.md       a wrapper: its kernels, extern calls, full source
    <bundle>/kernels/<graph>-<kernel>.md     a kernel: ATen origins, source

They are `orphan` pages (no toctree entry), reached through links from the report page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from reportgen.bundle import GraphModule, IndexedKernel, KernelSource, ModuleIndex
from reportgen.render.markup import (
    MISSING,
    ORPHAN_UNSEARCHED,
    SORTABLE,
    code_block,
    code_span,
    doc_link,
    list_table,
    plural,
)

__all__ = [
    "KERNELS_DIR",
    "MAX_HIGHLIGHTED_BYTES",
    "MAX_KERNEL_PAGES",
    "MODULES_DIR",
    "SourcePages",
    "graph_title",
    "has_source",
    "kernel_docname",
    "kernel_page",
    "select_kernels",
    "source_link",
    "sources_section",
    "wrapper_docname",
    "wrapper_page",
]

MODULES_DIR = "modules"
KERNELS_DIR = "kernels"
MAX_KERNEL_PAGES = 40
MAX_HIGHLIGHTED_BYTES = 200_000
"""Wrapper sources longer than this are shown as plain text: Pygments takes seconds on the megabytes of a
large model's wrapper (its kernels' sources are inline), for every build that writes the page."""
_SAFE_NAME = re.compile(r"\w+", re.ASCII)
"""What of a wrapper's stem or a kernel's name a docname keeps (`_page_name`): ASCII letters, digits and `_`."""
_MAX_NAME = 150
_PROFILED_CPP = re.compile(r"graph_(\d+)_(cpp_\w+)")
_LANGUAGES = {"triton": "python", "cpp": "cpp", "other": "text"}


@dataclass(frozen=True)
class SourcePages:
    """The source pages written for one bundle (docnames relative to its report page).

    :param bundle_name: the bundle's name
    :param wrappers: (graph, kind, docname) of each wrapper page
    :param kernels: (graph, kernel name) of each kernel page
    """

    bundle_name: str
    wrappers: tuple[tuple[int, str, str], ...] = ()
    kernels: frozenset[tuple[int, str]] = field(default_factory=frozenset)

    def kernel_docname(self, graph: int | None, kernel_name: str) -> str | None:
        """Docname of the kernel's page, or None when none was written.

        `graph=None` takes the first graph that has a page for the name; profiler names of C++
        kernels (`graph_<n>_cpp_fused_...`) are matched to kernel `cpp_fused_...` of graph n.
        """
        if (match := _PROFILED_CPP.fullmatch(kernel_name)) and graph is None:
            graph, kernel_name = int(match.group(1)), match.group(2)
        graphs = [graph] if graph is not None else sorted({g for g, _ in self.kernels})
        found = next((g for g in graphs if (g, kernel_name) in self.kernels), None)
        return None if found is None else kernel_docname(found, kernel_name)


def graph_title(graph: int, kind: str) -> str:
    """E.g. `Forward graph (graph 0)`."""
    return f"{kind.capitalize()} graph (graph {graph})"


def _page_name(name: str) -> str:
    if _SAFE_NAME.fullmatch(name) and len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:10]
    return "_".join(_SAFE_NAME.findall(name))[: _MAX_NAME - 11] + "-" + digest


def wrapper_docname(graph: GraphModule) -> str:
    """Docname of a wrapper page, relative to the report page."""
    return f"{MODULES_DIR}/{_page_name(graph.stem)}"


def kernel_docname(graph: int, kernel_name: str) -> str:
    """Docname of a kernel page, relative to the report page."""
    return f"{KERNELS_DIR}/{graph}-{_page_name(kernel_name)}"


def source_link(pages: SourcePages, graph: int | None, kernel_name: str, text: str = "source") -> str | None:
    """A `{doc}` link from the report page to the kernel's source page, or None without one.

    :param graph: the kernel's graph; None: the first graph with a page for `kernel_name`
    """
    docname = pages.kernel_docname(graph, kernel_name)
    return None if docname is None else doc_link(text, docname)


def has_source(kernel: IndexedKernel) -> bool:
    """Whether the bundle holds the kernel's source (a kernel module or an embedded source)."""
    return kernel.module_path is not None or kernel.source.end_line > kernel.source.line


def _matches(index: ModuleIndex, name: str) -> list[IndexedKernel]:
    if match := _PROFILED_CPP.fullmatch(name):
        kernel = index.kernel(int(match.group(1)), match.group(2))
        return [kernel] if kernel is not None else index.find(match.group(2))
    return index.find(name)


def select_kernels(
    index: ModuleIndex, ranked_names: Sequence[str] | None, limit: int = MAX_KERNEL_PAGES
) -> list[IndexedKernel]:
    """Kernels with a source that matter most: in the order of `ranked_names` (the analysis'
    kernel table, every graph defining a name), else (no ranking, or no name matched) the first
    `limit` in graph order.
    """
    picked: list[IndexedKernel] = []
    seen: set[tuple[int, str]] = set()
    for name in ranked_names or ():
        if len(picked) >= limit:
            break
        for kernel in _matches(index, name):
            if has_source(kernel) and (kernel.graph, kernel.name) not in seen:
                seen.add((kernel.graph, kernel.name))
                picked.append(kernel)
    if not picked:
        picked = [k for k in index.iter_kernels() if has_source(k)]
    return picked[:limit]


def _size(num_bytes: int) -> str:
    return f"{num_bytes / 1e6:.1f} MB" if num_bytes >= 1e5 else f"{num_bytes / 1e3:.1f} kB"


def _ops(items: Sequence[str]) -> str:
    return ", ".join(code_span(item) for item in items) if items else MISSING


def _kernel_cell(graph: int, kernel: KernelSource, pages: SourcePages, prefix: str) -> str:
    docname = pages.kernel_docname(graph, kernel.name)
    return code_span(kernel.name) if docname is None else doc_link(kernel.name, prefix + docname)


def _kernel_table(graph: GraphModule, pages: SourcePages) -> str:
    kernels = graph.info.kernels
    if not kernels:
        return "## Kernels\n\nThe wrapper defines no kernels."
    rows = [[str(k.line), _kernel_cell(graph.graph, k, pages, "../"), k.backend, _ops(k.aten_ops)] for k in kernels]
    intro = f"{plural(len(kernels), 'kernel')}, in definition order; linked ones have a page of their own."
    return "\n\n".join(
        ["## Kernels", intro, list_table(["Line", "Kernel", "Backend", "ATen ops"], rows, classes=SORTABLE)]
    )


def _extern_calls(graph: GraphModule) -> str:
    counts = graph.info.extern_call_counts
    if not graph.info.extern_calls:
        return "## Extern calls\n\nNone: every operation runs in a generated kernel."
    items = [f"- {code_span(name)} × {counts.get(name, 1)}" for name in graph.info.extern_calls]
    intro = "Library kernels (cuBLAS, cuDNN, ATen) the wrapper calls, with their call sites:"
    return "\n\n".join(["## Extern calls", intro, "\n".join(items)])


def wrapper_page(graph: GraphModule, source: str, pages: SourcePages) -> str:
    """The page of one wrapper: its kernels with their ATen ops, extern calls and full source.

    :param source: the wrapper's text
    :param pages: the source pages of the bundle, for links to kernel pages
    """
    lines = source.count("\n") + 1
    aot = f", AOT ID {code_span(graph.info.aot_id)}" if graph.info.aot_id else ""
    intro = (
        f"{{doc}}`Back to the report <../index>`. Compiled module {code_span(graph.wrapper_path)} "
        f"({lines} lines, {_size(len(source.encode()))}{aot}), as Inductor generated it."
    )
    return (
        "\n\n".join(
            [
                ORPHAN_UNSEARCHED,
                f"# {graph_title(graph.graph, graph.kind)} wrapper",
                intro,
                _kernel_table(graph, pages),
                _extern_calls(graph),
                "## Source",
                code_block(source, "python" if len(source.encode()) <= MAX_HIGHLIGHTED_BYTES else "text"),
            ]
        )
        + "\n"
    )


def kernel_page(kernel: IndexedKernel, graph: GraphModule, source: str) -> str:
    """The page of one kernel: where it comes from and its source.

    :param graph: the kernel's wrapper
    :param source: the kernel module's text, or the source embedded in the wrapper
    """
    info = kernel.source
    language = "python" if kernel.module_path else _LANGUAGES[info.backend]
    where = code_span(kernel.module_path) if kernel.module_path else "embedded in the wrapper"
    num_gb = kernel.num_gb
    items = [
        ("Graph", doc_link(graph_title(graph.graph, graph.kind), f"../{wrapper_docname(graph)}")),
        ("Backend", info.backend),
        ("ATen ops", _ops(info.aten_ops)),
        ("Source nodes", _ops(info.source_nodes)),
        ("Source", f"{where}, defined at line {info.line} of the wrapper"),
    ]
    if num_gb is not None:
        items.append(("Memory traffic", f"{num_gb * 1e3:.3g} MB per call (Inductor's estimate, `kernel_num_gb`)"))
    return (
        "\n\n".join(
            [
                ORPHAN_UNSEARCHED,
                f"# {code_span(info.name)}",
                "{doc}`Back to the report <../index>`",
                "\n".join(f"- **{key}:** {value}" for key, value in items),
                "## Source",
                code_block(source.lstrip("\n"), language),
            ]
        )
        + "\n"
    )


def sources_section(pages: SourcePages) -> str:
    """Report page section linking the wrapper pages (which link the kernel pages); "" without any."""
    if not pages.wrappers:
        return ""
    items = [f"- {doc_link(f'{graph_title(graph, kind)} wrapper', docname)}" for graph, kind, docname in pages.wrappers]
    note = (
        f"Source pages of {len(pages.kernels)} kernels (those with the most time first) are linked from "
        "the wrappers' kernel tables."
        if pages.kernels
        else "No kernel source pages were written."
    )
    return "\n\n".join(["## Compiled modules", "\n".join(items), note])
