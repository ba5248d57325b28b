"""``torch.distributions.utils``: broadcasting parameters, probabilities <-> logits,
and the lazily computed parameter property."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import update_wrapper
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.grad_mode import enable_grad
from jaxblitz.compat.nn.functional import softmax
from jaxblitz.compat.ops._unary import log, log1p, sigmoid
from jaxblitz.compat.ops.shape_ops import broadcast_shapes
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import get_default_dtype
from jaxblitz.compat.tensor.creation import empty, tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant

# torch.types._Number: the Python numbers a parameter may be given as
_Number = (int, float, bool)


class _FInfo(NamedTuple):
    eps: float
    tiny: float
    min: float
    max: float


def _finfo(dtype: Any) -> _FInfo:
    """``torch.finfo(dtype)``'s eps, tiny, min and max, as Python floats."""
    info = jnp.finfo(dtype.np)
    return _FInfo(*(float(getattr(info, k)) for k in _FInfo._fields))


def _format(value: Any) -> str:
    """torch's ``f"{value}"``: a 0-d tensor formats as its number."""
    if isinstance(value, Tensor) and value.dim() == 0:
        return format(value.item(), "")
    return format(value, "")


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """The values as tensors of one broadcast shape; numbers take the first
    tensor's dtype and device (the default dtype where none is a tensor)."""
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or "
            "objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = dict(dtype=get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = tuple(
            v if isinstance(v, Tensor) else tensor(v, **options) for v in values
        )
    # torch: a tensor already of the broadcast shape comes back itself
    shape = broadcast_shapes(*(v.shape for v in values))
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def _standard_normal(shape: Sequence[int], dtype: Any, device: Any) -> Tensor:
    # torch: torch.empty(shape).normal_()
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its rightmost ``dim`` dimensions."""
    if dim == 0:
        return value
    required_shape = value.shape[:-dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into [eps, 1 - eps] of their dtype."""
    eps = float(_finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


def _tril_positions(n: int, diag: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of an ``n x n`` matrix's lower triangle below
    ``diag``, in row order: torch's ``tril_mask``, as indices (a gather, whose
    shape does not depend on values, where torch indexes with a boolean mask)."""
    arange = np.arange(n)
    return np.nonzero(arange < arange.reshape(-1, 1) + (diag + 1))


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle of ``mat`` (below ``diag``) as a vector, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_positions(n, diag)
    return mat[..., tensor(rows), tensor(cols)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """``D x D`` lower triangular matrices holding ``vec``'s elements in row order."""
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = _finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed "
            "as the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    rows, cols = _tril_positions(n, diag)
    # each matrix position reads its element of vec, or the zero appended to it
    index = np.full((n, n), vec.shape[-1])
    index[rows, cols] = np.arange(len(rows))
    padded = vec.new_zeros(vec.shape[:-1] + (vec.shape[-1] + 1,))
    padded[..., : vec.shape[-1]] = vec
    return padded[..., tensor(index.reshape(-1))].reshape(vec.shape[:-1] + (n, n))


class lazy_property:
    """A parameter computed from another on first read (with grad enabled), then
    kept as an instance attribute: ``Categorical.logits`` from ``probs``."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """A lazy property read on the class: a ``property`` to documentation tools."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)
