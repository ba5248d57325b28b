"""Run the docs pages and write what their code printed into them.

Run: python docs/build.py            # run every page, record its outputs in it
     python docs/build.py --check    # run every page; fail when one is stale
     python docs/build.py --page 01_tensors --check   # one page
     python docs/build.py --site --open               # the HTML site, opened

Each Blitz page is one file, ``docs/NAME.md``: the Markdown a person writes and,
written into it by this script, what its code printed. GitHub shows it as it is,
the Sphinx site renders it as it is, and its notebook is made from it. A page is
a Blitz page when some fenced code block of it carries a tag::

    ```python torch                  shown as the PyTorch code, never run here
    ```python exec=functional        run in the page's "functional" namespace
    ```python exec=nnx               run in the page's "nnx" namespace
    ```python exec=compat            run in the page's "compat" namespace

Consecutive tagged blocks (separated only by blank lines and their labels) form
one *step*. This script keeps three things in a page, and a person never edits
them: the links to its notebook under its title, a label over each tagged block
(``**jaxblitz.compat**``) and, after a step's blocks, what each ``exec`` block
printed (``Output (compat):`` and a ``text`` block). Everything else is the
person's: a new step is written as its tagged blocks alone, and ``python
docs/build.py`` adds the labels and outputs.

Each page is also a notebook, ``docs/notebooks/NAME.ipynb``, made from the page
(never edited by hand): an install cell (jaxblitz from the repository named in
pyproject.toml), a setup cell, then the page's text as Markdown cells, the PyTorch
code as Markdown and each ``exec`` block as a code cell. The functional code runs
in the notebook's namespace, the nnx and compat code under ``%%nnx`` /
``%%compat`` (``jaxblitz.notebook``), one namespace per column as on the page. The
notebooks are committed, because Colab opens a notebook from its GitHub path, and
*without outputs* (no execution counts, stable cell ids): small files whose diffs
show only what changed in the page; the outputs are on the pages. ``--check``
fails when a committed notebook differs from a fresh one. ``ruff check .`` and
``ruff format --check .`` read the notebooks too: the pages' code keeps the
project's lint and format.

The notebook is what the page's outputs come from: each page's notebook is run in
a fresh kernel with nbclient (CPU, Agg backend, a temporary working directory; the
install cell skipped) and what each code cell printed to stdout is recorded under
its block -- not stderr (warnings, progress bars), not the value of a last
expression, and without colours. Pictures the code writes to ``img/*.png`` are
copied to ``docs/img``. A comment ``<!-- build: env NAME=VALUE ... -->`` in a
page is set by the notebook's setup cell before JAX starts
(``JAX_NUM_CPU_DEVICES=8`` for the data-parallel page). ``--torch`` also runs the
PyTorch code, as ``%%torch`` cells of the copy that is run.

Options after the tags of an ``exec`` block:

- ``rtol=R atol=A``: how far a recorded number may move (default 1e-3, 1e-6);
- ``check=text``: numbers in its output are not compared (timings, training runs
  whose last digits depend on the CPU); ``check=none``: it only has to run.

A recorded output is rewritten only when the new one differs beyond these
tolerances: no churn. ``--check`` compares text exactly and numbers within
tolerance, masks object addresses (``0x7f...``) and timings (``1.2 s``,
``350 img/s``, ``3.1x``), and fails when a page's code raises, its outputs or
labels are not what the page records, a picture it references is not produced,
or its notebook is stale. The README's ``python`` blocks are run as a script in a
fresh Python (one namespace, in order) and must not raise.

``--site`` builds the HTML site (Sphinx, warnings as errors) into
``docs/_build/html`` from the pages as they are, without running them;
``--open`` then opens it in the browser.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
import webbrowser
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
IMG = DOCS / "img"
NOTEBOOKS = DOCS / "notebooks"
LABELS = {
    "torch": "**PyTorch**",
    "functional": "**jaxblitz, functional**",
    "nnx": "**jaxblitz.nnx (Flax NNX)**",
    "compat": "**jaxblitz.compat**",
    "readme": "README",
}
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-6
PAGE_TIMEOUT_S = 600
FENCE = re.compile(r"^```(\S*)(.*)$")
BUILD_COMMENT = re.compile(r"^<!-- build: (.*) -->\s*$")
OUTPUT = re.compile(r"^Output \((\w+)\):$")
IMAGE_REF = re.compile(r"!\[[^\]]*\]\((img/[^)\s]+\.png)\)")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
LINK = re.compile(r"(\]\()(?![a-z]+:|#)([^)\s]+)(\))")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
IMPORTS_TORCH = re.compile(r"^\s*(?:import|from) torch\b", re.MULTILINE)
TIMING = re.compile(
    r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?\s*"
    r"(?:ms|µs|us|ns|s|min|seconds|img/s|images/s|steps/s|it/s|x|×)(?![\w/])"
)


# -- Parsing ------------------------------------------------------------------------
@dataclass
class Block:
    """One fenced code block of a page."""

    lang: str
    tags: list[str]
    opts: dict[str, str]
    code: str
    info: str = ""  # the fence's words as written: ```{info}

    @property
    def column(self) -> str | None:
        if "torch" in self.tags:
            return "torch"
        return self.opts.get("exec")


@dataclass
class Page:
    name: str
    chunks: list  # str (Markdown text) or list[Block] (a step) or Block (verbatim)
    env: dict[str, str] = field(default_factory=dict)


def parse_fences(text: str) -> list:
    """Split Markdown into text (str) and fenced blocks (Block)."""
    out: list = []
    lines = text.splitlines(keepends=True)
    buf: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            buf.append(lines[i])
            i += 1
            continue
        lang, rest = m.group(1), m.group(2).split()
        body = []
        i += 1
        while i < len(lines) and lines[i].rstrip("\n") != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"unclosed code fence: {m.group(0)!r}")
        i += 1
        if buf:
            out.append("".join(buf))
            buf = []
        tags = [t for t in rest if "=" not in t]
        opts = dict(t.split("=", 1) for t in rest if "=" in t)
        info = " ".join([lang, *rest])
        out.append(Block(lang, tags, opts, "".join(body), info))
    if buf:
        out.append("".join(buf))
    return out


def is_page(path: Path) -> bool:
    """A Blitz page: a Markdown file with a tagged (torch or exec) code block."""
    return any(_tagged_fence(line) for line in path.read_text().splitlines())


def page_paths() -> list[Path]:
    return [p for p in sorted(DOCS.glob("*.md")) if is_page(p)]


def _tagged_fence(line: str) -> bool:
    """Whether ``line`` opens a code block tagged torch or exec=..."""
    m = FENCE.match(line)
    words = m.group(2).split() if m and m.group(1) else []
    return "torch" in words or any(w.startswith("exec=") for w in words)


def _next_text_line(lines: list[str], i: int) -> int:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def page_source(text: str, name: str) -> str:
    """The page without what this script writes into it (its notebook links, the
    labels over the tagged blocks, the outputs): what a person writes."""
    title = re.search(r"^# .*\n", text, re.MULTILINE)
    links = "\n" + notebook_links(name)
    if title and text.startswith(links, title.end()):
        text = text[: title.end()] + text[title.end() + len(links) :]
    lines = text.splitlines(keepends=True)
    labels = set(LABELS.values())
    kept, i = [], 0
    while i < len(lines):
        line, j = lines[i].rstrip("\n"), _next_text_line(lines, i + 1)
        after = lines[j] if j < len(lines) else ""
        if line in labels and _tagged_fence(after):
            i = j
            continue
        if OUTPUT.match(line) and after == "```text\n":
            k = j + 1
            while k < len(lines) and lines[k] != "```\n":
                k += 1
            i = _next_text_line(lines, k + 1)
            continue
        kept.append(lines[i])
        i += 1
    return "".join(kept)


def parse_page(path: Path) -> Page:
    env: dict[str, str] = {}
    kept = []
    for line in page_source(path.read_text(), path.stem).splitlines(keepends=True):
        m = BUILD_COMMENT.match(line)
        if m:
            words = m.group(1).split()
            if words[:1] != ["env"]:
                raise ValueError(f"{path.name}: unknown build comment {line!r}")
            env.update(w.split("=", 1) for w in words[1:])
        else:
            kept.append(line)
    chunks: list = []
    for piece in parse_fences("".join(kept).lstrip("\n")):
        step_block = isinstance(piece, Block) and piece.column is not None
        if step_block and chunks and isinstance(chunks[-1], list):
            chunks[-1].append(piece)  # the same step: only blank lines in between
        elif step_block:
            chunks.append([piece])
        elif isinstance(piece, str) and not piece.strip() and chunks:
            if isinstance(chunks[-1], list):
                continue  # blank lines between the blocks of one step
            chunks.append(piece)
        else:
            chunks.append(piece)
    return Page(path.stem, chunks, env)


def readme_page() -> Page:
    blocks = [
        Block(b.lang, ["exec"], {"exec": "readme"}, b.code)
        for b in parse_fences((ROOT / "README.md").read_text())
        if isinstance(b, Block) and b.lang == "python"
    ]
    return Page("README", [blocks])


# -- Running the README (in a subprocess) -------------------------------------------
def exec_blocks(page: Page, run_torch: bool) -> list[Block]:
    blocks = [b for c in page.chunks if isinstance(c, list) for b in c]
    if not run_torch:
        return [b for b in blocks if b.column != "torch"]
    return [b for b in blocks if b.column != "torch" or "norun" not in b.tags]


def run_job(job_path: str, result_path: str) -> None:
    """Subprocess side: run each column's blocks in its own namespace, in order."""
    job = json.loads(Path(job_path).read_text())
    spaces: dict[str, dict] = {}
    failed: set[str] = set()
    results = []
    for i, (column, code) in enumerate(job["blocks"]):
        if column in failed:
            results.append({"stdout": "", "error": "not run: an earlier block failed"})
            continue
        space = spaces.setdefault(column, {"__name__": "__main__"})
        out = io.StringIO()
        error = None
        name = f"<{job['page']}: {column} block {i + 1}>"
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, name, "exec"), space)
        except BaseException:  # reported to the builder, which fails the page
            error = traceback.format_exc()
            failed.add(column)
        finally:
            sys.stdout.flush()
        results.append({"stdout": out.getvalue(), "error": error})
    Path(result_path).write_text(json.dumps(results))


