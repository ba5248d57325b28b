"""Blitz 3, "Neural Networks": the normalisations' ATen ops under their ``torch.*``
names -- ``torch.batch_norm(input, weight, bias, running_mean, running_var,
training, momentum, eps, cudnn_enabled)``, ``torch.instance_norm``,
``torch.native_batch_norm``/``native_layer_norm``/``native_group_norm`` (the
output and the statistics torch saves), ``torch.norm_except_dim`` -- over compat's
``nn.functional``, without its Python checks of the batch size or ``eps`` (ATen
has none). ``torch.native_norm`` (sparse tensors only, in torch) is refused.

This module loads after the Tensor class (it needs ``compat.nn``).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.nn.instancenorm import aten_instance_norm
from jaxblitz.compat.nn.normalization import _group_norm_fn, _opmath, aten_batch_norm
from jaxblitz.compat.nn.rnn import _split
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _no_grad, _require_tensors
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import empty


@declare
def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    _require_tensors("batch_norm", input)
    return aten_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )


@declare
def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    _require_tensors("instance_norm", input)
    return aten_instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps
    )


def _moments_fn(x, *, axes, eps, which):
    """The mean (``which`` 0) or 1 / std (1) over ``axes``, kept, in ``x``'s
    dtype (computed in float32 for half and bfloat16, as torch)."""
    dtype, x = x.dtype, _opmath(x)
    mean = x.mean(axes, keepdims=True)
    if which == 0:
        return mean.astype(dtype)
    centred = x - mean
    return lax.rsqrt((centred * centred).mean(axes, keepdims=True) + eps).astype(dtype)


@declare
def native_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple:
    """``torch.native_batch_norm``: ``(output, save_mean, save_invstd)``, the
    batch's statistics per channel when training (not differentiable), else
    empty."""
    _require_tensors("native_batch_norm", input)
    if not input.numel():
        raise RuntimeError(
            "input tensor must have at least one element, but got input_sizes = "
            f"{list(input.shape)}"
        )
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(
            "running_mean must be defined in evaluation mode"
            if running_mean is None
            else "running_var must be defined in evaluation mode"
        )
    out = aten_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )
    if not training:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    axes = (0, *range(2, input.dim()))
    stats = [
        _no_grad(_moments_fn, input, axes=axes, eps=eps, which=i).reshape(-1)
        for i in (0, 1)
    ]
    return out, *stats


@declare
def native_layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None,
    bias: Tensor | None,
    eps: float,
) -> tuple:
    """``torch.native_layer_norm``: ``(output, mean, rstd)``, the statistics
    (not differentiable) of shape ``input.shape[:-n] + (1,) * n``."""
    _require_tensors("native_layer_norm", input)
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    axes = tuple(range(input.dim() - n, input.dim()))
    mean, rstd = (
        _no_grad(_moments_fn, input, axes=axes, eps=eps, which=i) for i in (0, 1)
    )
    return out, mean, rstd


def _group_norm_all(x, weight, bias, *, groups, eps):
    """The output, mean and 1 / std ``(N, group)``, flattened into one vector."""
    out = _group_norm_fn(x, weight, bias, groups=groups, eps=eps)
    grouped = x.reshape(x.shape[0], groups, math.prod(x.shape[1:]) // groups)
    stats = [_moments_fn(grouped, axes=(2,), eps=eps, which=i)[..., 0] for i in (0, 1)]
    return jnp.concatenate([out.ravel(), *(t.ravel() for t in stats)])


@partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _group_norm_flat_fn(x, weight, bias, groups, eps):
    return _group_norm_all(x, weight, bias, groups=groups, eps=eps)


def _group_norm_flat_fwd(x, weight, bias, groups, eps):
    flat, pullback = jax.vjp(
        partial(_group_norm_all, groups=groups, eps=eps), x, weight, bias
    )
    return flat, (pullback, x.size)


def _group_norm_flat_bwd(groups, eps, saved, g):
    # torch's NativeGroupNormBackward0 reads the statistics' gradients only in
    # a backward that also reaches the output: alone, they pass nothing back
    # (here: nothing when the output's gradient is all zeros).
    pullback, n = saved
    reached = jnp.any(g[:n] != 0)
    return pullback(jnp.where(jnp.arange(g.size) < n, g, jnp.where(reached, g, 0)))


_group_norm_flat_fn.defvjp(_group_norm_flat_fwd, _group_norm_flat_bwd)


def _group_norm_flat(x, weight, bias, *, groups, eps):
    return _group_norm_flat_fn(x, weight, bias, groups, eps)


@declare
def native_group_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    eps: float,
) -> tuple:
    """``torch.native_group_norm``: ``(output, mean, rstd)``, the statistics
    ``(N, group)``, differentiable as torch's are."""
    _require_tensors("native_group_norm", input)
    if input.numel() != N * C * HxW:
        raise RuntimeError(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could "
            "this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)"
        )
    if C % group:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, "
            f"but got input of shape {list(input.shape)} and num_groups={group}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape {list(t.shape)} and "
                f"input of shape {list(input.shape)}"
            )
    flat = apply(
        "NativeGroupNormBackward0",
        _group_norm_flat,
        input,
        weight,
        bias,
        groups=group,
        eps=eps,
    )
    out, mean, rstd = _split(
        "SplitWithSizesBackward0", flat, [tuple(input.shape), (N, group), (N, group)]
    )
    return out, mean, rstd


@declare
def native_norm(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``torch.native_norm``: a kernel for sparse tensors only (torch's CPU
    backend has none for dense ones); refused."""
    _require_tensors("native_norm", input)
    raise NotImplementedError(
        "torch.native_norm is not supported by jaxblitz.compat: torch runs it on "
        "sparse tensors only, and compat has none; use torch.linalg.vector_norm"
    )


@declare
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim``: the ``pow``-norm over every dim but ``dim``
    (kept as size 1), as weight normalisation takes it; ``dim=-1``: of all."""
    _require_tensors("norm_except_dim", v)
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = [v.shape[0]] + [1] * (v.dim() - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == v.dim() - 1:
        shape = [1] * (v.dim() - 1) + [v.shape[-1]]
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)
