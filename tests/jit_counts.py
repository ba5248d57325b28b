"""How many entries a ``jax.jit`` function's cache holds (one per input signature it
has compiled for), for the tests that check nothing is compiled again.

JAX offers no public count: ``_cache_size()`` is private and may go with a release,
so it is read here only, and ``tests/test_jit_counts.py`` checks that it still
counts what the tests take it for.
"""


def jit_cache_size(jitted) -> int:
    """The number of compiled entries in ``jitted``'s cache (``jax.jit(f)``)."""
    return jitted._cache_size()