def run_page(page: Page, workdir: Path, run_torch: bool = False) -> list[dict]:
    """Run a page's exec blocks as a script in a fresh Python, one result per exec
    block: the README's (the docs pages run as notebooks: ``run_notebook``)."""
    blocks = exec_blocks(page, run_torch)
    (workdir / "img").mkdir(parents=True, exist_ok=True)
    if not blocks:  # a page of text only (the index): nothing to start a Python for
        return []
    job, result = workdir / "job.json", workdir / "result.json"
    job.write_text(
        json.dumps({"page": page.name, "blocks": [[b.column, b.code] for b in blocks]})
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", PYTHONHASHSEED="0")
    # Nothing in ~/.cache: the CLI's own cache is off. JAX's cache, when the
    # environment names one (JAX_COMPILATION_CACHE_DIR: the tests do), is used.
    env["JAXBLITZ_XLA_CACHE"] = ""
    env.pop("JAX_NUM_CPU_DEVICES", None)
    env.update(page.env)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--run-job", str(job)]
        + [str(result)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT_S,
    )
    if proc.returncode != 0 or not result.exists():
        raise RuntimeError(
            f"{page.name}: the page runner crashed (exit {proc.returncode}):\n"
            f"{proc.stderr[-4000:]}"
        )
    results = json.loads(result.read_text())
    errors = [
        f"--- {page.name}, {b.column} block {i + 1}:\n{b.code}\n{r['error']}"
        for i, (b, r) in enumerate(zip(blocks, results, strict=True))
        if r["error"] and not r["error"].startswith("not run")
    ]
    if errors:
        raise RuntimeError(f"{page.name}: code failed\n" + "\n".join(errors))
    return [r for b, r in zip(blocks, results, strict=True) if b.column != "torch"]


# -- Notebooks ----------------------------------------------------------------------
def repository() -> str:
    """The project's repository URL: ``[project.urls] Repository`` in pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]["urls"]["Repository"].rstrip("/")


RUNTIME_NOTE = (
    "On a hosted runtime, choose a GPU or TPU (Colab: *Runtime > Change runtime "
    "type*): nothing in the code changes. `jax.devices()` lists the accelerator, "
    "arrays and compiled steps go to it, and `jaxblitz-train --devices all` trains "
    "on every one; the outputs recorded here were printed on the CPU.\n"
)


def has_notebook(page: Page) -> bool:
    """A page with code to run has a notebook (the index has none)."""
    return page.name != "README" and bool(exec_blocks(page, False))


def notebook_links(name: str) -> str:
    """The lines under a page's title: where to open its notebook, and on what."""
    repo = repository()
    path = f"docs/notebooks/{name}.ipynb"
    colab = "https://colab.research.google.com/github/" + repo.removeprefix(
        "https://github.com/"
    )
    return (
        f"Open in a notebook: [Colab]({colab}/blob/main/{path}) · "
        f"[download](notebooks/{name}.ipynb)\n\n" + RUNTIME_NOTE
    )


def _under_title(text: str, lines: str) -> str:
    """``text`` with ``lines`` as a paragraph after its first ``# `` title."""
    head, sep, rest = text.partition("\n")
    if not head.startswith("# "):
        raise ValueError(f"a page with code starts with its '# ' title: {head!r}")
    return f"{head}{sep}\n{lines}{rest}"


def _absolute_links(text: str, repo: str) -> str:
    """Relative links of a page (``02_autograd.md``, ``img/loss.png``) as links into
    the repository: a notebook opened elsewhere (Colab) has no docs/ beside it."""

    def absolute(m: re.Match) -> str:
        path = os.path.normpath(f"docs/{m.group(2)}")
        raw = "?raw=true" if path.endswith(".png") else ""
        return f"{m.group(1)}{repo}/blob/main/{path}{raw}{m.group(3)}"

    return LINK.sub(absolute, text)


def notebook(
    page: Page, executed: bool = False, run_torch: bool = False
) -> tuple[dict, list[Block | None]]:
    """The page as a notebook, and for each cell the exec block it runs (or None).

    The functional code runs in the notebook's own namespace, the other columns
    under ``%%nnx`` / ``%%compat`` (jaxblitz.notebook), each in its own; the PyTorch
    code is shown as Markdown. The copy that is ``executed`` to build the page runs
    the column cells under the names the blocks had when pages were run as scripts
    (``%%compat <07_porting: compat block 7>``), starts with a cell that has rich
    print plain text as in a script, and with ``run_torch`` runs the PyTorch code
    too, as ``%%torch`` cells.
    """
    repo = repository()
    cells: list[tuple[dict, Block | None]] = []
    text: list[str] = []

    def markdown(source: str) -> None:
        cells.append((nbformat.v4.new_markdown_cell(source.strip("\n")), None))

    def flush() -> None:
        if "".join(text).strip():
            markdown(_absolute_links("".join(text), repo))
        text.clear()

    def code(source: str, block: Block | None = None, tag: str = "") -> None:
        cell = nbformat.v4.new_code_cell(source.rstrip("\n"))
        if tag:
            cell.metadata["tags"] = [tag]
        cells.append((cell, block))

    def run(block: Block) -> None:
        magic = "" if block.column == "functional" else f"%%{block.column}"
        if magic and executed:
            number = sum(b is not None for _, b in cells) + 1
            magic += f" <{page.name}: {block.column} block {number}>"
        code(f"{magic}\n{block.code}" if magic else block.code, block)

    torch = any(IMPORTS_TORCH.search(b.code) for b in exec_blocks(page, False))
    code(
        "# On a hosted runtime (Colab, Kaggle): install jaxblitz from its repository."
        "\n# The digits data of these pages ships with it: nothing else to download."
        + ("\n# This page also imports PyTorch, to compare names." if torch else "")
        + f'\n%pip install -q "jaxblitz @ git+{repo}"'
        + (" torch" if torch else ""),
        tag="install",
    )
    setup = ["import os", ""]
    setup += [
        f"os.environ[{json.dumps(k)}] = {json.dumps(v)}  # before JAX starts"
        for k, v in page.env.items()
    ]
    setup += [
        'os.makedirs("img", exist_ok=True)  # the pictures the code draws go here',
        "# %%nnx and %%compat cells: each column in a namespace of its own",
        "%load_ext jaxblitz.notebook",
    ]
    code("\n".join(setup), tag="setup")
    if executed:
        # What a script prints, as the pages record it: ipykernel forces colour
        # (FORCE_COLOR) and rich draws its tables as HTML in a notebook
        # (jax.debug.visualize_array_sharding; private, hence checked by page 5).
        code(
            "import os\n\nimport rich.console\n\n"
            'os.environ.pop("FORCE_COLOR", None)\n'
            'os.environ.pop("CLICOLOR_FORCE", None)\n'
            "rich.console._is_jupyter = lambda: False",
            tag="build",
        )
    first = True
    for chunk in page.chunks:
        if isinstance(chunk, str):
            if first:
                note = (
                    f"<!-- Made by docs/build.py from docs/{page.name}.md: edit "
                    "that page, then run `python docs/build.py`. -->\n\n"
                )
                chunk = note + _under_title(chunk.lstrip("\n"), RUNTIME_NOTE)
                first = False
            text.append(chunk)
        elif isinstance(chunk, Block):
            text.append(f"```{' '.join([chunk.lang, *chunk.tags])}\n{chunk.code}```\n")
        else:
            flush()
            for block in chunk:
                if block.column == "torch":
                    markdown(
                        f"{LABELS['torch']}, for comparison:\n\n"
                        f"```python\n{block.code}```"
                    )
                else:
                    markdown(LABELS[block.column])
                torch_runs = executed and run_torch and "norun" not in block.tags
                if block.column != "torch" or torch_runs:
                    run(block)
    flush()
    nb = nbformat.v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5  # fixed: the file does not follow nbformat
    nb.metadata = {
        "kernelspec": {
            "display_name": "Python 3",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
    }
    for i, (cell, _) in enumerate(cells):
        cell.id = f"{page.name}-{i}"  # stable ids: an unchanged page, the same file
    nb.cells = [cell for cell, _ in cells]
    nbformat.validate(nb)
    return nb, [block for _, block in cells]


def notebook_text(page: Page) -> str:
    """The committed notebook: no outputs, no execution counts."""
    return nbformat.writes(notebook(page)[0]) + "\n"


def kernel_env(page: Page) -> dict[str, str]:
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", PYTHONHASHSEED="0")
    # Nothing in ~/.cache: the CLI's own cache is off. JAX's cache, when the
    # environment names one (JAX_COMPILATION_CACHE_DIR: the tests do), is used.
    env["JAXBLITZ_XLA_CACHE"] = ""
    env.pop("JAX_NUM_CPU_DEVICES", None)  # the notebook's setup cell sets the page's
    return env


def _error_text(cell: dict) -> str | None:
    errors = [o for o in cell.outputs if o.output_type == "error"]
    if not errors:
        return None
    return "\n".join(ANSI.sub("", "\n".join(o.traceback)) for o in errors)


def run_notebook(page: Page, workdir: Path, run_torch: bool = False) -> list[dict]:
    """Execute the page's notebook in a fresh kernel (its install cell skipped); one
    result (``stdout``, ``error``) per exec block but the PyTorch ones.

    Only what the code prints to stdout is recorded, as the pages show it: not the
    value of a cell's last expression, nor stderr (warnings, progress bars).
    """
    nb, owners = notebook(page, executed=True, run_torch=run_torch)
    (workdir / "img").mkdir(parents=True, exist_ok=True)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        allow_errors=True,  # each cell's error is read below, named by its block
        iopub_timeout=60,  # a loaded machine: wait for a cell's last output...
        raise_on_iopub_timeout=True,  # ...rather than lose it
        resources={"metadata": {"path": str(workdir)}},
    )
    log_path = workdir / "kernel.log"
    cells = _Cells(page, nb, owners)
    try:
        with (
            log_path.open("w") as log,
            client.setup_kernel(env=kernel_env(page), stdout=log, stderr=log),
        ):
            cells.run(client)
    except CellTimeoutError as e:
        raise RuntimeError(
            f"{page.name}: not done after {PAGE_TIMEOUT_S} s, in {cells.where()}"
        ) from e
    except DeadKernelError as e:
        raise RuntimeError(
            f"{page.name}: the kernel died in {cells.where()}; its log:\n"
            + log_path.read_text()[-4000:]
        ) from e
    except Exception as e:
        if isinstance(e, RuntimeError) and str(e).startswith(page.name):
            raise
        raise RuntimeError(
            f"{page.name}: the notebook runner failed in {cells.where()}: {e!r}; "
            "the kernel's log:\n" + log_path.read_text()[-4000:]
        ) from e
    if cells.errors:
        raise RuntimeError(f"{page.name}: code failed\n" + "\n".join(cells.errors))
    return [r for b, r in cells.results if b.column != "torch"]


class _Cells:
    """Runs a page's notebook cell by cell; a column whose cell failed runs no more
    cells (the next would fail on what it did not define)."""

    def __init__(self, page: Page, nb, owners: list[Block | None]):
        self.page, self.nb, self.owners = page, nb, owners
        self.index: int | None = None
        self.results: list[tuple[Block, dict]] = []
        self.errors: list[str] = []

    def where(self) -> str:
        if self.index is None:
            return "starting the kernel"
        block = self.owners[self.index]
        if block is None:
            return f"the {self.nb.cells[self.index].metadata['tags'][0]} cell"
        n = sum(b is not None for b in self.owners[: self.index + 1])
        return f"{block.column} block {n}:\n{block.code}"

    def run(self, client: NotebookClient) -> None:
        deadline = time.monotonic() + PAGE_TIMEOUT_S
        failed: set[str] = set()
        for index, (cell, block) in enumerate(
            zip(self.nb.cells, self.owners, strict=True)
        ):
            tags = cell.metadata.get("tags", [])
            if cell.cell_type != "code" or "install" in tags:
                continue
            self.index = index
            if block is not None and block.column in failed:
                self.results.append((block, {"stdout": "", "error": "not run"}))
                continue
            client.timeout = max(1, int(deadline - time.monotonic()))
            client.execute_cell(cell, index)
            error = _error_text(cell)
            if block is None and error:  # the setup cell
                raise RuntimeError(f"{self.page.name}: {self.where()} failed:\n{error}")
            if block is None:
                continue
            if error:
                failed.add(block.column)
                self.errors.append(f"--- {self.page.name}, {self.where()}\n{error}")
            stdout = "".join(
                o.text
                for o in cell.outputs
                if o.output_type == "stream" and o.name == "stdout"
            )
            stdout = ANSI.sub("", stdout)  # a notebook's colours (JAX's jaxprs)
            self.results.append((block, {"stdout": stdout, "error": error}))


# -- Rendering ----------------------------------------------------------------------
def clean_output(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def render(
    page: Page, results: list[dict], recorded: list[str] | None = None
) -> tuple[str, list[Block | None]]:
    """The page with its notebook links, labels and outputs, and for each of its
    fenced blocks the exec block whose output it is (None for code and verbatim
    blocks). An output that matches the one ``recorded`` in its place (within
    tolerance) is kept as recorded."""
    recorded = iter(recorded or [])
    env = " ".join(f"{k}={v}" for k, v in page.env.items())
    out = [f"<!-- build: env {env} -->\n"] if env else []
    owners: list[Block | None] = []
    results = iter(results)
    links = notebook_links(page.name) if has_notebook(page) else None
    for chunk in page.chunks:
        if isinstance(chunk, str) and links:
            chunk, links = _under_title(chunk, links), None
        if isinstance(chunk, str):
            after_step = out and out[-1].endswith("```\n\n")
            out.append(chunk.lstrip("\n") if after_step else chunk)
        elif isinstance(chunk, Block):
            out.append(f"```{chunk.info}\n{chunk.code}```\n")
            owners.append(None)
        else:
            outputs = []
            for block in chunk:
                label = LABELS[block.column]
                out.append(f"{label}\n\n```{block.info}\n{block.code}```\n\n")
                owners.append(None)
                if block.column != "torch":
                    text = clean_output(next(results)["stdout"])
                    if text:
                        outputs.append((block, text))
            for block, text in outputs:
                was = next(recorded, None)
                if was is not None and outputs_match(was, text, block) is None:
                    text = was  # no churn: timings, addresses, last digits
                out.append(f"Output ({block.column}):\n\n```text\n{text}\n```\n\n")
                owners.append(block)
    return "".join(out).rstrip("\n") + "\n", owners


# -- Comparing ----------------------------------------------------------------------
def _tokens(text: str, numbers: bool) -> tuple[list[str], list[float]]:
    text = ADDRESS.sub("0x?", text)
    text = TIMING.sub("<timing>", text)
    words, nums, pos = [], [], 0
    for m in NUMBER.finditer(text):
        words.append(re.sub(r"\s+", "", text[pos : m.start()]))
        nums.append(float(m.group()))
        pos = m.end()
    words.append(re.sub(r"\s+", "", text[pos:]))
    if not numbers:
        return ["".join(words)], []
    return words, nums


def outputs_match(old: str, new: str, block: Block) -> str | None:
    """None when ``new`` matches the recorded ``old``; else what differs."""
    check = block.opts.get("check", "numbers")
    if check == "none":
        return None
    numbers = check != "text"
    old_words, old_nums = _tokens(old, numbers)
    new_words, new_nums = _tokens(new, numbers)
    if old_words != new_words or len(old_nums) != len(new_nums):
        return "text differs"
    rtol = float(block.opts.get("rtol", DEFAULT_RTOL))
    atol = float(block.opts.get("atol", DEFAULT_ATOL))
    for a, b in zip(old_nums, new_nums, strict=True):
        same = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= atol + rtol * abs(a)
        if not same:
            return f"number {b!r} is not within tolerance of the recorded {a!r}"
    return None


def page_diff(old: str, new: str, owners: list[Block | None]) -> list[str]:
    """What differs between a committed page and a fresh rendering of it."""
    old_parts, new_parts = parse_fences(old), parse_fences(new)
    if len(old_parts) != len(new_parts):
        return ["the page's structure changed (blocks added, removed or empty)"]
    problems, k = [], 0
    for o, n in zip(old_parts, new_parts, strict=True):
        if isinstance(n, str) or isinstance(o, str):
            if o != n:
                problems.append(f"text differs near: {str(n).strip()[:80]!r}")
            continue
        owner, k = owners[k], k + 1
        if owner is None:
            if (o.lang, o.code) != (n.lang, n.code):
                problems.append(f"code differs: {n.code.strip()[:80]!r}")
            continue
        why = outputs_match(o.code, n.code, owner)
        if why:
            problems.append(
                f"output of this {owner.column} block no longer matches ({why}):\n"
                f"{owner.code.strip()[:300]}\n--- recorded:\n{o.code[:1500]}"
                f"--- now:\n{n.code[:1500]}"
            )
    return problems


def recorded_outputs(old: str, owners: list[Block | None]) -> list[str] | None:
    """The outputs of a committed page, one per output of a fresh rendering whose
    fenced blocks are ``owners``; None when the two have different blocks."""
    blocks = [part for part in parse_fences(old) if isinstance(part, Block)]
    if len(blocks) != len(owners):
        return None
    pairs = zip(blocks, owners, strict=True)
    return [b.code.rstrip("\n") for b, owner in pairs if owner is not None]


# -- Driver -------------------------------------------------------------------------
def build_one(page: Page, check: bool, run_torch: bool) -> tuple[str, list[str], float]:
    t0 = time.perf_counter()
    stale = notebook_problems(page, check)
    with tempfile.TemporaryDirectory(prefix=f"docs-{page.name}-") as tmp:
        workdir = Path(tmp)
        try:
            if page.name == "README":
                run_page(page, workdir)
                return page.name, [], time.perf_counter() - t0
            results = (
                run_notebook(page, workdir, run_torch) if has_notebook(page) else []
            )
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            return page.name, stale + [str(e)], time.perf_counter() - t0
        target = DOCS / f"{page.name}.md"
        old = target.read_text()
        new, owners = render(page, results)
        new, owners = render(page, results, recorded_outputs(old, owners))
        problems = page_diff(old, new, owners)
        made = {p.name for p in (workdir / "img").glob("*.png")}
        missing = sorted(
            ref for ref in set(IMAGE_REF.findall(new)) if Path(ref).name not in made
        )
        if missing:
            problems.append(f"pictures referenced but not produced: {missing}")
        if check:
            absent = [r for r in IMAGE_REF.findall(new) if not (DOCS / r).exists()]
            if absent:
                problems.append(f"pictures missing from docs/: {absent}")
            return page.name, stale + problems, time.perf_counter() - t0
        if missing:
            return page.name, problems, time.perf_counter() - t0
        if problems:  # only rewrite what changed beyond tolerance: no churn
            target.write_text(new)
        IMG.mkdir(exist_ok=True)
        for name in made:
            if problems or not (IMG / name).exists():
                shutil.copyfile(workdir / "img" / name, IMG / name)
        return page.name, [], time.perf_counter() - t0


def notebook_problems(page: Page, check: bool) -> list[str]:
    """Write the page's notebook where it changed; with ``check``, say so instead."""
    target = NOTEBOOKS / f"{page.name}.ipynb"
    if not has_notebook(page):
        return []
    text = notebook_text(page)
    if target.exists() and target.read_text() == text:
        return []
    if check:
        return [f"{target.relative_to(ROOT)} is stale: run python docs/build.py"]
    NOTEBOOKS.mkdir(exist_ok=True)
    target.write_text(text)
    return []


def orphan_notebooks(pages: list[Page], check: bool) -> list[str]:
    """Notebooks of pages that are gone: removed, or with ``check`` reported."""
    kept = {f"{p.name}.ipynb" for p in pages if has_notebook(p)}
    orphans = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if p.name not in kept)
    if check:
        return [f"{p.relative_to(ROOT)} has no page in docs/" for p in orphans]
    for path in orphans:
        path.unlink()
    return []


def site(open_it: bool) -> int:
    """Build the HTML site into docs/_build/html (Sphinx, a warning fails it) and
    with ``open_it`` open its index in the browser."""
    html = DOCS / "_build" / "html"
    argv = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html"]
    proc = subprocess.run([*argv, str(DOCS), str(html)], cwd=ROOT)
    if proc.returncode == 0:
        print(f"The site: {(html / 'index.html').as_uri()}")
        if open_it:
            webbrowser.open((html / "index.html").as_uri())
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="re-run and compare")
    parser.add_argument("--page", action="append", help="only this page (stem)")
    parser.add_argument("--torch", action="store_true", help="also run torch blocks")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument(
        "--site", action="store_true", help="build the HTML site (runs no page)"
    )
    parser.add_argument("--open", action="store_true", help="open the built site")
    parser.add_argument("--run-job", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_job:
        run_job(*args.run_job)
        return 0
    if args.site or args.open:
        return site(args.open)
    pages = [parse_page(p) for p in page_paths()]
    orphans = [] if args.page else orphan_notebooks(pages, args.check)
    pages.append(readme_page())
    if args.page:
        pages = [p for p in pages if p.name in args.page]
        if not pages:
            parser.error(f"no page named {args.page}")
    t0 = time.perf_counter()
    # The slowest pages first, so the pool finishes together.
    pages.sort(key=lambda p: -sum(len(b.code) for b in exec_blocks(p, False)))
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        done = list(pool.map(lambda p: build_one(p, args.check, args.torch), pages))
    failed = len(orphans)
    for orphan in orphans:
        print(f"FAILED: {orphan}")
    for name, problems, seconds in sorted(done):
        status = "ok" if not problems else "FAILED"
        print(f"{name:24s} {status:6s} {seconds:6.1f} s")
        for problem in problems:
            failed += 1
            print("    " + problem.replace("\n", "\n    "))
    verb = "checked" if args.check else "built"
    print(f"{verb} {len(done)} pages in {time.perf_counter() - t0:.1f} s")
    if failed and args.check:
        print("Run `python docs/build.py` to record the pages' outputs.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
