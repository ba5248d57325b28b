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


def generator(key: jax.Array | np.ndarray) -> np.random.Generator:
    """A NumPy generator seeded by ``key``'s bits (the same key, the same draws):
    compat's host key data (:class:`compat.creation.Generator`) or a typed key."""
    if not isinstance(key, np.ndarray):
        key = jax.random.key_data(key)
    return np.random.default_rng(np.asarray(key).tolist())


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


# -- compat's generator state, kept on the host -----------------------------------
# jax.random.key(seed) and jax.random.split(key) are XLA programs: each compiled
# the first time (BENCHMARKS.md), for values two uint32s wide. The
# generator's state is therefore raw threefry key data in a NumPy array, seeded
# and split on the host by Python code that gives JAX's bits exactly (its tests
# compare the two): the split under ``torch.compile``, where the state is a
# tracer, is ``jax.random.split`` of the same data.

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_M32 = 0xFFFFFFFF


def threefry2x32(key: tuple[int, int], x0: int, x1: int) -> tuple[int, int]:
    """Threefry-2x32 (20 rounds) of the counter pair ``(x0, x1)`` under ``key``
    (two uint32s), as JAX's threefry2x32 primitive computes it, in
    Python ints: for two counters, NumPy's per-call overhead costs more than
    the arithmetic."""
    k0, k1 = key
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0, x1 = (x0 + k0) & _M32, (x1 + k1) & _M32
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = (x0 + x1) & _M32
            x1 = x0 ^ (((x1 << r) | (x1 >> (32 - r))) & _M32)
        x0 = (x0 + ks[(i + 1) % 3]) & _M32
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _M32
    return x0, x1


def seed_bits(seed: int) -> np.ndarray:
    """``jax.random.key_data(jax.random.key(seed))`` for a 64-bit seed: its two
    32-bit halves (a negative seed as its two's complement, as torch keeps it)."""
    s = seed % (1 << 64)
    return np.array([s >> 32, s & 0xFFFFFFFF], np.uint32)


def split_bits(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``jax.random.split`` of raw threefry key data into two keys' data, with
    JAX's default (partitionable) threefry: counters (0, 0) and (0, 1)."""
    key = (int(bits[0]), int(bits[1]))
    return (
        np.array(threefry2x32(key, 0, 0), np.uint32),
        np.array(threefry2x32(key, 0, 1), np.uint32),
    )


def on_host() -> bool:
    """Whether the generator can split on the host: JAX's default PRNG is
    threefry, partitionable (this module's split is that one's)."""
    return (
        jax.config.jax_default_prng_impl == "threefry2x32"
        and jax.config.jax_threefry_partitionable
    )
