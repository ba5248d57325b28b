"""The docs site builds from the repository, offline, with no warning (the pages as
they are and the API reference generated from the docstrings); every link inside
it leads somewhere; and in a real headless browser each page loads with its title,
code blocks and pictures, and the search page finds a page by a word on it.

``pip install -e ".[docs]"``, then ``python docs/build.py --site --open``. The
browser is Debian's Chromium (``apt-get install chromium``; ``.ci/run`` installs it):
without it the browser tests are skipped, saying so.
"""

import functools
import html.parser
import http.server
import json
import os
import re
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest

from tests.background import BackgroundRun, scratch
from tests.chromium import Chromium, find_chromium

pytestmark = pytest.mark.slow  # the site is built and a browser started for the module

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_OUT = scratch("site")
HTML = _OUT / "html"

# -W: a warning (a broken reference, a docstring Sphinx cannot read) fails the build
SITE = BackgroundRun(
    [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    + ["-d", _OUT / "doctrees", DOCS, HTML],
    timeout=600,
    env=dict(os.environ, JAX_PLATFORMS="cpu"),
    cwd=ROOT,
)
# The site's pages: every Markdown file of docs/ (the API pages are generated).
PAGES = sorted(p.stem for p in DOCS.glob("*.md"))
FENCE = re.compile(r"^(`{3,})(\S*)")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _site() -> Path:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    proc = SITE.result()
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return HTML


def test_the_docs_site_builds_with_its_api_reference_and_no_warning():
    html = _site()
    for page in PAGES + ["api", "search", "genindex"]:
        assert (html / f"{page}.html").is_file(), page
    models = (html / "_autosummary" / "jaxblitz.models.html").read_text()
    assert "init_lenet" in models and "cross_entropy" in models


# -- links ---------------------------------------------------------------------------
class _Anchors(html.parser.HTMLParser):
    """The ids a page defines and the links (href, src) it holds."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.ids.update(attrs[k] for k in ("id", "name") if attrs.get(k))
        self.refs.extend(attrs[k] for k in ("href", "src") if attrs.get(k))


def _parse(path: Path) -> _Anchors:
    anchors = _Anchors()
    anchors.feed(path.read_text())
    return anchors


def test_every_link_inside_the_site_leads_to_a_file_and_anchor_of_it():
    html = _site()
    pages = {
        path: _parse(path)
        for path in html.rglob("*.html")
        if "_static" not in path.relative_to(html).parts  # the theme's templates
    }
    broken, checked = [], 0
    for path, anchors in pages.items():
        for ref in anchors.refs:
            url = urllib.parse.urlsplit(ref)
            if url.scheme or url.netloc:
                continue  # outside the site
            checked += 1
            target = path.parent / urllib.parse.unquote(url.path) if url.path else path
            target = target.resolve()
            if not target.is_file():
                broken.append(f"{path.relative_to(html)}: {ref} (no such file)")
            elif url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if url.fragment not in ids:
                    broken.append(f"{path.relative_to(html)}: {ref} (no such anchor)")
    assert checked > 1000  # the sidebar's links alone, on every page
    assert broken == []


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file_on_github():
    """What a reader clicking through the repository on GitHub meets."""
    broken = []
    for md in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        fenced = False
        for line in md.read_text().splitlines():
            if FENCE.match(line):
                fenced = not fenced
            if fenced:
                continue
            for ref in MARKDOWN_LINK.findall(line):
                url = urllib.parse.urlsplit(ref)
                if url.scheme or url.netloc or not url.path:
                    continue
                if not (md.parent / urllib.parse.unquote(url.path)).exists():
                    broken.append(f"{md.relative_to(ROOT)}: {ref}")
    assert broken == []


# -- in a real browser ---------------------------------------------------------------
@functools.cache
def _chromium_binary() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip(
            "Chromium is not installed (apt-get install chromium): the built site "
            "is not checked in a browser"
        )
    return binary


@pytest.fixture(scope="module")
def served():
    """The built site on a local HTTP server (the search page loads its index with
    JavaScript), and a headless Chromium to look at it."""
    binary = _chromium_binary()
    html = _site()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with Chromium(binary) as browser:
            yield browser, f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def _title(md: Path) -> str:
    """A page's '# ' title as the browser's title bar shows it (no Markdown)."""
    title = next(
        line[2:] for line in md.read_text().splitlines() if line.startswith("# ")
    )
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "")
    return title.replace("'", "\u2019")  # Sphinx's smart quotes


def _code_blocks(md: Path) -> int:
    """How many code blocks a page's Markdown has (fences that are not directives)."""
    count, fence = 0, None
    for line in md.read_text().splitlines():
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            count += not m.group(2).startswith("{")
        elif fence is not None and line.strip() == fence:
            fence = None
    return count


LOOK = """({
  title: document.title,
  highlighted: document.querySelectorAll("article div.highlight").length,
  images: [...document.images].map(i => ({
    src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth})),
  text: document.querySelector("article").innerText.length,
})"""


@pytest.mark.parametrize("page", PAGES)
def test_each_page_loads_in_a_browser_with_its_title_code_blocks_and_pictures(
    served, page
):
    browser, base = served
    md = DOCS / f"{page}.md"
    browser.load(base + f"{page}.html")
    seen = browser.evaluate(LOOK)
    assert seen["title"] == f"{_title(md)} — jaxblitz"
    assert seen["highlighted"] == _code_blocks(md)
    assert seen["text"] > 500
    pictures = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", md.read_text())
    shown = [i for i in seen["images"] if i["src"].startswith("_images/")]
    assert sorted(i["src"].split("/")[-1] for i in shown) == sorted(
        Path(p).name for p in pictures
    )
    not_drawn = [i for i in seen["images"] if not (i["complete"] and i["width"] > 0)]
    assert not_drawn == []


SEARCH = """new Promise((resolve, reject) => {
  const start = Date.now();
  const poll = () => {
    const summary = document.querySelector("#search-results p.search-summary");
    if (summary && summary.innerText) {
      const links = document.querySelectorAll("#search-results ul.search li a");
      resolve({summary: summary.innerText,
               hits: [...links].map(a => a.getAttribute("href"))});
    } else if (Date.now() - start > 20000) {
      reject(new Error("the search page gave no answer"));
    } else {
      setTimeout(poll, 50);
    }
  };
  poll();
})"""


@pytest.mark.parametrize(
    ("word", "page"),
    [
        ("gradcheck", "06_extras"),
        ("DataParallel", "05_data_parallelism"),
        ("init_lenet", "03_neural_networks"),
    ],
)
def test_the_search_page_finds_a_page_by_a_word_on_it(served, word, page):
    assert word in (DOCS / f"{page}.md").read_text()
    browser, base = served
    browser.load(base + "search.html?" + urllib.parse.urlencode({"q": word}))
    found = browser.evaluate(SEARCH)
    assert found["summary"].startswith("Search finished"), found
    pages = {urllib.parse.urlsplit(hit).path for hit in found["hits"]}
    assert f"{page}.html" in pages, json.dumps(found, indent=1)
