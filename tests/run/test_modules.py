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


def test_kernels_of_a_cache_filled_elsewhere_are_found_in_the_wrappers_cache(tmp_path: Path) -> None:
    """A wrapper from the FX graph cache names its kernels where the cache was filled (another machine's /tmp/wc/...);
    the same files sit in this cache's layout, beside the wrapper's own folder."""
    cache, bundle = tmp_path / "cache", tmp_path / "bundle"
    here = cache / "ne" / "cnekqvl5.py"
    here.parent.mkdir(parents=True)
    here.write_text("# the kernel\n")
    filled_at = tmp_path / "elsewhere" / "cache" / "ne" / "cnekqvl5.py"  # never created: the other machine's path
    (cache / "ab").mkdir()
    wrapper = _wrapper(cache / "ab" / "cabwrap.py", [filled_at, cache / "zz" / "czzgone.py"])
    files = copy_modules([wrapper], bundle)
    assert [(f.kind, f.path) for f in files] == [
        ("wrapper", "modules/wrappers/cabwrap.py"),
        ("kernel", "modules/kernels/cnekqvl5.py"),
    ]
    assert (bundle / "modules/kernels/cnekqvl5.py").read_text() == "# the kernel\n"
    assert named_kernels([wrapper]) == ["cnekqvl5.py"]  # the bare loop's list finds it the same way
    elsewhere = _wrapper(cache / "wrap.py", [filled_at])  # not in Inductor's <cache>/<xx>/ layout: no lookup
    assert named_kernels([elsewhere]) == []
