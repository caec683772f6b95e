"""The escaping boundary, attacked: every string a bundle holds carries payloads for every target (MyST, HTML,
Markdown for pull requests, notebooks, the terminal, chart labels), and a real `reportgen build` (Sphinx, `-W`),
`reportgen compare` and `reportgen history` must show each one as text.

The bundles are real canned bundles (`tests/data/cpu-history-addmul`: a latest run, two kept runs, compiled
modules, the recipe's modules) whose manifest, capture, analysis and comparison models are walked generically:
every string leaf and dict key becomes the payload (a field the model refuses it for keeps its value), so a field
added to a model later is attacked too. Strings that name a file of the bundle or the bundle itself keep their
value, so source pages and kept runs are still rendered.
"""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from pydantic import BaseModel, ValidationError

from reportgen.bundle import (
    ANALYSIS_FILE,
    CAPTURE_FILE,
    COMPARISON_FILE,
    HISTORY_DIR,
    LOG_FILE,
    MANIFEST_FILE,
    RECIPE_FILE,
    Analysis,
    Capture,
    Comparison,
    Manifest,
    load_bundle,
    read_recipe_text,
)
from reportgen.compare import compare_bundles, to_markdown, to_text
from reportgen.escape import path_segment, terminal_text
from reportgen.render.notebook import reproducer_notebook
from tests.data import CPU_HISTORY

RAW_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200c-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
"""What no page, notebook, Markdown or terminal text may hold raw (independent of `reportgen.escape.CONTROLS`,
which it checks; U+200B is left out: the index lets a model reference wrap after its colon with one)."""
MODELS: dict[str, type[BaseModel]] = {
    MANIFEST_FILE: Manifest,
    CAPTURE_FILE: Capture,
    ANALYSIS_FILE: Analysis,
    COMPARISON_FILE: Comparison,
}

PAYLOADS: dict[str, str] = {
    "include": "x`y\n\n```{{include}} {secret}\n```\n\n~~~{{literalinclude}} {secret}\n~~~\n"
    "{{download}}`s <{secret}>` {{include}}`{secret}` ```{{figure}} {secret}\n```",
    "eval-rst": "```{{eval-rst}}\n.. include:: {secret}\n.. raw:: html\n\n   <script>alert(1)</script>\n```\n"
    "```{{raw}} html\n<img src=x onerror=alert(1)>\n```\n:::{{include}} {secret}\n:::",
    "html": '<img src=x onerror=alert(1)><script>alert(1)</script><a href="javascript:alert(1)">x</a>'
    "<iframe src=//evil.example></iframe>",
    "attribute": '" onmouseover="alert(1)" x=\' onfocus=\'alert(1)\' "><img src=x onerror=alert(1)>',
    "links": "[c](javascript:alert(1)) ](javascript:alert(1)) <javascript:alert(1)> <http://evil.example> "
    "![i](http://evil.example/x.png) www.evil.example [r]: javascript:alert(1)",
    "math": "$\\alpha$ $x^{{$ $$\\frac{{1}}{{0}}$$ \\(x\\) $$",
    "controls": "\x1b[31mred\x1b[0m\x07bell\u202eevil\u2066x\u2069\x9b2J\rover\x00\x7f\u200bz\u2028l\x85",
    "structure": "a | b |\n|---|---|\n* - cell\n  - cell\n:class: evil\n# h\n> q\n---\norphan: false\n---\n"
    "{{{{ subst }}}} @user #123 %comment\n(target)=\n+++\n1. item\n    indented code\n<!-- c -->",
}
PAYLOADS["all"] = "\n".join(PAYLOADS.values())


def _payload(kind: str, secret: Path) -> str:
    return PAYLOADS[kind].format(secret=secret)


# --- a hostile bundle: every string field of every model ----------------------------------------------------


