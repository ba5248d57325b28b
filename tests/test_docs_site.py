"""The docs site builds from the repository, offline, with no warning: the pages
docs/build.py generates, and the API reference generated from the docstrings
(``pip install -e ".[docs]"``, then the command below)."""

import os
import sys
from pathlib import Path

import pytest

from tests.background import BackgroundRun, scratch

ROOT = Path(__file__).resolve().parents[1]
_OUT = scratch("site")

# -W: a warning (a broken link, a docstring Sphinx cannot read) fails the build
SITE = BackgroundRun(
    [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    + ["-d", _OUT / "doctrees", ROOT / "docs", _OUT / "html"],
    timeout=600,
    env=dict(os.environ, JAX_PLATFORMS="cpu"),
    cwd=ROOT,
)


def test_the_docs_site_builds_with_its_api_reference_and_no_warning():
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    proc = SITE.result()
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    html = _OUT / "html"
    for page in ("index", "01_tensors", "07_porting", "api", "compat_coverage"):
        assert (html / f"{page}.html").is_file(), page
    models = (html / "_autosummary" / "jaxblitz.models.html").read_text()
    assert "init_lenet" in models and "cross_entropy" in models
