"""module_index on the real mixnet_l training modules laid out as a bundle."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from reportgen.bundle import ModuleFile
from reportgen.formats.module_index import ModuleIndex, module_index
from tests.data import H100_FIXTURE

FIXTURE = H100_FIXTURE
WRAPPERS = (  # compile order: forward, then backward
    "cache/6c/c6chtauzmuq3wge6v3wvchq352bcaw46j5yn5bop2ofdobpkpfbi.py",
    "cache/tj/ctjxqyt7q2vttlv7rerv4g5g6k4uhfhihx3qg6mgbdt3bj4dbhhs.py",
)


def copy_fixture_modules(bundle_dir: Path) -> list[ModuleFile]:
    """Lay the fixture's modules out as `copy_modules` does: modules/wrappers/, modules/kernels/."""
    modules: list[ModuleFile] = []
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: Path(m.name).name)
        kernels = [m for m in members if m.name not in WRAPPERS]
        wrappers = [tar.getmember(name) for name in reversed(WRAPPERS)]  # order comes from ModuleFile.order
        for kind, group in (("wrapper", wrappers), ("kernel", kernels)):
            for position, member in enumerate(group):
                rel = f"modules/{kind}s/{Path(member.name).name}"
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                (bundle_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                (bundle_dir / rel).write_bytes(data)
                order = WRAPPERS.index(member.name) if kind == "wrapper" else position
                modules.append(ModuleFile(path=rel, kind=kind, order=order, size_bytes=len(data)))
    return modules


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> ModuleIndex:
    bundle_dir = tmp_path_factory.mktemp("bundle")
    return module_index(bundle_dir, copy_fixture_modules(bundle_dir))


def test_graphs_in_compile_order(index: ModuleIndex) -> None:
    assert [(g.graph, g.kind, g.stem) for g in index.graphs] == [
        (0, "forward", "c6chtauzmuq3wge6v3wvchq352bcaw46j5yn5bop2ofdobpkpfbi"),
        (1, "backward", "ctjxqyt7q2vttlv7rerv4g5g6k4uhfhihx3qg6mgbdt3bj4dbhhs"),
    ]
    assert index.kinds == {0: "forward", 1: "backward"}


def test_every_kernel_matched_to_its_module(index: ModuleIndex) -> None:
    kernels = list(index.iter_kernels())
    assert len(kernels) == 241 + 278
    assert all(k.module_path == f"modules/kernels/{k.source.kernel_path}" for k in kernels)
    first = index.kernel(0, "triton_poi_fused__to_copy_0")
    assert first is not None
    assert first.module_path == "modules/kernels/clnief5aaggdzye73rljcnptqpnjqjzszeofg6z3kr26biha5lfp.py"
    assert index.kernel(1, "triton_poi_fused__to_copy_0") is None


def test_names_restart_per_graph(index: ModuleIndex) -> None:
    """14 `_to_copy` kernels have the same name in both graphs: keyed by (graph, name)."""
    shared = [k for k in index.iter_kernels() if k.graph == 0 and index.kernel(1, k.name)]
    assert len(shared) == 14
    both = index.find("triton_poi_fused__to_copy_201")
    assert [k.graph for k in both] == [0, 1]
    assert both[0].module_path != both[1].module_path


def test_missing_files(tmp_path: Path) -> None:
    """An unreadable wrapper is left out, later graphs keep their index; unknown kernel files -> None."""
    wrapper = "triton_poi_fused_add_0 = async_compile.triton('triton_poi_fused_add_0', '''\n''')\n"
    (tmp_path / "modules" / "wrappers").mkdir(parents=True)
    (tmp_path / "modules" / "wrappers" / "b.py").write_text("# kernel path: /x/ab/cab.py\n" + wrapper)
    modules = [
        ModuleFile(path="modules/wrappers/a.py", kind="wrapper", order=0, size_bytes=1),
        ModuleFile(path="modules/wrappers/b.py", kind="wrapper", order=1, size_bytes=1),
    ]
    index = module_index(tmp_path, modules)
    assert [g.graph for g in index.graphs] == [1]
    kernel = index.kernel(1, "triton_poi_fused_add_0")
    assert kernel is not None
    assert (kernel.source.kernel_path, kernel.module_path) == ("cab.py", None)
    assert index.graph(0) is None
    assert module_index(tmp_path, []) == ModuleIndex()


def test_a_manifest_listing_one_module_many_times_reads_within_the_bundle_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A hostile manifest lists the real forward wrapper 2,000 times: indexing it used to read it 2,000 times
    (at the bounds: 250,000 entries of a 16 MiB module, terabytes). The reads stop at the bundle's budget, with
    one warning, and what was read is still indexed."""
    import reportgen.bundle.confine as confine

    modules = copy_fixture_modules(tmp_path)
    forward = next(m for m in modules if m.kind == "wrapper" and m.order == 0)
    monkeypatch.setattr(confine, "MAX_MODULES_BYTES", 5 * forward.size_bytes)
    reads: list[str] = []
    real_read_text = Path.read_text

    def counting_read_text(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self.name)
        return real_read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting_read_text)
    hostile = [forward.model_copy(update={"order": i}) for i in range(2000)]
    with caplog.at_level("WARNING"):
        index = module_index(tmp_path, hostile)
    assert 1 <= reads.count(Path(forward.path).name) <= 5
    assert len(index.graphs) == reads.count(Path(forward.path).name)
    assert [r.message for r in caplog.records].count(
        f"{tmp_path}: the module index stops at {5 * forward.size_bytes} bytes of compiled modules (the bound "
        "per bundle); the rest is left out"
    ) == 1
