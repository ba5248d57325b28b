"""Blitz 4, "Training on GPU": the precision of float32 products and convolutions.

PyTorch computes a float32 matmul in full float32 by default, also on a GPU
(``torch.backends.cuda.matmul.allow_tf32 = False``, i.e.
``torch.get_float32_matmul_precision() == "highest"``), while a convolution on a
GPU may use TF32 (``torch.backends.cudnn.allow_tf32 = True``). XLA's default on a
GPU is TF32 for both. This module holds the flags and the one decision:
:func:`precision` turns them into the ``jax.lax.Precision`` an op gives its
``dot_general`` or ``convolution``, per op kind and per platform:

- ``cpu``: ``None`` (XLA's CPU computes float32 in float32 whatever the flag, as
  PyTorch's CPU kernels do): the flags change nothing there.
- ``gpu``: ``HIGHEST`` (float32) unless the flag allows TF32 (``DEFAULT``): a
  matmul follows ``matmul.allow_tf32`` / the float32 matmul precision, a
  convolution ``cudnn.allow_tf32``.
- ``tpu``: the float32 matmul precision as PyTorch proposed it for XLA devices:
  ``"highest"`` -> ``HIGHEST`` (six bfloat16 passes), ``"high"`` -> ``HIGH``
  (three), ``"medium"`` -> ``DEFAULT`` (one), for products and convolutions
  alike. PyTorch/XLA itself reads its own setting instead
  (``torch_xla.backends.set_mat_mul_precision``, ``"default"`` unless set).

The precision is a static argument of each op's function (part of its program's
cache key), chosen by :func:`of` from the op's operands.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any

import jax

from jaxblitz.compat.backends import cudnn

__all__ = [
    "get_float32_matmul_precision",
    "of",
    "platform_of",
    "precision",
    "scope",
    "set_float32_matmul_precision",
]

P = jax.lax.Precision
_LEVELS = ("highest", "high", "medium")
_TPU = {"highest": P.HIGHEST, "high": P.HIGH, "medium": P.DEFAULT}
_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}  # torch device type -> JAX

# torch.get_float32_matmul_precision(), and torch.backends.cuda.matmul's newer
# fp32_precision ("none" until one of the three settings names it)
_state = {"matmul": "highest", "fp32": "none"}


def get_float32_matmul_precision() -> str:
    """``torch.get_float32_matmul_precision()``: "highest", "high" or "medium"."""
    return _state["matmul"]


def set_float32_matmul_precision(precision: str) -> None:
    """``torch.set_float32_matmul_precision``: "highest" (float32, the default),
    "high" or "medium" (TF32 on a GPU; on a TPU three or one bfloat16 passes)."""
    if not isinstance(precision, str):
        raise RuntimeError(
            "set_float32_matmul_precision expects a str, but got "
            f"{type(precision).__name__}"
        )
    if precision not in _LEVELS:
        # torch's warning, word for word (its missing space included)
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["matmul"] = precision
    _state["fp32"] = "ieee" if precision == "highest" else "tf32"


def _set_allow_tf32(flag: bool) -> None:
    # torch: True turns "highest" into "high" (a lower setting stays); False is
    # "highest"
    if not isinstance(flag, bool):
        raise RuntimeError(
            f"set_allow_tf32_cublas expects a bool, but got {type(flag).__name__}"
        )
    if not flag:
        _state["matmul"] = "highest"
    elif _state["matmul"] == "highest":
        _state["matmul"] = "high"
    _state["fp32"] = "tf32" if flag else "ieee"


def _set_fp32_precision(value: str) -> None:
    if value not in ("ieee", "tf32", "none"):
        raise RuntimeError(f"Unknown precision: {value}")
    _state["fp32"] = value
    _state["matmul"] = "high" if value == "tf32" else "highest"


def precision(kind: str, platform: str) -> jax.lax.Precision | None:
    """The precision PyTorch's flags give a float32 op of ``kind`` ("matmul" or
    "conv") on JAX's ``platform`` ("cpu", "gpu" (or "cuda", "rocm"), "tpu");
    ``None`` leaves XLA's default, as on the CPU."""
    if kind not in ("matmul", "conv"):
        raise ValueError(f"kind must be 'matmul' or 'conv', got {kind!r}")
    level = _state["matmul"]
    if platform == "tpu":
        return _TPU[level]
    if platform in ("gpu", "cuda", "rocm"):
        tf32 = bool(cudnn.allow_tf32) if kind == "conv" else level != "highest"
        return P.DEFAULT if tf32 else P.HIGHEST
    return None


@functools.cache
def _cpu_only() -> bool:
    return jax.default_backend() == "cpu"


def platform_of(*operands: Any) -> str:
    """JAX's platform where an op on ``operands`` runs: the first tensor's
    device's (compat refuses operands on different devices), "cpu" in a process
    without an accelerator, JAX's default backend where no device can be read
    (a traced value inside ``torch.compile``)."""
    if _cpu_only():
        return "cpu"
    for t in operands:
        if hasattr(t, "_s") and hasattr(t, "device"):  # a compat Tensor
            try:
                return _PLATFORM.get(t.device.type, "cpu")
            except Exception:  # noqa: BLE001 -- a tracer has no device: see below
                break
    return jax.default_backend()


def of(kind: str, *operands: Any) -> jax.lax.Precision | None:
    """The static ``precision`` argument of a matmul-like (``kind="matmul"``) or
    convolution (``"conv"``) op on ``operands``: :func:`precision` for float32
    operands on their platform, ``None`` for other dtypes (PyTorch's flags are
    about float32)."""
    first = next((t for t in operands if hasattr(t, "_s")), None)
    if first is None or first.dtype.name != "float32":
        return None
    return precision(kind, platform_of(*operands))


def scope(p: jax.lax.Precision | None) -> contextlib.AbstractContextManager:
    """``p`` for the products and convolutions of a function that takes no
    precision argument (the core's layers): ``jax.default_matmul_precision``
    while it is traced; nothing for None."""
    if p is None:
        return contextlib.nullcontext()
    return jax.default_matmul_precision(p.name.lower())
