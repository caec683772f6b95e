"""Which compiled modules go into a bundle: the wrappers and every kernel they name."""

from __future__ import annotations

from pathlib import Path

from reportgen.run.modules import copy_modules


def _wrapper(path: Path, kernels: list[Path]) -> Path:
    lines = [f"# kernel path: {k}\nk{i} = async_compile.triton('k{i}', '''...''')" for i, k in enumerate(kernels)]
    path.write_text("\n".join([*lines, "from torch._inductor.wrapper_benchmark import compiled_module_main"]))
    return path


def test_kernels_named_by_a_wrapper_are_copied_from_their_path(tmp_path: Path) -> None:
    cache, bundle = tmp_path / "cache", tmp_path / "bundle"
    cache.mkdir()
    loaded, worker_built, unnamed = (cache / f"{n}.py" for n in ("kloaded", "kworker", "kautotune"))
    for k in (loaded, worker_built, unnamed):
        k.write_text(f"# {k.stem}\n")
    wrapper = _wrapper(cache / "wrapper.py", [loaded, worker_built, cache / "kgone.py"])
    files = copy_modules([wrapper, loaded, unnamed], bundle)
    assert [(f.kind, f.path) for f in files] == [
        ("wrapper", "modules/wrappers/wrapper.py"),
        ("kernel", "modules/kernels/kloaded.py"),
        ("kernel", "modules/kernels/kworker.py"),
    ]
    assert (bundle / "modules/kernels/kworker.py").read_text() == "# kworker\n"
