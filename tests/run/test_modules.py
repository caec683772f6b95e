"""Which compiled modules go into a bundle: the wrappers and every kernel they name."""

from __future__ import annotations

from pathlib import Path

from reportgen.run.modules import cached_source, copy_modules, named_kernels


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
    kept = sorted(Path(f.path).name for f in files if f.kind == "kernel")
    assert named_kernels([wrapper, loaded, unnamed]) == kept == ["kloaded.py", "kworker.py"]  # what a bare loop lists
    assert named_kernels([loaded, unnamed]) == []  # no wrapper, no kernel named


def test_cached_source_finds_a_kernel_in_the_live_cache_layout(tmp_path: Path) -> None:
    name = "c7kbgjmrhxcnkzwfkfbmxpkrrrhxxwjsc34abyywr4hiwi3sggik.py"
    usual = tmp_path / "7k" / name
    usual.parent.mkdir()
    usual.write_text("# kernel\n")
    assert cached_source(name, tmp_path) == usual
    moved = tmp_path / "elsewhere" / "cabc.py"
    moved.parent.mkdir()
    moved.write_text("# kernel\n")
    assert cached_source("cabc.py", tmp_path) == moved  # any one-level subdir


def test_cached_source_is_none_without_a_cache_or_the_file(tmp_path: Path) -> None:
    assert cached_source("cabc.py", None) is None
    assert cached_source("cabc.py", tmp_path / "gone") is None
    assert cached_source("cabc.py", tmp_path) is None
