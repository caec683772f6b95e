"""`python -m reportgen.site.sphinx_runner ARGS`: `sphinx-build ARGS`, which also records what the pages use.

At the end of a successful build it writes `OUTPUTS_FILE` into the doctree directory: the images
(`_images/...`) and downloads (`_downloads/...`) of Sphinx's environment, which `stamp.prune_removed` needs to
remove the unused ones. Reading them there spares unpickling the environment again after Sphinx has exited:
1.0 s of a one-change build at 100 bundles (2 cores), growing with the site.

It also spares Sphinx reading every image and download of the site on every build: its `copyfile` compares a
file with its earlier copy byte for byte (`filecmp.cmp(shallow=False)`), 500 files and 142 MB at 100 bundles
(0.9 s), for the one bundle that changed. A copy whose size and mtime are its source's is kept as it is
(`quick_copyfile`): Sphinx's copies and the tree sync (`trees.sync_tree`) keep the source's mtime, and
reportgen writes a page's files only when their bytes change, which moves their mtime.

And it maps the links between runs' pages (`reportgen.escape.PAGE_SCHEME`: `reportgen-page:../run/index`) to
HTML pages (`../run/index.html`), adding the scheme to MyST's `myst_url_schemes` whatever the site's conf.py set:
a run's pages link to another run's as URLs, not cross-references, so each run's pages can be built alone.

These go through names Sphinx does not publish, so the runner hooks them here and nowhere else: it replaces
`sphinx.cmd.build.Sphinx` (the name `build_main` creates its application with) by a subclass that connects
`build-finished` and `config-inited`, and `sphinx.builders.html.copyfile`. When a later Sphinx moves either name,
the build runs as Sphinx alone would: without the file (`prune_removed` then unpickles the environment) or reading
every copy; without the scheme, links between runs fail the `-W` build with MyST's warning.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reportgen.escape import PAGE_SCHEME

__all__ = ["OUTPUTS_FILE", "PAGE_URL", "add_page_scheme", "install_hooks", "main", "outputs", "quick_copyfile"]

OUTPUTS_FILE = "reportgen-outputs.json"
PAGE_URL = {"url": "{{path}}.html"}
"""MyST's template of a `PAGE_SCHEME` link's URL: its path (relative, without suffix) as an HTML page."""


_PATTERNS: dict[str, list[str]] = {"exclude": [], "include": [], "titles": []}
"""Documents this run leaves out (`--exclude`: the site's own project leaves out the units) or keeps alone
(`include`, set per unit: see `site.units`), on top of the site's conf.py; and the files of which a unit needs the
title alone (`titles`: the generated index, read as its first heading; an included overview, read as nothing)."""


def _title_only(text: str) -> str:
    return next((line for line in text.splitlines() if line.startswith("# ")), "")


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    if any(path.rsplit(".", 1)[0] == docname for path in _PATTERNS["titles"]):
        source[0] = _title_only(source[0])


def _include_read(app: Any, path: Path, docname: str, source: list[str]) -> None:
    if Path(path).as_posix() in _PATTERNS["titles"]:
        source[0] = ""


def add_page_scheme(app: Any, config: Any) -> None:
    """`config-inited`: `PAGE_SCHEME` links become `PAGE_URL`s, next to the URL schemes the site's conf.py set
    (a list or a dict, MyST accepts both); nothing without MyST. And `_PATTERNS` apply."""
    config.exclude_patterns = [*config.exclude_patterns, *_PATTERNS["exclude"]]
    if _PATTERNS["include"]:
        config.include_patterns = list(_PATTERNS["include"])
    schemes = getattr(config, "myst_url_schemes", None)
    if schemes is None:
        return
    known = dict.fromkeys(schemes) if isinstance(schemes, list | tuple) else dict(schemes)
    config.myst_url_schemes = {**known, PAGE_SCHEME: PAGE_URL}


def outputs(env: Any) -> dict[str, list[str]]:
    """The images and downloads a Sphinx environment's pages use, as paths under the HTML tree."""
    images = sorted(f"_images/{unique}" for _, unique in env.images.values())
    downloads = sorted(f"_downloads/{Path(dest).as_posix()}" for _, dest in env.dlfiles.values())
    return {"images": images, "downloads": downloads}


def _record(app: Any, exception: BaseException | None) -> None:
    if exception is None:
        (Path(app.doctreedir) / OUTPUTS_FILE).write_text(json.dumps(outputs(app.env)), encoding="utf-8")


def quick_copyfile(copy: Callable[..., Any]) -> Callable[..., Any]:
    """`copy` (Sphinx's `copyfile`), except when `dest` is a regular file with `source`'s size and mtime."""

    def copyfile(source: str | os.PathLike[str], dest: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        try:
            have, want = Path(dest).lstat(), Path(source).stat()
        except OSError:
            return copy(source, dest, *args, **kwargs)
        if stat.S_ISREG(have.st_mode) and (have.st_size, have.st_mtime_ns) == (want.st_size, want.st_mtime_ns):
            return None
        return copy(source, dest, *args, **kwargs)

    return copyfile


def install_hooks() -> list[str]:
    """Hook Sphinx as the module says; the names hooked (those a later Sphinx moved are left out)."""
    import sphinx.builders.html as html
    import sphinx.cmd.build as build

    hooked = []
    base = getattr(build, "Sphinx", None)
    if isinstance(base, type):

        class _Recording(base):  # type: ignore[misc,valid-type]
            _schemes = False

            def setup_extension(self, extname: str) -> None:
                # the first extension set up (Sphinx's own, before conf.py's and before `config-inited`)
                if not self._schemes:
                    self._schemes = True
                    self.connect("config-inited", add_page_scheme)
                    self.connect("source-read", _source_read)
                    self.connect("include-read", _include_read)
                super().setup_extension(extname)

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.connect("build-finished", _record)

        build.Sphinx = _Recording  # type: ignore[attr-defined]
        hooked.append("sphinx.cmd.build.Sphinx")
    copy = getattr(html, "copyfile", None)
    if callable(copy):
        html.copyfile = quick_copyfile(copy)  # type: ignore[attr-defined]
        hooked.append("sphinx.builders.html.copyfile")
    return hooked


def main(argv: list[str]) -> int:
    """Run `sphinx-build argv` with the hooks installed (see the module); its exit status.

    `--exclude PATTERN` (repeated, first) adds to the site's `exclude_patterns`. `--units PLAN OPTIONS...` builds
    each unit of the JSON file PLAN (`include`, `titles`, `doctrees`, `srcdir`, `outdir`: see `site.units`) one after
    another with the Sphinx OPTIONS, in this one process, stopping at the first that fails."""
    import sphinx.cmd.build as build

    install_hooks()
    while argv[:1] == ["--exclude"]:
        _PATTERNS["exclude"].append(argv[1])
        argv = argv[2:]
    if argv[:1] != ["--units"]:
        return int(build.main(argv))
    plan = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    for unit in plan:
        _PATTERNS["include"], _PATTERNS["titles"] = list(unit["include"]), list(unit["titles"])
        status = int(build.main([*argv[2:], "-d", unit["doctrees"], unit["srcdir"], unit["outdir"]]))
        if status != 0:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
