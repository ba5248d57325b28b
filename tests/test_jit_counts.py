"""tests/jit_counts.py: the one reader of jax.jit's private cache count.

Checked in a fresh Python: what it counts is JAX's own cache, and a test run
before it in the same process may have left JAX in another state (its caches
cleared, a configuration context entered) that this check is not about.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import jax
import jax.numpy as jnp

from tests.jit_counts import jit_cache_size

f = jax.jit(lambda x: x + 1)
counts = [jit_cache_size(f)]
f(jnp.zeros(3))
f(jnp.ones(3))  # same shape and dtype: the same program
counts.append(jit_cache_size(f))
f(jnp.zeros(4))
f(jnp.zeros(3, jnp.int32))
counts.append(jit_cache_size(f))
print(counts)
"""


def test_jit_cache_size_counts_one_entry_per_new_input_signature():
    proc = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["[0,", "1,", "3]"]
