"""The docs site: ``python docs/build.py --site --open`` (the ``docs`` extra), which
runs ``python -m sphinx -W -b html docs docs/_build/html``. The pages are the
Markdown files of docs/ as they are (the outputs in them were written by running
their code with ``python docs/build.py``); the API reference is generated from the
docstrings of the functional API (``docs/api.md``)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "jaxblitz"
author = "the jaxblitz developers"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# the notebooks are the pages again, made from them, without outputs
exclude_patterns = ["notebooks", "_build", "build.py", "conf.py"]
autosummary_generate = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
myst_heading_anchors = 3
html_theme = "sphinx_book_theme"
html_title = "jaxblitz"
html_theme_options = {"repository_url": "https://github.com/jaxblitz/jaxblitz"}
