"""Random numbers drawn on the host with NumPy, from a key of compat's generator.

Initialisation draws here (a layer's default weights, ``nn.init.*``) rather than
through ``jax.random``: a ``jax.random`` draw is an XLA program compiled once per
shape, so building a network (one shape per parameter) used to compile a program
per parameter before the first step. NumPy compiles nothing. The stream is still
compat's: ``torch.manual_seed(s)`` makes the draws repeat, each taking the
generator's next JAX key (one split, the same program for every draw) and seeding
a NumPy generator with its bits. Draws that may run inside ``torch.compile``
(``torch.rand``, dropout's masks, ``x.uniform_()``) stay on ``jax.random``, so a
compiled step draws what the eager one does.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def generator(key: jax.Array) -> np.random.Generator:
    """A NumPy generator seeded by ``key``'s bits (the same key, the same draws)."""
    return np.random.default_rng(np.asarray(jax.random.key_data(key)).tolist())


def uniform(key: jax.Array, shape: tuple, dtype: Any, low: float, high: float):
    """U[low, high) in ``dtype``: drawn in float64, then rounded; a value that
    rounds up onto ``high`` is put back at ``low``, so ``high`` never occurs."""
    wide = generator(key).random(shape) * (high - low) + low
    out = np.asarray(wide, dtype=dtype)
    if low < high:
        out[out >= np.asarray(high, dtype=dtype)] = np.asarray(low, dtype=dtype)
    return out


def normal(key: jax.Array, shape: tuple, dtype: Any, mean: float, std: float):
    """N(mean, std^2) in ``dtype`` (drawn in float64)."""
    return np.asarray(generator(key).standard_normal(shape) * std + mean, dtype=dtype)
