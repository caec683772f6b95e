"""The profiler's chrome-trace vocabulary: event categories and the span names PyTorch writes around work."""

from __future__ import annotations

__all__ = [
    "ATEN_PREFIX",
    "BACKWARD_SPAN",
    "CALL_SPAN_PREFIX",
    "CPU_CATS",
    "CPU_SPAN_NAMES",
    "FORWARD_SPAN",
    "GPU_WORK_CATS",
    "KERNEL_CAT",
    "LAUNCH_CATS",
    "MEASUREMENT_SPAN",
    "REGION_PREFIX",
    "STEP_PREFIX",
    "is_cpu_span",
    "is_graph_span",
]

KERNEL_CAT = "kernel"
"""Kineto's category of a GPU kernel (copies are `gpu_memcpy`, fills `gpu_memset`)."""
GPU_WORK_CATS = frozenset({KERNEL_CAT, "gpu_memcpy", "gpu_memset"})
"""Categories of device work: what busy % and the kernel table count."""
LAUNCH_CATS = frozenset({"cuda_runtime", "cuda_driver"})
"""Categories of the host calls that launch device work."""
CPU_CATS = frozenset({"cpu_op", "user_annotation"})
"""Categories of host-side spans and ops."""
ATEN_PREFIX = "aten::"
"""Names of the CPU ops the dispatcher runs (`aten::mm`): what the `aten_ops` count counts."""
MEASUREMENT_SPAN = "## reportgen: end of the profiled steps ##"
"""reportgen's own span around the synchronisation that ends its profiled window: the counts leave out the calls
inside it (the model did not make them)."""
STEP_PREFIX = "ProfilerStep#"
"""`prof.step()` marks each profiled step with a span `ProfilerStep#N`."""
REGION_PREFIX = "Torch-Compiled Region"
"""Dynamo's span around a compiled region, e.g. `Torch-Compiled Region: 0/0`."""
FORWARD_SPAN = "CompiledFunction"
BACKWARD_SPAN = "CompiledFunctionBackward"
CPU_SPAN_NAMES = frozenset({FORWARD_SPAN, BACKWARD_SPAN})
"""AOTAutograd's spans around a compiled forward / backward graph."""
CALL_SPAN_PREFIX = "## Call CompiledFxGraph "
"""Inductor's span around one call of a compiled graph: `## Call CompiledFxGraph <key> ##`."""


def is_cpu_span(name: str, cat: str) -> bool:
    """Whether a CPU event is a span around work (step, compiled region, annotation) rather than work."""
    return (
        cat == "user_annotation"
        or name.startswith((STEP_PREFIX, REGION_PREFIX))
        or name in CPU_SPAN_NAMES
        or (len(name) >= 4 and name.startswith("##") and name.endswith("##"))
    )


def is_graph_span(name: str) -> bool:
    """Whether a CPU event name is a compiled graph's span: a call span, an AOT span or a compiled region."""
    return (
        (name.startswith(CALL_SPAN_PREFIX) and name.endswith("##"))
        or name in CPU_SPAN_NAMES
        or name.startswith(REGION_PREFIX)
    )
