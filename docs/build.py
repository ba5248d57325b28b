"""Build the docs pages from ``docs/src/*.md`` by running their code.

Run: python docs/build.py            # regenerate docs/*.md and docs/img/*.png
     python docs/build.py --check    # re-run everything; fail on stale output
     python docs/build.py --page 01_tensors --check   # one page

A source page is Markdown whose fenced code blocks may carry tags::

    ```python torch                  shown as the PyTorch code, never run here
    ```python exec=functional        run in the page's "functional" namespace
    ```python exec=compat            run in the page's "compat" namespace

Consecutive tagged blocks (separated only by blank lines) form one *step*: the
blocks are shown one after the other under their labels, then the output each
``exec`` block printed. Each page runs in a fresh subprocess (CPU, Agg backend, a
temporary working directory) with one namespace per column, blocks in page order;
pictures the code writes to ``img/*.png`` are copied to ``docs/img``. A comment
``<!-- build: env NAME=VALUE ... -->`` in a source sets environment variables for
that page's subprocess (``JAX_NUM_CPU_DEVICES=8`` for the data-parallel page).

Options after the tags of an ``exec`` block:

- ``rtol=R atol=A``: how far a recorded number may move (default 1e-3, 1e-6);
- ``check=text``: numbers in its output are not compared (timings, training runs
  whose last digits depend on the CPU); ``check=none``: it only has to run.

``--check`` compares text exactly and numbers within tolerance, masks object
addresses (``0x7f...``) and timings (``1.2 s``, ``350 img/s``, ``3.1x``), and
fails when a page's code raises, its output or code no longer matches the
committed page, or a picture it references is not produced. The README's
``python`` blocks are run the same way (one namespace, in order) and must not
raise.
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
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
SRC = DOCS / "src"
IMG = DOCS / "img"
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
IMAGE_REF = re.compile(r"!\[[^\]]*\]\((img/[^)\s]+\.png)\)")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
TIMING = re.compile(
    r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?\s*"
    r"(?:ms|µs|us|ns|s|min|seconds|img/s|images/s|steps/s|it/s|x|×)(?![\w/])"
)


# -- Parsing ------------------------------------------------------------------------
@dataclass
class Block:
    """One fenced code block of a source page."""

    lang: str
    tags: list[str]
    opts: dict[str, str]
    code: str

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
        out.append(Block(lang, tags, opts, "".join(body)))
    if buf:
        out.append("".join(buf))
    return out


def parse_page(path: Path) -> Page:
    env: dict[str, str] = {}
    kept = []
    for line in path.read_text().splitlines(keepends=True):
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


# -- Running (in a subprocess per page) ---------------------------------------------
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
    """Run a page's exec blocks in a fresh Python; one result per exec block."""
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


# -- Rendering ----------------------------------------------------------------------
def clean_output(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def render(page: Page, results: list[dict]) -> tuple[str, list[Block | None]]:
    """The generated page, and for each of its fenced blocks the exec block whose
    output it is (None for code and verbatim blocks)."""
    out = [
        f"<!-- Generated by docs/build.py from docs/src/{page.name}.md: edit that "
        "file, then run `python docs/build.py`. -->\n\n"
    ]
    owners: list[Block | None] = []
    results = iter(results)
    for chunk in page.chunks:
        if isinstance(chunk, str):
            after_step = out and out[-1].endswith("```\n\n")
            out.append(chunk.lstrip("\n") if after_step else chunk)
        elif isinstance(chunk, Block):
            info = " ".join([chunk.lang, *chunk.tags])
            out.append(f"```{info}\n{chunk.code}```\n")
            owners.append(None)
        else:
            outputs = []
            for block in chunk:
                if "hide" not in block.tags:
                    out.append(
                        f"{LABELS[block.column]}\n\n```python\n{block.code}```\n\n"
                    )
                    owners.append(None)
                if block.column != "torch":
                    text = clean_output(next(results)["stdout"])
                    if text:
                        outputs.append((block, text))
            for block, text in outputs:
                col = "functional" if block.column == "functional" else "compat"
                out.append(f"Output ({col}):\n\n```text\n{text}\n```\n\n")
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


# -- Driver -------------------------------------------------------------------------
def build_one(page: Page, check: bool, run_torch: bool) -> tuple[str, list[str], float]:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"docs-{page.name}-") as tmp:
        workdir = Path(tmp)
        try:
            results = run_page(page, workdir, run_torch)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            return page.name, [str(e)], time.perf_counter() - t0
        if page.name == "README":
            return page.name, [], time.perf_counter() - t0
        new, owners = render(page, results)
        target = DOCS / f"{page.name}.md"
        old = target.read_text() if target.exists() else None
        problems = (
            ["no generated page: run python docs/build.py"] if old is None else []
        )
        if old is not None:
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
            return page.name, problems, time.perf_counter() - t0
        if missing:
            return page.name, problems, time.perf_counter() - t0
        if problems:  # only rewrite what changed beyond tolerance: no churn
            target.write_text(new)
        IMG.mkdir(exist_ok=True)
        for name in made:
            if problems or not (IMG / name).exists():
                shutil.copyfile(workdir / "img" / name, IMG / name)
        return page.name, [], time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="re-run and compare")
    parser.add_argument("--page", action="append", help="only this page (stem)")
    parser.add_argument("--torch", action="store_true", help="also run torch blocks")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--run-job", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_job:
        run_job(*args.run_job)
        return 0
    pages = [parse_page(p) for p in sorted(SRC.glob("*.md"))]
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
    failed = 0
    for name, problems, seconds in sorted(done):
        status = "ok" if not problems else "FAILED"
        print(f"{name:24s} {status:6s} {seconds:6.1f} s")
        for problem in problems:
            failed += 1
            print("    " + problem.replace("\n", "\n    "))
    verb = "checked" if args.check else "built"
    print(f"{verb} {len(done)} pages in {time.perf_counter() - t0:.1f} s")
    if failed and args.check:
        print("Run `python docs/build.py` to regenerate the pages.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
