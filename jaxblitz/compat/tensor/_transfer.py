"""A NumPy array onto JAX's default device, as ``jax.device_put(n)`` puts it.

``jax.device_put`` spends most of its time in Python dispatch before the
transfer itself (``batched_device_put``, in jaxlib), which is what a tiny
model's ``torch.zeros(1, 128)`` each step pays. This is the one place compat
calls that transfer directly: JAX's private ``pxla.batched_device_put`` with
what ``device_put`` would pass for an ndarray and no device (the default
device's single-device sharding, uncommitted). Where that API is missing or
changed (another JAX release), :func:`put` answers None and the caller uses
``jax.device_put``; ``tests/compat/tensor/test_transfer.py`` checks the two
agree.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

try:  # isolated here: private, may move in another JAX release
    from jax._src import core as _core
    from jax._src.interpreters import pxla as _pxla

    _batched, _default_device = _pxla.batched_device_put, _pxla.get_default_device
    _ShapedArray = _core.ShapedArray
except (ImportError, AttributeError):  # pragma: no cover -- another JAX
    _batched = None

_SHARDINGS: dict = {}  # device -> its SingleDeviceSharding


def _direct(n: np.ndarray) -> jax.Array:
    device = _default_device()
    sharding = _SHARDINGS.get(device)
    if sharding is None:
        sharding = _SHARDINGS[device] = jax.sharding.SingleDeviceSharding(device)
    aval = _ShapedArray(n.shape, n.dtype)
    # x64 on: the buffer keeps a 64-bit dtype (off, jaxlib narrows the buffer
    # and keeps the label)
    return _batched(aval, sharding, [n], [device], committed=False, enable_x64=True)


def put(n: np.ndarray) -> Any:
    """``n`` (an ndarray of a dtype JAX holds, x64 dtypes kept) as an
    uncommitted array on JAX's default device; None where only
    ``jax.device_put`` can (the caller's fallback)."""
    if _batched is None or n.dtype.kind not in "biufcV":
        return None
    try:
        return _direct(n)
    except (TypeError, ValueError):  # pragma: no cover -- another JAX
        return None
