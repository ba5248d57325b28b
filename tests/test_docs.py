"""The docs pages (docs/src/*.md) and the README's python blocks still run and
still print what the committed pages (docs/*.md) record."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_docs_pages_and_readme_examples_run_and_match_their_recorded_output():
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "build.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "FAILED" not in proc.stdout
