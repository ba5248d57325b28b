"""The docs pages (docs/src/*.md) and the README's python blocks still run and
still print what the committed pages (docs/*.md) record."""

import os
import sys
from pathlib import Path

import pytest

from tests.background import BackgroundRun

ROOT = Path(__file__).resolve().parents[1]

# Every page once, each in a fresh Python (docs/build.py), while other tests run.
DOCS_CHECK = BackgroundRun(
    [sys.executable, ROOT / "docs" / "build.py", "--check"],
    timeout=900,
    env=dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg"),
    cwd=ROOT,
)


@pytest.mark.slow
def test_docs_pages_and_readme_examples_run_and_match_their_recorded_output():
    proc = DOCS_CHECK.result()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "FAILED" not in proc.stdout
