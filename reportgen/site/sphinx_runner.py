"""`python -m reportgen.site.sphinx_runner ARGS`: `sphinx-build ARGS`, which also records what the pages use.

At the end of a successful build it writes `OUTPUTS_FILE` into the doctree directory: the images
(`_images/...`) and downloads (`_downloads/...`) of Sphinx's environment, which `stamp.prune_removed` needs to
remove the unused ones. Reading them there spares unpickling the environment again after Sphinx has exited:
1.0 s of a one-change build at 100 bundles (2 cores), growing with the site.

Sphinx has no public way to add an event handler to a project whose conf.py is the user's, so the runner
replaces `sphinx.cmd.build.Sphinx` (the name `build_main` creates its application with) by a subclass that
connects `build-finished`. When that name moves in a later Sphinx, the build runs as before without the file,
and `prune_removed` unpickles the environment as it used to.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["OUTPUTS_FILE", "main", "outputs"]

OUTPUTS_FILE = "reportgen-outputs.json"


def outputs(env: Any) -> dict[str, list[str]]:
    """The images and downloads a Sphinx environment's pages use, as paths under the HTML tree."""
    images = sorted(f"_images/{unique}" for _, unique in env.images.values())
    downloads = sorted(f"_downloads/{Path(dest).as_posix()}" for _, dest in env.dlfiles.values())
    return {"images": images, "downloads": downloads}


def _record(app: Any, exception: BaseException | None) -> None:
    if exception is None:
        (Path(app.doctreedir) / OUTPUTS_FILE).write_text(json.dumps(outputs(app.env)), encoding="utf-8")


def main(argv: list[str]) -> int:
    """Run `sphinx-build argv`, recording the pages' outputs (see the module); its exit status."""
    import sphinx.cmd.build as build

    base = getattr(build, "Sphinx", None)
    if isinstance(base, type):

        class _Recording(base):  # type: ignore[misc,valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.connect("build-finished", _record)

        build.Sphinx = _Recording  # type: ignore[attr-defined]
    return int(build.main(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
