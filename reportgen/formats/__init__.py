"""PyTorch's own formats, read: the profiler's chrome trace (whole or streamed), Inductor's compiled
wrapper and kernel modules, and the index of a bundle's modules. Pure readers: no analysis here.
"""

from __future__ import annotations

from reportgen.formats.bounds import BOUND_HINT, DEFAULT_BOUNDS, TraceBounds, TraceTooLargeError
from reportgen.formats.events import (
    ATEN_PREFIX,
    BACKWARD_SPAN,
    CALL_SPAN_PREFIX,
    CPU_CATS,
    CPU_SPAN_NAMES,
    FORWARD_SPAN,
    GPU_WORK_CATS,
    KERNEL_CAT,
    LAUNCH_CATS,
    MEASUREMENT_SPAN,
    REGION_PREFIX,
    STEP_PREFIX,
    is_cpu_span,
    is_graph_span,
)
from reportgen.formats.fx_meta import WrapperSite, module_path, parse_stack, user_frame, wrapper_sites
from reportgen.formats.module_index import (
    kernel_source,
    module_index,
    read_module,
)
from reportgen.formats.rewrite import rewrite_trace
from reportgen.formats.seed_output import SeedProfile, parse_seed_output
from reportgen.formats.shapes import Anchor, ShapedOp, WorkItem, cpu_ops, shaped_ops, work_items
from reportgen.formats.stream import (
    paused_gc,
    read_trace,
)
from reportgen.formats.trace import (
    RERUN_HINT,
    CollectiveArgs,
    DeviceProperties,
    Event,
    Trace,
    TraceEvent,
    compact_event,
    device_time_by_name,
    header_fields,
    load_trace,
    number,
)
from reportgen.formats.wrapper import (
    embedded_source,
    kernel_module_name,
    kernel_num_gb,
    parse_wrapper,
)

__all__ = [
    "ATEN_PREFIX",
    "BACKWARD_SPAN",
    "BOUND_HINT",
    "CALL_SPAN_PREFIX",
    "CPU_CATS",
    "CPU_SPAN_NAMES",
    "DEFAULT_BOUNDS",
    "FORWARD_SPAN",
    "GPU_WORK_CATS",
    "KERNEL_CAT",
    "LAUNCH_CATS",
    "MEASUREMENT_SPAN",
    "REGION_PREFIX",
    "RERUN_HINT",
    "STEP_PREFIX",
    "Anchor",
    "CollectiveArgs",
    "DeviceProperties",
    "Event",
    "SeedProfile",
    "ShapedOp",
    "Trace",
    "TraceBounds",
    "TraceEvent",
    "TraceTooLargeError",
    "WorkItem",
    "WrapperSite",
    "compact_event",
    "cpu_ops",
    "device_time_by_name",
    "embedded_source",
    "header_fields",
    "is_cpu_span",
    "is_graph_span",
    "kernel_module_name",
    "kernel_num_gb",
    "kernel_source",
    "load_trace",
    "module_index",
    "module_path",
    "number",
    "parse_seed_output",
    "parse_stack",
    "parse_wrapper",
    "paused_gc",
    "read_module",
    "read_trace",
    "rewrite_trace",
    "shaped_ops",
    "user_frame",
    "work_items",
    "wrapper_sites",
]