@dataclass
class _Walk:
    """Replaces every string leaf and dict key of JSON data by a payload, except at `frozen` paths."""

    payload: str
    keep: frozenset[str]
    frozen: set[tuple[object, ...]] = field(default_factory=set)
    keys: dict[str, object] = field(default_factory=dict)
    """Each hostile dict key → its original key (error locations name hostile keys)."""

    def value(self, data: object, path: tuple[object, ...] = ()) -> object:
        if path in self.frozen:
            return data
        if isinstance(data, str):
            return data if data in self.keep else self.payload
        if isinstance(data, list):
            return [self.value(item, (*path, i)) for i, item in enumerate(data)]
        if isinstance(data, dict):
            out = {}
            for i, (key, item) in enumerate(data.items()):
                hostile = key if (*path, "<keys>") in self.frozen or key in self.keep else f"{self.payload} {i}"
                self.keys[hostile] = key
                out[hostile] = self.value(item, (*path, key))
            return out
        return data

    def freeze(self, data: object, loc: tuple[object, ...], kind: str) -> None:
        """Freeze the deepest path of `data` that the error location `loc` reaches; the keys of a dict whose keys
        are a model's field names (an unknown or missing field) or must match a pattern (`[key]`)."""
        if kind in ("extra_forbidden", "missing"):
            loc = (*loc[:-1], "[key]")
        path: tuple[object, ...] = ()
        node = data
        for part in loc:
            original = self.keys.get(part, part) if isinstance(part, str) else part
            if part == "[key]":
                self.frozen.add((*path, "<keys>"))
                return
            if (isinstance(node, dict) and original in node) or (
                isinstance(node, list) and isinstance(original, int) and original < len(node)
            ):
                node, path = node[original], (*path, original)
        self.frozen.add(path)


def _hostile_json(path: Path, model: type[BaseModel], payload: str, keep: frozenset[str]) -> None:
    """Rewrite the JSON file at `path` with the payload in every string its model accepts one for."""
    data = json.loads(path.read_text(encoding="utf-8"))
    walk = _Walk(payload, keep)
    for _ in range(500):
        hostile = walk.value(data)
        try:
            model.model_validate(hostile)
        except ValidationError as exc:
            before = len(walk.frozen)
            for error in exc.errors():
                walk.freeze(data, tuple(error["loc"]), error["type"])
            if len(walk.frozen) == before:  # a whole-model check: keep the model as it was
                walk.frozen.add(())
            continue
        path.write_text(json.dumps(hostile), encoding="utf-8")
        assert walk.frozen != {()}, f"{path}: no field took the payload"
        return
    raise AssertionError(f"{path}: no hostile version validates")


def _bundle_dirs(results: Path) -> Iterator[Path]:
    for manifest in sorted(results.rglob(MANIFEST_FILE)):
        yield manifest.parent


