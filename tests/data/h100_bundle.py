"""A whole bundle of a real GPU run, for tests and benchmarks that need one with every page and chart.

The H100 mixnet_l training run of `h100-mixnet_l-train-amp` (its profiler trace, its 2 wrapper and 519 kernel
modules) in the manifest, recipe and log of the real `bundles/fused_add_mul` run, retitled, and analysed by
reportgen: its report has long kernel tables (wide and tall), source pages, every chart and every download.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

from tests.data import BUNDLES_DIR, H100_FIXTURE

__all__ = ["make_h100_bundle"]

TEMPLATE = BUNDLES_DIR / "fused_add_mul"
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "mixnet_l.yaml"


def make_h100_bundle(dest: Path) -> Path:
    """Write (once) and return bundle `dest`: the H100 mixnet_l run, analysed by reportgen."""
    from reportgen.bundle import Manifest, ModuleFile, read_manifest
    from reportgen.formats import parse_wrapper
    from reportgen.pipeline import analyze_bundle

    if (dest / "analysis.json").is_file():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in ("manifest.json", "run.log"):
        shutil.copyfile(TEMPLATE / name, dest / name)
    shutil.copyfile(H100_FIXTURE / "trace.json.gz", dest / "trace.json.gz")
    raw = dest / "raw"
    with tarfile.open(H100_FIXTURE / "modules.tar.gz") as tar:
        tar.extractall(raw, filter="data")
    files = sorted(raw.rglob("*.py"))
    wrappers = [p for p in files if "compiled_module_main" in p.read_text()]
    wrappers.sort(key=lambda p: parse_wrapper(p.read_text()).kind != "forward")
    modules = []
    for kind, group in (("wrapper", wrappers), ("kernel", [p for p in files if p not in wrappers])):
        (dest / "modules" / f"{kind}s").mkdir(parents=True)
        for order, src in enumerate(group):
            target = dest / "modules" / f"{kind}s" / src.name
            shutil.copyfile(src, target)
            rel = target.relative_to(dest).as_posix()
            modules.append(ModuleFile(path=rel, kind=kind, order=order, size_bytes=target.stat().st_size))
    shutil.rmtree(raw)
    data = read_manifest(dest).model_dump(mode="json")
    data["recipe"].update(name="mixnet_l", title="mixnet_l training, fp16 AMP", task="train", amp="fp16")
    data["recipe"]["description"] = (
        "The H100 trace and compiled modules of tests/data/h100-mixnet_l-train-amp, in the manifest of the "
        "H200 fused_add_mul run (its environment and step times)."
    )
    data["recipe"]["model"] = {"ref": "timm:mixnet_l", "kwargs": {}}
    data.update(name="mixnet_l", recipe_path="recipes/mixnet_l.yaml", capture_file=None, trace_file="trace.json.gz")
    data["modules"] = [m.model_dump(mode="json") for m in modules]
    manifest = Manifest.model_validate(data)
    (dest / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (dest / "recipe.yaml").write_text(RECIPE.read_text(), encoding="utf-8")
    error = analyze_bundle(dest, manifest)
    assert error is None, error
    return dest
