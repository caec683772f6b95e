"""Index a bundle's compiled modules: parse every wrapper, match each kernel to its copied kernel module."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from reportgen.bundle import (
    MAX_MODULE_BYTES,
    GraphModule,
    IndexedKernel,
    KernelSource,
    ModuleFile,
    ModuleIndex,
    ReadBudget,
    bundle_file,
)
from reportgen.errors import BundleError
from reportgen.formats.wrapper import embedded_source, kernel_estimates, kernel_num_gb, parse_wrapper

__all__ = ["kernel_source", "module_index", "read_module"]

logger = logging.getLogger(__name__)


def read_module(bundle_dir: Path, path: str, budget: ReadBudget | None = None) -> str | None:
    """The text of a compiled module of the bundle; None (with a warning) when it cannot be read, or when it
    would pass the reader's `budget` (`bundle.ReadBudget`: the bytes of modules one reader may read)."""
    try:
        file = bundle_file(bundle_dir, path, MAX_MODULE_BYTES)
        if budget is not None and not budget.take(file.stat().st_size):
            return None
        return file.read_text(encoding="utf-8", errors="replace")
    except (BundleError, OSError) as exc:
        logger.warning("cannot read compiled module %s: %s", bundle_dir / path, exc)
        return None


def kernel_source(
    bundle_dir: Path, kernel: IndexedKernel, wrapper_source: str, budget: ReadBudget | None = None
) -> str | None:
    """A kernel's source: its copied kernel module, else the source embedded in its wrapper."""
    if kernel.module_path is not None:
        return read_module(bundle_dir, kernel.module_path, budget)
    return embedded_source(wrapper_source, kernel.source)


def _estimates(
    bundle_dir: Path, source: KernelSource, module_path: str | None, wrapper_source: str, budget: ReadBudget
) -> dict[str, object]:
    """Inductor's estimates of a Triton kernel (`num_gb`, `flop`, `dtype` of `IndexedKernel`); none for others."""
    if source.backend != "triton":
        return {}
    text = read_module(bundle_dir, module_path, budget) if module_path else embedded_source(wrapper_source, source)
    if not text:
        return {}
    flop, dtype = kernel_estimates(text)
    return {"num_gb": kernel_num_gb(text), "flop": flop, "dtype": dtype}


def module_index(bundle_dir: Path, modules: Sequence[ModuleFile]) -> ModuleIndex:
    """Parse the bundle's wrappers and match each kernel to its copied kernel module.

    Kernel modules are matched by the basename of the wrapper's `# kernel path:` comment. An
    unreadable wrapper is left out (with a warning); the graphs after it keep their indices.

    :param bundle_dir: the bundle directory
    :param modules: `Manifest.modules`
    """
    wrappers = sorted((m for m in modules if m.kind == "wrapper"), key=lambda m: m.order)
    kernel_files = {PurePosixPath(m.path).name: m.path for m in modules if m.kind == "kernel"}
    graphs: list[GraphModule] = []
    kernels: list[IndexedKernel] = []
    budget = ReadBudget(bundle_dir, "the module index")
    for graph, wrapper in enumerate(wrappers):
        source = read_module(bundle_dir, wrapper.path, budget)
        if source is None:
            continue
        info = parse_wrapper(source)
        graphs.append(GraphModule(graph=graph, wrapper_path=wrapper.path, info=info))
        for kernel in info.kernels:
            module_path = kernel_files.get(kernel.kernel_path) if kernel.kernel_path else None
            estimates = _estimates(bundle_dir, kernel, module_path, source, budget)
            kernels.append(IndexedKernel(graph=graph, source=kernel, module_path=module_path, **estimates))  # type: ignore[arg-type]
    return ModuleIndex(graphs=graphs, kernels=kernels)
