"""The directives embed a hostile bundle as text: a variant or title that closes its code span and opens an
`{include}`, HTML or control characters (a real `sphinx-build -W` of a project of its own)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from reportgen.bundle import MANIFEST_FILE
from tests.render.test_boundary import RAW_CONTROLS, _assert_inert_html

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundles" / "fused_add_mul"
PAGE = """\
# Host

```{perf-summary} bundle
```

```{perf-chart} bundle
:kind: top-kernels
```

```{perf-report} bundle
```
"""


@pytest.mark.parametrize("field", ["variant", "variant_description"])
def test_a_hostile_field_is_text_in_every_directive(tmp_path: Path, field: str) -> None:
    """A variant closes its code span and includes a file (issue 26); titles hold no line break or control."""
    marker = f"SECRET-{uuid.uuid4().hex}"
    (tmp_path / "secret.txt").write_text(marker + "\n", encoding="utf-8")
    payload = f"x` ```{{include}} {tmp_path / 'secret.txt'} ``` <img src=x onerror=alert(1)> $x^{{$ {{eval-rst}}`y`"
    if field != "title":
        payload = payload.replace("` ```", "`\n\n```").replace(" <img", "\n```\n\n<img") + "\x1b[31m\u202e` ``"
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_parser", "reportgen.sphinx"]\nexclude_patterns = ["_build"]\n')
    (source / "index.md").write_text(PAGE, encoding="utf-8")
    shutil.copytree(BUNDLE, source / "bundle")
    manifest = json.loads((source / "bundle" / MANIFEST_FILE).read_text(encoding="utf-8"))
    if field == "title":
        manifest["recipe"]["title"] = payload
    else:
        manifest["variant"] = manifest[field] = payload
    (source / "bundle" / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    command = [sys.executable, "-m", "sphinx", "--no-color", "-W", "-b", "html", str(source), str(tmp_path / "html")]
    # Sphinx writes its own "erase line" code when it believes it may colour (CI=true, FORCE_COLOR): NO_COLOR
    # stops that, so any control character left in its output came from the bundle.
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert not RAW_CONTROLS.search(done.stdout + done.stderr)
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert marker not in page
    _assert_inert_html(page, field)
    assert not RAW_CONTROLS.search(page)
    assert "onerror=alert(1)" in page  # shown, as text