def _make_hostile(bundle_dir: Path, payload: str) -> None:
    """Every model file of the bundle, its recipe and its log carry the payload."""
    if not (bundle_dir / COMPARISON_FILE).exists():
        comparison = compare_bundles(bundle_dir, bundle_dir)
        (bundle_dir / COMPARISON_FILE).write_text(comparison.model_dump_json(), encoding="utf-8")
    files = {p.relative_to(bundle_dir).as_posix() for p in bundle_dir.rglob("*")}
    keep = frozenset({*files, bundle_dir.name, bundle_dir.parent.name})
    for name, model in MODELS.items():
        if (bundle_dir / name).is_file():
            _hostile_json(bundle_dir / name, model, payload, keep)
    with (bundle_dir / RECIPE_FILE).open("a", encoding="utf-8") as recipe:
        recipe.write("".join(f"# {line}\n" for line in payload.splitlines()))
    with (bundle_dir / LOG_FILE).open("a", encoding="utf-8") as log:
        log.write(payload + "\n")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    """A results directory of one hostile copy of the canned history per payload, built into a site by
    `reportgen build`; its root, the secret's marker and the terminal output of build, compare and history."""
    root = tmp_path_factory.mktemp("hostile")
    marker = f"SECRET-{uuid.uuid4().hex}"
    secret = root / "secret.txt"
    secret.write_text(marker + "\n", encoding="utf-8")
    results = root / "results"
    for kind in PAYLOADS:
        name = f"hostile-{kind}"
        shutil.copytree(CPU_HISTORY / "addmul", results / name)
        shutil.copytree(CPU_HISTORY / HISTORY_DIR / "addmul", results / HISTORY_DIR / name)
    for bundle_dir in _bundle_dirs(results):
        name = bundle_dir.name if bundle_dir.parent == results else bundle_dir.parent.name
        manifest = json.loads((bundle_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
        (bundle_dir / MANIFEST_FILE).write_text(json.dumps({**manifest, "name": name}), encoding="utf-8")
        _make_hostile(bundle_dir, _payload(name.removeprefix("hostile-"), secret))
    out: dict[str, str] = {}
    for name, command in {
        "build": ["build", "results", "--out", "site"],
        "compare": ["compare", "results/hostile-all", "results/hostile-controls"],
        "markdown": ["compare", "results/hostile-all", "results/hostile-html", "--markdown"],
        "history": ["history", "results"],
    }.items():
        done = subprocess.run(
            [sys.executable, "-m", "reportgen", *command], cwd=root, capture_output=True, text=True, check=False
        )
        out[name] = done.stdout + done.stderr
        out[f"{name}.stdout"] = done.stdout
        out[f"{name}.returncode"] = str(done.returncode)
    return root, marker, out


def test_the_build_succeeds(hostile_site: tuple[Path, str, dict[str, str]]) -> None:
    """`-W`: no payload made a Sphinx warning, or a traceback."""
    _, _, out = hostile_site
    assert "Traceback" not in out["build"], out["build"]
    assert out["build.returncode"] == "0", out["build"]


# --- what must not survive ----------------------------------------------------------------------------------


class _Elements(html.parser.HTMLParser):
    """Every element and attribute of an HTML page, and the text outside `<code>`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag not in {"img", "br", "hr", "meta", "link", "input"}:
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            del self._stack[len(self._stack) - 1 - self._stack[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if self._stack[-1:] == ["script"]:
            self.scripts.append(data)
        if "code" not in self._stack and "pre" not in self._stack:
            self.text.append(data)


def _elements(text: str) -> _Elements:
    parser = _Elements()
    parser.feed(text)
    parser.close()
    return parser


def _assert_inert_html(text: str, where: str) -> None:
    """No element or attribute a payload made: no event handler, no javascript: URL, no payload tag."""
    page = _elements(text)
    for tag, attrs in page.tags:
        assert tag not in {"iframe"}, where
        assert not (tag == "img" and dict(attrs).get("src") == "x"), f"{where}: {tag} {attrs}"
        for name, value in attrs:
            assert not name.startswith("on"), f"{where}: <{tag} {name}={value!r}>"
            assert name not in {"x", "onmouseover", "onfocus"}, f"{where}: <{tag} {name}>"
            assert not (value or "").strip().lower().startswith("javascript:"), f"{where}: <{tag} {name}={value!r}>"
            assert not RAW_CONTROLS.search(value or ""), f"{where}: <{tag} {name}={value!r}>"
    assert not any("alert(1)" in script for script in page.scripts), where


def _site_files(root: Path) -> Iterator[Path]:
    yield from (p for p in sorted((root / "site").rglob("*")) if p.is_file() and not p.is_symlink())


def test_no_file_of_the_site_holds_the_secret(hostile_site: tuple[Path, str, dict[str, str]]) -> None:
    root, marker, _ = hostile_site
    files = list(_site_files(root))
    assert any(p.suffix == ".html" and "/reports/hostile-all/" in p.as_posix() for p in files)
    for path in files:
        assert marker.encode() not in path.read_bytes(), path


def test_every_payload_is_text_on_every_page(hostile_site: tuple[Path, str, dict[str, str]]) -> None:
    root, _, _ = hostile_site
    pages = [p for p in _site_files(root) if p.suffix == ".html"]
    reports = [p for p in pages if "/reports/hostile-" in p.as_posix()]
    kinds = {p.relative_to(root / "site").parts[3].split("~")[0] for p in reports if len(p.parts) > 3}
    assert kinds >= {f"hostile-{kind}" for kind in PAYLOADS}  # every bundle has pages
    names = {p.name for p in reports}
    assert {"index.html", "history.html", "compare.html"} <= names  # report, trend and comparison pages
    assert any(p.parent.name == "modules" for p in reports)  # source pages
    assert any("~" in p.parent.name for p in reports)  # kept runs' reports
    for page in pages:
        text = page.read_text(encoding="utf-8")
        _assert_inert_html(text, str(page))
        assert not RAW_CONTROLS.search(text), page
    report = (root / "site" / "_build" / "html" / "reports" / "hostile-html" / "index.html").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in report  # shown, as text


def test_sources_and_notebooks_hold_no_raw_controls(hostile_site: tuple[Path, str, dict[str, str]]) -> None:
    root, _, _ = hostile_site
    checked = 0
    for path in _site_files(root):
        if path.suffix in {".md", ".txt", ".js"} and "_build" not in path.relative_to(root / "site").parts[:1]:
            assert not RAW_CONTROLS.search(path.read_text(encoding="utf-8")), path
            checked += 1
    assert checked


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_the_notebook_renders_every_payload_as_text(hostile_site: tuple[Path, str, dict[str, str]], kind: str) -> None:
    """The notebook as `reportgen build` publishes it, rendered here from the hostile bundle."""
    root, _, _ = hostile_site
    bundle = load_bundle(root / "results" / f"hostile-{kind}")
    recipe_yaml = read_recipe_text(bundle.path)
    assert recipe_yaml is not None
    notebook = reproducer_notebook(bundle.manifest, recipe_yaml, bundle_dir=bundle.path)
    cells = notebook.cells
    assert len(cells) >= 5
    for cell in cells:
        assert not RAW_CONTROLS.search(cell.source), cell.source
        if cell.cell_type == "markdown":
            rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(cell.source)
            _assert_inert_html(rendered, cell.source)
            tags = {tag for tag, _ in _elements(rendered).tags}
            assert tags <= {"h1", "p", "code", "table", "thead", "tbody", "tr", "th", "td"}, (tags, cell.source)
            assert not _unescaped_dollars(cell.source), cell.source  # Jupyter finds math before Markdown


def _unescaped_dollars(source: str) -> list[int]:
    """Where Markdown source outside code spans holds a `$` that no backslash escapes (Jupyter's and GitHub's math):
    backslash escapes and code spans are read past, as CommonMark reads them."""
    pieces = re.finditer(r"\\.|(`+)(?!`)(.*?)(?<!`)\1(?!`)|\$", source, re.S)
    return [m.start() for m in pieces if m.group() == "$"]


def _assert_pull_request_markdown(text: str) -> None:
    """GitHub Markdown that shows every payload as text: no HTML, link, image, fence, mention or broken table."""
    assert not RAW_CONTROLS.search(text)
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    page = _elements(rendered)
    tags = {tag for tag, _ in page.tags}
    assert tags <= {"h2", "h3", "p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td"}, tags
    outside_code = "".join(page.text)
    assert not re.search(r"[@#]\w|://|www\.", outside_code), outside_code  # GitHub would link these
    assert not _unescaped_dollars(text), text  # GitHub renders `$...$` as math
    for table in re.findall(r"<table>.*?</table>", rendered, re.S):
        widths = {len(re.findall(r"<t[hd]", row)) for row in re.findall(r"<tr>.*?</tr>", table, re.S)}
        assert len(widths) == 1, table  # no `|` or newline broke a row


def test_compare_markdown_and_text_show_every_payload_as_text(
    hostile_site: tuple[Path, str, dict[str, str]],
) -> None:
    _, _, out = hostile_site
    _assert_pull_request_markdown(out["markdown.stdout"])
    assert "hostile" not in out["markdown.stdout"] or "`hostile-html`" in out["markdown.stdout"]


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_every_field_of_a_comparison_is_escaped(tmp_path: Path, kind: str) -> None:
    """A comparison whose every string is the payload, as `compare --markdown` and `compare` write it."""
    bundle = tmp_path / "b"
    shutil.copytree(CPU_HISTORY / "addmul", bundle)
    comparison = compare_bundles(bundle, bundle)
    data = comparison.model_dump(mode="json")
    data["kernels"] = [
        {"graph": "g", "name": "k", "category": "c", "before_us": 1.0, "after_us": 2.0, "kind": "slower"}
    ]
    data["categories"] = [{"graph": "g", "category": "c", "before_us": 1.0, "after_us": 2.0}]
    data["compile_phases_s"] = {"phase": [1.0, 2.0]}
    data["notes"] = ["note"]
    path = tmp_path / COMPARISON_FILE
    path.write_text(json.dumps(data), encoding="utf-8")
    _hostile_json(path, Comparison, _payload(kind, tmp_path / "secret.txt"), frozenset())
    hostile = Comparison.model_validate_json(path.read_text(encoding="utf-8"))
    _assert_pull_request_markdown(to_markdown([hostile]))
    text = to_text([hostile])
    assert not RAW_CONTROLS.search(text)
    assert "\\x1b[31m" in to_text([hostile]) or kind not in ("controls", "all")


@pytest.mark.parametrize("command", ["build", "compare", "markdown", "history"])
def test_the_terminal_gets_no_raw_control(hostile_site: tuple[Path, str, dict[str, str]], command: str) -> None:
    _, _, out = hostile_site
    assert "Traceback" not in out[command], out[command]
    assert out[f"{command}.returncode"] in (("0",) if command in ("build", "history") else ("0", "1")), out[command]
    assert not RAW_CONTROLS.search(out[command]), out[command]
    if command in ("compare", "history"):
        assert "\\x1b[31m" in out[command]  # shown, as text


# --- bundle directories with hostile names ------------------------------------------------------------------

NAMES = [
    'quote"onmouseover="alert(1)',
    "with space",
    "less<than>",
    "index.md",
    "index.html",
    "speedups.png",
    "..something",
    "ünïcödé",
    "tilde~1",
    "esc\x1b[31m",
    "bidi\u202eevil",
    "new\nline",
    "x" * 200,
]


def test_hostile_directory_names_are_rendered_safely_or_skipped(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for name in ["plain", *NAMES]:
        shutil.copytree(CPU_HISTORY / "addmul", results / name)
    done = subprocess.run(
        [sys.executable, "-m", "reportgen", "build", "results", "--out", "site"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert not RAW_CONTROLS.search(done.stdout + done.stderr)
    html_dir = tmp_path / "site" / "_build" / "html"
    assert (html_dir / "reports" / "plain" / "index.html").is_file()
    index = (html_dir / "reports" / "index.html").read_text(encoding="utf-8")
    _assert_inert_html(index, "index")
    for page in html_dir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        _assert_inert_html(text, str(page))
        assert not RAW_CONTROLS.search(text), page
    for name in NAMES:
        page = html_dir / "reports" / path_segment(name) / "index.html"
        rendered = page.is_file()
        warned = any(shown[:20] in done.stderr for shown in (terminal_text(name, single_line=True), repr(name)[1:]))
        assert rendered or warned or name.startswith("."), name  # a dot name is hidden, as `.history` is
        if rendered:
            assert f'href="{path_segment(name)}/index.html"' in index, name
    for directory in (html_dir / "reports").iterdir():
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.~-]*", directory.name), directory.name
