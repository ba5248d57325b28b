"""Smoke tests: every experiment script runs to the end and prints what it should."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What each script must print (a few landmark lines of its Blitz section).
EXPECTED = {
    "01_tensors.py": ["shape", "numpy"],
    "02_autograd.py": ["4.5", "jaxpr"],
    "03_neural_networks.py": ["61706", "loss before", "loss after"],
}


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_experiment_script_runs_and_prints_its_landmarks(script):
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for landmark in EXPECTED[script]:
        assert landmark in proc.stdout, f"{script} did not print {landmark!r}"
