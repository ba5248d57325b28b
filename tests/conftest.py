"""Shared pytest set-up: CPU only, never the network."""

import os

# Tests run on CPU; set before JAX initialises (tests that need many simulated
# devices start a subprocess with JAX_NUM_CPU_DEVICES set).
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# No persistent XLA cache in ~/.cache from tests (tests that check it set their own).
os.environ.setdefault("JAXBLITZ_XLA_CACHE", "")
