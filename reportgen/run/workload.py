"""Build a recipe's model, inputs and one training/inference step (child side: imports torch)."""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from reportgen.recipe import Recipe, TensorSpec

__all__ = ["Workload", "build_workload", "compile_model", "resolve_device"]

_AMP_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def resolve_device(requested: str) -> str:
    """`auto` → cuda when available, else cpu; an explicit cuda without a GPU is an error."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("recipe asks for device 'cuda' but torch sees no CUDA device")
    return requested


def _import_ref(ref: str, recipe_dir: str) -> Callable[..., object]:
    module_name, attr = ref.split(":", 1)
    if recipe_dir not in sys.path:
        sys.path.insert(0, recipe_dir)
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attr)  # type: ignore[no-any-return]
    except AttributeError:
        raise RuntimeError(f"module {module_name!r} has no attribute {attr!r}") from None


def _build_model(recipe: Recipe, recipe_dir: str) -> object:
    _, _, name = recipe.model.ref.partition(":")
    if recipe.model.source == "timm":
        import timm

        return timm.create_model(name, pretrained=False, **recipe.model.kwargs)
    if recipe.model.source == "torchvision":
        import torchvision

        return torchvision.models.get_model(name, weights=None, **recipe.model.kwargs)
    return _import_ref(recipe.model.ref, recipe_dir)(**recipe.model.kwargs)


def _tensor(spec: TensorSpec, batch: int | None, device: str) -> torch.Tensor:
    shape = ([batch] if batch else []) + list(spec.shape)
    dtype = getattr(torch, spec.dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device=device, requires_grad=spec.requires_grad)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device=device).bool()
    return torch.randint(0, spec.high, shape, dtype=dtype, device=device)


def _build_inputs(recipe: Recipe, recipe_dir: str, device: str, batch_size: int | None) -> tuple[object, ...]:
    spec = recipe.inputs
    if spec.factory is None:
        return tuple(_tensor(t, batch_size, device) for t in spec.tensors)
    made = _import_ref(spec.factory, recipe_dir)(batch_size=batch_size, device=device, **spec.kwargs)
    return tuple(made) if isinstance(made, (tuple, list)) else (made,)


def _loss(out: object) -> torch.Tensor:
    """A scalar to backpropagate: the float sum of every output tensor that needs grad."""
    if isinstance(out, torch.Tensor):
        return out.float().sum()
    parts: list[object] = list(out.values()) if isinstance(out, dict) else list(out)  # type: ignore[call-overload]
    tensors = [p for p in parts if isinstance(p, torch.Tensor) and p.requires_grad]
    if not tensors:
        raise RuntimeError("task 'train' needs an output tensor that requires grad")
    return torch.stack([t.float().sum() for t in tensors]).sum()


@dataclass(frozen=True)
class Workload:
    """A ready-to-run model: `step(fn)` runs one forward (+ backward) of `fn` on the inputs."""

    device: str
    recipe: Recipe
    model: Callable[..., object]
    input_sets: tuple[tuple[object, ...], ...]
    _turn: list[int] = field(default_factory=lambda: [0])

    @property
    def inputs(self) -> tuple[object, ...]:
        """The inputs of the next step (input sets are used in turn when the recipe cycles batch sizes)."""
        return self.input_sets[self._turn[0] % len(self.input_sets)]

    def autocast(self) -> contextlib.AbstractContextManager[object]:
        """The recipe's autocast context (a no-op without AMP)."""
        if self.recipe.amp == "none":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device, dtype=_AMP_DTYPES[self.recipe.amp])

    def step(self, fn: Callable[..., object]) -> None:
        """One step of the recipe's task with `fn` (eager model or its compiled form)."""
        inputs = self.inputs
        self._turn[0] += 1
        mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
        if mark_step is not None and self.recipe.compile.uses_cudagraphs:
            mark_step()  # a new iteration: CUDA-graph outputs of the previous step may be overwritten
        if self.recipe.task == "train":
            if isinstance(self.model, torch.nn.Module):
                self.model.zero_grad(set_to_none=True)
            with self.autocast():
                out = fn(*inputs)
            _loss(out).backward()
        else:
            with torch.no_grad(), self.autocast():
                fn(*inputs)

    def synchronize(self) -> None:
        """Wait for the device to finish queued work."""
        if self.device == "cuda":
            torch.cuda.synchronize()


def build_workload(recipe: Recipe, recipe_dir: str, device: str) -> Workload:
    """Instantiate the model on `device` in train or eval mode, and its inputs."""
    if device == "cuda":
        torch.backends.cudnn.benchmark = recipe.cudnn_benchmark
    torch.manual_seed(0)
    model = _build_model(recipe, recipe_dir)
    if isinstance(model, torch.nn.Module):
        model = model.to(device)
        model.train(recipe.task == "train")
    elif not callable(model):
        raise RuntimeError(f"{recipe.model.ref} returned {type(model).__name__}; expected an nn.Module or callable")
    batches: list[int | None] = [*recipe.inputs.batch_cycle] or [recipe.inputs.batch_size]
    input_sets = tuple(_build_inputs(recipe, recipe_dir, device, batch) for batch in batches)
    return Workload(device, recipe, model, input_sets)


def compile_model(recipe: Recipe, model: Callable[..., object]) -> Callable[..., object]:
    """`torch.compile(model)` with the recipe's compile options (mode `default` is torch's default)."""
    opts = recipe.compile
    compiled: Callable[..., object] = torch.compile(
        model,
        backend=opts.backend,
        mode=None if opts.mode == "default" else opts.mode,
        fullgraph=opts.fullgraph,
        dynamic=opts.dynamic,
    )
    return compiled
