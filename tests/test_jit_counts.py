"""tests/jit_counts.py: the one reader of jax.jit's private cache count."""

import jax
import jax.numpy as jnp

from tests.jit_counts import jit_cache_size


def test_jit_cache_size_counts_one_entry_per_new_input_signature():
    f = jax.jit(lambda x: x + 1)
    assert jit_cache_size(f) == 0
    f(jnp.zeros(3))
    f(jnp.ones(3))  # same shape and dtype: the same program
    assert jit_cache_size(f) == 1
    f(jnp.zeros(4))
    f(jnp.zeros(3, jnp.int32))
    assert jit_cache_size(f) == 3
