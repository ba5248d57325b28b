"""The docs pages (docs/NAME.md, one file each) run as notebooks and still print
what they record; what docs/build.py writes into a page (labels, outputs, notebook
links) is never taken for what a person wrote; the committed notebooks are made
from the pages and up to date; the README's python blocks still run."""

import functools
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from tests.background import BackgroundRun

ROOT = Path(__file__).resolve().parents[1]

# Every page's notebook once, each in a fresh kernel (docs/build.py), while other
# tests run.
DOCS_CHECK = BackgroundRun(
    [sys.executable, ROOT / "docs" / "build.py", "--check"],
    timeout=900,
    env=dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg"),
    cwd=ROOT,
)


@functools.cache
def _build():
    """docs/build.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("docs_build", ROOT / "docs/build.py")
    module = sys.modules["docs_build"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_docs_notebooks_run_and_print_what_the_pages_record_and_readme_runs():
    proc = DOCS_CHECK.result()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "FAILED" not in proc.stdout


def test_a_pages_notebook_is_the_same_file_each_time_and_has_no_outputs():
    build = _build()
    page = build.parse_page(ROOT / "docs/05_data_parallelism.md")
    text = build.notebook_text(page)
    assert text == build.notebook_text(page)
    nb = json.loads(text)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert [c["id"] for c in nb["cells"][:2]] == [f"{page.name}-0", f"{page.name}-1"]
    install, setup = ("".join(c["source"]) for c in code[:2])
    assert f"git+{build.repository()}" in install
    assert 'os.environ["JAX_NUM_CPU_DEVICES"] = "8"' in setup  # the page's env
    assert "%load_ext jaxblitz.notebook" in setup
    sources = ["".join(c["source"]) for c in code[2:]]
    assert any(s.startswith("%%compat\n") for s in sources)
    assert not any(s.startswith("%%torch") for s in sources)  # torch: Markdown only


def test_the_executed_copy_names_column_cells_as_the_pages_and_can_run_torch():
    build = _build()
    page = build.parse_page(ROOT / "docs/05_data_parallelism.md")
    nb, owners = build.notebook(page, executed=True, run_torch=True)
    runs = [(c.source, b) for c, b in zip(nb.cells, owners, strict=True) if b]
    assert [b for _, b in runs] == build.exec_blocks(page, run_torch=True)
    for i, (source, block) in enumerate(runs):
        if block.column != "functional":
            name = f"<{page.name}: {block.column} block {i + 1}>"
            assert source.startswith(f"%%{block.column} {name}\n")
    assert "rich.console" in "".join(
        c.source for c in nb.cells if c.metadata.get("tags") == ["build"]
    )


def _page(tmp_path, blocks: str):
    source = tmp_path / "99_test.md"
    source.write_text(f"# A test page\n\nSome text.\n\n{blocks}")
    return _build().parse_page(source)


def test_build_writes_labels_and_outputs_into_a_page_and_reads_back_its_own_text(
    tmp_path,
):
    build = _build()
    page = _page(
        tmp_path,
        "```python torch\nprint(1)\n```\n\n"
        "```python exec=functional rtol=0.1\nprint(1.0)\n```\n\n"
        "```python exec=compat\nx = 1\n```\n\n"
        "After the step.\n",
    )
    text, owners = build.render(page, [{"stdout": "1.0\n"}, {"stdout": ""}])
    assert text.startswith("# A test page\n\nOpen in a notebook: [Colab](")
    assert "**PyTorch**\n\n```python torch\nprint(1)\n```\n" in text
    assert "**jaxblitz, functional**\n\n```python exec=functional rtol=0.1\n" in text
    assert "Output (functional):\n\n```text\n1.0\n```\n\nAfter the step.\n" in text
    assert "Output (compat)" not in text  # it printed nothing
    (tmp_path / "99_test.md").write_text(text)
    again = build.parse_page(tmp_path / "99_test.md")
    assert again.chunks == page.chunks and again.env == page.env
    # a new output within the block's tolerance leaves the page as it is
    recorded = build.recorded_outputs(text, owners)
    results = [{"stdout": "1.05\n"}, {"stdout": ""}]
    assert build.render(again, results, recorded)[0] == text
    results = [{"stdout": "2.0\n"}, {"stdout": ""}]
    assert "```text\n2.0\n```" in build.render(again, results, recorded)[0]


def test_only_pages_with_tagged_code_are_run_and_each_has_its_notebook():
    build = _build()
    pages = [p.name for p in build.page_paths()]
    assert pages == [f"0{i}_{n}.md" for i, n in enumerate(
        ["tensors", "autograd", "neural_networks", "training_a_classifier",
         "data_parallelism", "extras", "porting"], 1)]  # fmt: skip
    notebooks = sorted(p.name for p in (ROOT / "docs/notebooks").glob("*.ipynb"))
    assert notebooks == [p.replace(".md", ".ipynb") for p in pages]
    assert not (ROOT / "docs/src").exists()


def test_a_notebook_records_what_a_block_prints_to_stdout_only(tmp_path):
    page = _page(
        tmp_path,
        "```python exec=functional\n"
        "import sys\n"
        "import warnings\n"
        "x = 1\n"
        "print('\\x1b[31mred\\x1b[0m')\n"
        "print('to stderr', file=sys.stderr)\n"
        "warnings.warn('a warning')\n"
        "'the value of the last expression'\n"
        "```\n\n"
        "```python exec=compat\n"
        "x = 'compat'\n"
        "```\n\n"
        "```python exec=functional\n"
        "print(x + 1, __name__)  # the functional x: compat's is apart\n"
        "```\n",
    )
    results = _build().run_notebook(page, tmp_path / "run")
    assert [r["stdout"] for r in results] == ["red\n", "", "2 __main__\n"]


def test_a_failing_block_fails_its_page_naming_the_block_with_its_traceback(tmp_path):
    page = _page(
        tmp_path,
        "```python exec=functional\nx = 1\n```\n\n"
        "```python exec=compat\n"
        "def f():\n    raise ValueError('no good')\n\n\nf()\n```\n",
    )
    with pytest.raises(RuntimeError) as error:
        _build().run_notebook(page, tmp_path / "run")
    message = str(error.value)
    assert "99_test: code failed" in message
    assert "99_test, compat block 2:" in message
    assert "ValueError: no good" in message and "\x1b[" not in message


def test_the_readme_opens_every_notebook_and_every_page_links_its_own():
    build = _build()
    readme = (ROOT / "README.md").read_text()
    notebooks = sorted(p.name for p in (ROOT / "docs/notebooks").glob("*.ipynb"))
    assert notebooks, "no notebooks in docs/notebooks"
    repo = build.repository().split("github.com/")[1]
    colab = f"https://colab.research.google.com/github/{repo}/blob/main/docs/notebooks/"
    for name in notebooks:
        assert f"({colab}{name})" in readme, name
        page = (ROOT / "docs" / name.replace(".ipynb", ".md")).read_text()
        assert f"[Colab]({colab}{name})" in page, name
        assert f"[download](notebooks/{name})" in page, name
