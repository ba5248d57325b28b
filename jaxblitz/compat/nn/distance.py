"""Blitz 3, "Neural Networks": distances between tensors -- ``F.cosine_similarity``,
``F.pairwise_distance``, ``F.pdist``, ``torch.cdist`` and the modules
``nn.CosineSimilarity``, ``nn.PairwiseDistance`` -- with torch's formulas,
gradients and error words.

Norms are :func:`~jaxblitz.compat.ops._funnel._norm_fn`, ``torch.norm``'s: a zero
difference passes back a zero gradient, as torch's ``norm_backward`` does.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.losses import _broadcast_shapes, _check_broadcast, _tensor
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops._arith import _check_sub
from jaxblitz.compat.ops._funnel import _norm_fn
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim

__all__ = [
    "CosineSimilarity",
    "PairwiseDistance",
    "cdist",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
]


@jax.custom_jvp
def clamp_min_no_grad(x, low):
    """``x.clamp_min_(low)`` under ``torch.no_grad()``: clamped values, and the
    gradient of ``x`` as if nothing were clamped."""
    return jnp.where(x < low, low, x).astype(x.dtype)


@clamp_min_no_grad.defjvp
def _clamp_min_no_grad_jvp(primals, tangents):
    return clamp_min_no_grad(*primals), tangents[0]


# -- cosine similarity -----------------------------------------------------------------


def _cosine_fn(x1, x2, *, axis, eps, dt):
    x1, x2 = jnp.broadcast_arrays(x1.astype(dt[0]), x2.astype(dt[1]))
    n1 = clamp_min_no_grad(_norm_fn(x1, p=2, axis=axis, keepdims=True), eps)
    n2 = clamp_min_no_grad(_norm_fn(x2, p=2, axis=axis, keepdims=True), eps)
    return jnp.sum((x1 / n1) * (x2 / n2), axis=axis)


def cosine_similarity(
    x1: TensorBase, x2: TensorBase, dim: int = 1, eps: float = 1e-8
) -> TensorBase:
    if _autocast.on:
        return _autocast.run("cosine_similarity", cosine_similarity, x1, x2, dim, eps)
    _tensor("cosine_similarity", 1, "x1", x1)
    _tensor("cosine_similarity", 2, "x2", x2)
    common = _dtype.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{common.scalar_type}"
        )
    shape = _check_broadcast(x1, x2)
    axis = wrap_dim(dim, len(shape)) if shape else None  # a 0-d tensor takes 0, -1
    # torch: an integral side is cast to the common dtype, a float side kept
    dt = tuple(
        (x.dtype if x.dtype.is_floating_point else common).np_name for x in (x1, x2)
    )
    return apply("SumBackward1", _cosine_fn, x1, x2, axis=axis, eps=float(eps), dt=dt)


# -- pairwise distance -----------------------------------------------------------------


def pairwise_distance_fn(x1, x2, *, p, eps, keepdim, dt):
    """``torch.pairwise_distance`` on arrays: ``norm(x1 - x2 + eps)`` over the
    last dimension, in ``dt``."""
    d = (x1 - x2).astype(dt) + eps
    axis = d.ndim - 1
    return _norm_fn(d, p=p, axis=axis if axis >= 0 else None, keepdims=keepdim)


def distance_dtype(x1: TensorBase, x2: TensorBase) -> _dtype.dtype:
    """``x1 - x2 + eps``'s dtype, with torch's refusal of a bool tensor."""
    _check_sub(x1, x2)
    dt = _dtype.promote_types(x1.dtype, x2.dtype)
    return dt if dt.is_floating_point else _dtype.get_default_dtype()


def pairwise_distance(
    x1: TensorBase,
    x2: TensorBase,
    p: float = 2.0,
    eps: float = 1e-6,
    keepdim: bool = False,
) -> TensorBase:
    _tensor("pairwise_distance", 1, "x1", x1)
    _tensor("pairwise_distance", 2, "x2", x2)
    _check_broadcast(x1, x2)
    return apply(
        "NormBackward1",
        pairwise_distance_fn,
        x1,
        x2,
        p=float(p),
        eps=float(eps),
        keepdim=bool(keepdim),
        dt=distance_dtype(x1, x2).np_name,
    )


# -- pdist and cdist -------------------------------------------------------------------


def _pdist_fn(x, *, p):
    i, j = jnp.triu_indices(x.shape[0], k=1)
    return _norm_fn(x[i] - x[j], p=p, axis=-1, keepdims=False)


def pdist(input: TensorBase, p: float = 2) -> TensorBase:
    if _autocast.on:
        return _autocast.run("pdist", pdist, input, p)
    _tensor("pdist", 1, "input", input)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply("PdistBackward0", _pdist_fn, input, p=float(p))


def _cdist_fn(x1, x2, *, p, mm):
    if mm:  # torch's _euclidean_dist: |a|^2 - 2 a.b + |b|^2 as one matmul
        n1 = jnp.sum(x1 * x1, axis=-1, keepdims=True)
        n2 = jnp.sum(x2 * x2, axis=-1, keepdims=True)
        a = jnp.concatenate([-2 * x1, n1, jnp.ones_like(n1)], axis=-1)
        b = jnp.concatenate([x2, jnp.ones_like(n2), n2], axis=-1)
        sq = jnp.matmul(a, jnp.swapaxes(b, -1, -2), precision="highest")
        return jnp.sqrt(jnp.where(sq < 0, 0, sq))
    diff = x1[..., :, None, :] - x2[..., None, :, :]  # (..., r1, r2, m)
    return _norm_fn(diff, p=p, axis=-1, keepdims=False)


_COMPUTE_MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def cdist(
    x1: TensorBase,
    x2: TensorBase,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> TensorBase:
    if _autocast.on:
        return _autocast.run("cdist", cdist, x1, x2, p, compute_mode)
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _COMPUTE_MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D"
            )
    c1, c2 = x1.shape[-1], x2.shape[-1]
    if c1 != c2:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}"
        )
    if not x1.dtype.is_floating_point:
        raise RuntimeError(
            f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.scalar_type}"
        )
    if not x2.dtype.is_floating_point:
        raise RuntimeError(
            f"cdist only supports floating-point dtypes, X2 got: {x2.dtype.scalar_type}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    _broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    if x2.dtype is not x1.dtype:
        raise RuntimeError(
            f"expected scalar type {x1.dtype.scalar_type} but found "
            f"{x2.dtype.scalar_type}"
        )
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = (
        p == 2
        and x1.numel() > 0
        and x2.numel() > 0
        and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    )
    return apply("CdistBackward0", _cdist_fn, x1, x2, p=float(p), mm=mm)


# -- modules --------------------------------------------------------------------------


class PairwiseDistance(Module):
    def __init__(
        self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
    ) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: TensorBase, x2: TensorBase) -> TensorBase:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: TensorBase, x2: TensorBase) -> TensorBase:
        return cosine_similarity(x1, x2, self.dim, self.eps)
