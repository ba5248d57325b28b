"""Beyond the Blitz's ``MaxPool2d``: max pooling of rank 1 and 3 (and every rank's
``*_with_indices``), its inverse ``max_unpool1d``/``2d``/``3d``, and power-average
pooling ``lp_pool1d``/``2d``/``3d``, with their ``nn`` modules (``MaxPool1d`` and
``MaxPool3d`` are in :mod:`.layers`).

A 1-d max pooling is ATen's: its own checks, then the 2-d one over a height of 1;
the 3-d one picks each window's first maximum as the 2-d one does. Unpooling
scatters each value to its flat index in a zero output; its gradient gathers the
output's gradient at those indices, as torch's does (every duplicate gets one).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat import _autocast, ops
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn._args import _bool, _ints, _keep, _static
from jaxblitz.compat.nn._convnd import _ntuple, _pair, _single, _triple
from jaxblitz.compat.nn._pool_args import (
    _pool2d_check,
    _pool_arg,
    _pool_choice_fn,
    _pool_fn,
    _pool_index_fn,
    _pool_pick_fn,
    _pool_size,
)
from jaxblitz.compat.nn.functional_activation import (
    relu,
)
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.nn.pooling import (
    _arg,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    check_1d,
    check_dim_range,
    pool3d_check,
)
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._checks import check_values
from jaxblitz.compat.tensor._fresh_layout import keeps_channels_last

# -- max pooling ---------------------------------------------------------------------


# max_pool2d's checked plans, by the input's shape and the (plain, see _static)
# arguments; checks that fail cache nothing.
_PLANS: dict[tuple, tuple] = {}


def _max_pool2d_plan(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: Any,
) -> tuple:
    """max_pool2d's argument parsing and checks, in torch's order and words; the
    parsed ``k, s, p, d``, the input's ``(H, W)``, the output's ``[H', W']`` and
    whether the fast path takes it (when no indices are asked for)."""
    kh, kw = _pool_arg("kernel_size", 2, kernel_size)
    no_stride = stride is None or (isinstance(stride, tuple | list) and not stride)
    dh, dw = (kh, kw) if no_stride else _pool_arg("stride", 3, stride)
    ph, pw = _pool_arg("padding", 4, padding)
    lh, lw = _pool_arg("dilation", 5, dilation)
    _bool("max_pool2d", "ceil_mode", ceil_mode, 6)
    c, h, w, out = _pool2d_check(
        "max_pool2d", input, (kh, kw), (dh, dw), (ph, pw), (lh, lw), ceil_mode
    )
    plain = (ph, pw, lh, lw) == (0, 0, 1, 1) and not ceil_mode
    square = kh == kw and dh == dw and (dh == kh or input.dim() == 4)
    k, s, p, d = (kh, kw), (dh, dw), (ph, pw), (lh, lw)
    return k, s, p, d, (h, w), out, plain and square


@keeps_channels_last(1)
def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    _tensor("max_pool2d", input)
    key = None
    if (
        _static(kernel_size)
        and (stride is None or _static(stride))
        and _static(padding)
        and _static(dilation)
        and type(ceil_mode) is bool
    ):
        key = (input._shape(), kernel_size, stride, padding, dilation, ceil_mode)
        plan = _PLANS.get(key)
    if key is None or plan is None:
        plan = _keep(
            _PLANS,
            key,
            _max_pool2d_plan(input, kernel_size, stride, padding, dilation, ceil_mode),
        )
    k, s, p, d, size, out, fast = plan
    if fast and not return_indices:  # the Blitz's: the fast paths
        return apply(
            "MaxPool2DWithIndicesBackward0",
            _pool_fn,
            input,
            kernel_size=k[0],
            stride=s[0],
        )
    return _max_pool(
        "MaxPool2DWithIndicesBackward0", input, k, s, p, d, size, out, return_indices
    )


def _max_pool(
    grad_fn: str,
    input: Tensor,
    k: tuple,
    s: tuple,
    p: tuple,
    d: tuple,
    size: tuple,
    out: list[int],
    return_indices: bool,
) -> Any:
    """Max pooling over the last ``len(k)`` axes (their ``size``; the output's
    ``out``, checked), torch's values, gradient and flat indices."""
    # The padding that makes the windows' floor give torch's size (ceil_mode).
    extra = tuple(
        max(0, (o - 1) * st + dd * (kk - 1) + 1 - (n + 2 * pp))
        for o, n, kk, st, pp, dd in zip(out, size, k, s, p, d, strict=True)
    )
    how = {
        "window": tuple(k),
        "stride": tuple(s),
        "padding": tuple((pp, pp + e) for pp, e in zip(p, extra, strict=True)),
        "dilation": tuple(d),
    }
    # Which window element is the maximum (torch's: the first; a NaN wins), then
    # the values picked there (the gradient goes to that element only, as in
    # torch; JAX's reduce_window has no gradient with dilation) and its flat
    # index in the input's spatial axes.
    choice = apply(grad_fn, _pool_choice_fn, input.detach(), **how)
    values = apply(grad_fn, _pool_pick_fn, input, choice, **how)
    if not return_indices:
        return values
    return values, apply(grad_fn, _pool_index_fn, choice, size=tuple(size), **how)


def _max_pool1d_checks(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple) -> None:
    """ATen's ``check_max_pool1d`` (max_pool1d without indices), in its words."""
    shape = list(input.shape)
    if input.dim() not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got:{shape}"
        )
    for arg, values, what in (
        ("kernel_size", k, "an int, list of ints or tuple of ints"),
        ("stride", s, "None, an int, list of ints, or tuple of ints"),
        ("padding", p, "an int, list of ints, or tuple of ints"),
        ("dilation", d, "an int, list of ints or tuple of ints"),
    ):
        if len(values) != 1 and not (arg == "stride" and not values):
            raise RuntimeError(
                f"max_pool1d() {arg} must be {what} of size 1 but got size "
                f"{len(values)}"
            )
    s = s or k
    if k[0] <= 0:
        raise RuntimeError(
            f"max_pool1d() kernel_size must be greater than zero, but got {k[0]}"
        )
    if s[0] <= 0:
        raise RuntimeError(
            f"max_pool1d() stride must be greater than zero, but got {s[0]}"
        )
    if p[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={p[0]} and kernel_size={k[0]}"
        )
    if d[0] <= 0:
        raise RuntimeError(
            f"max_pool1d() dilation must be greater than zero, but got {d[0]}"
        )


def _max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:
    _tensor("max_pool1d", input)
    k = _ints("max_pool1d", "kernel_size", 2, kernel_size)
    s = () if stride is None else _ints("max_pool1d", "stride", 3, stride)
    p = _ints("max_pool1d", "padding", 4, padding)
    d = _ints("max_pool1d", "dilation", 5, dilation)
    _bool("max_pool1d", "ceil_mode", ceil_mode, 6)
    if return_indices:  # ATen's max_pool1d_with_indices
        check_dim_range("max_pool1d", input, 2, 4)
        s = s or k
        for arg, values in (("kernel_size", k), ("stride", s)):
            check_1d("max_pool1d", arg, values)
        for arg, values in (("padding", p), ("dilation", d)):
            check_1d("max_pool1d", arg, values)
    else:
        _max_pool1d_checks(input, k, s, p, d)
        s = s or k
        out = _pool_size(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode)
        if out <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
        if not input.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"max_pool1d_impl\" not implemented for '{input.dtype.scalar_type}'"
            )
    found = max_pool2d(
        input.unsqueeze(-2),
        (1, k[0]),
        (1, s[0]),
        (0, p[0]),
        (1, d[0]),
        ceil_mode,
        return_indices,
    )
    if not return_indices:
        return found.squeeze(-2)
    return found[0].squeeze(-2), found[1].squeeze(-2)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    return _max_pool1d(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    if _autocast.on:
        return _autocast.run(
            "max_pool3d",
            max_pool3d,
            input,
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            return_indices,
        )
    _tensor("max_pool3d", input)
    k = _arg("max_pool3d", "kernel_size", 2, kernel_size, 3)
    none = stride is None or (isinstance(stride, tuple | list) and not stride)
    s = k if none else _arg("max_pool3d", "stride", 3, stride, 3)
    p = _arg("max_pool3d", "padding", 4, padding, 3)
    d = _ints("max_pool3d", "dilation", 5, dilation)
    if len(d) not in (1, 3):
        raise RuntimeError(
            "max_pool3d: dilation must be either a single int, or a tuple of three ints"
        )
    d = d * 3 if len(d) == 1 else d
    _bool("max_pool3d", "ceil_mode", ceil_mode, 6)
    _, size, out = pool3d_check("max_pool3d", input, k, s, p, d, ceil_mode)
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError("\"max_pool3d_cpu\" not implemented for 'Bool'")
    return _max_pool(
        "MaxPool3DWithIndicesBackward0", input, k, s, p, d, size, out, return_indices
    )


def _with_indices(pool: Any, name: str) -> Any:
    """torch's ``max_pool{n}d_with_indices``: ``pool``'s values and indices."""

    def with_indices(
        input: Tensor,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        ceil_mode: bool = False,
        return_indices: bool = False,
    ) -> Any:
        return pool(input, kernel_size, stride, padding, dilation, ceil_mode, True)

    with_indices.__name__ = with_indices.__qualname__ = name
    return with_indices


max_pool1d_with_indices = _with_indices(max_pool1d, "max_pool1d_with_indices")
max_pool2d_with_indices = _with_indices(max_pool2d, "max_pool2d_with_indices")
max_pool3d_with_indices = _with_indices(max_pool3d, "max_pool3d_with_indices")


# -- max unpooling -------------------------------------------------------------------


def _scatter(x, index, length):
    rows = x.reshape(-1, x.shape[-1])
    at = index.reshape(-1, x.shape[-1])
    out = jnp.zeros((rows.shape[0], length), x.dtype)
    out = out.at[jnp.arange(rows.shape[0])[:, None], at].set(rows)
    return out.reshape(*x.shape[:-1], length)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _unpool(x, index, length):
    return _scatter(x, index, length)


def _unpool_fwd(x, index, length):
    return _scatter(x, index, length), index


def _unpool_bwd(length, index, grad):
    return jnp.take_along_axis(grad, index, axis=-1), None


_unpool.defvjp(_unpool_fwd, _unpool_bwd)


def _unpool_fn(x, index, *, size):
    """(..., *in) values to their flat ``index`` in a zero (..., *size)."""
    n = len(size)
    lead = x.shape[: x.ndim - n]
    flat = _unpool(x.reshape(*lead, -1), index.reshape(*lead, -1), math.prod(size))
    return flat.reshape(*lead, *size)


def _unpool_output_size(
    input: Tensor, k: tuple, s: tuple, p: tuple, output_size: Any
) -> list[int]:
    """torch's ``F._unpool_output_size``."""
    n = len(k)
    default = [(input.shape[i - n] - 1) * s[i] + k[i] - 2 * p[i] for i in range(n)]
    if output_size is None:
        sizes = default
    else:
        sizes = output_size
        if len(sizes) == n + 2:
            sizes = sizes[2:]
        if len(sizes) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} "
                f"elements, but it has a length of '{len(sizes)}'"
            )
        for i in range(n):
            low, high = default[i] - s[i], default[i] + s[i]
            if not low < sizes[i] < high:
                raise ValueError(
                    f'invalid output_size "{sizes}" (dim {i} must be between {low} '
                    f"and {high})"
                )
    for i in range(n):
        if sizes[i] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial "
                f"dimensions, but got output_size[{i}]={sizes[i]}"
            )
    return [int(m) for m in sizes]


def _invalid_index(indices: Any, *, size: int) -> tuple:
    """The indices outside an output volume of ``size`` elements, last first:
    PyTorch's CPU kernel stores each invalid index it meets and reports the one
    stored last (on one thread, the last in memory order; with more threads,
    whichever thread stores last: a race). compat reports the last, as one
    thread does."""
    flat = indices.reshape(-1)[::-1]
    return (flat < 0) | (flat >= size), flat


def _max_unpool(
    n: int, input: Tensor, indices: Tensor, size: list[int], stride: tuple
) -> Tensor:
    """ATen's max_unpool{2,3}d: its checks in its words, then the scatter."""
    words = {2: "two (height, width)", 3: "three (depth, height, width)"}[n]
    if indices.dtype.scalar_type != "Long":
        got = f" but got: {indices.dtype.scalar_type}" if n == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if n == 2 and len(size) != 2:
        raise RuntimeError(
            f"There should be exactly {words} elements in output_size, but got "
            f"{len(size)} elements."
        )
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, "
            f"but got a tensor with {input.dim()} dimensions."
        )
    if list(input.shape) != list(indices.shape):
        first, then = (input, indices) if n == 2 else (indices, input)
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(first.shape)}) but got indices tensor with shape: "
            f"{list(then.shape)}"
        )
    for i in range(1, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(
                f"max_unpooling{n}d_forward_out_cpu(): Expected input to have "
                f"non-zero size for non-batch dimensions, but got {list(input.shape)} "
                f"with dimension {i} being empty."
            )
    if n == 3 and min(stride) <= 0:
        raise RuntimeError(
            f"strides should be greater than zero, but got stride: {list(stride)}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"max_unpool{n}d\" not implemented for '{input.dtype.scalar_type}'"
        )
    if indices.numel():  # lazily: at the next sync point
        volume = "x".join(str(m) for m in size)

        def invalid(value: int, _: int) -> RuntimeError:
            return RuntimeError(
                f"Found an invalid max index: {value} (output volumes are of size "
                f"{volume})"
            )

        check_values([indices], _invalid_index, invalid, size=math.prod(size))
    grad_fn = f"MaxUnpool{n}DBackward0"
    return apply(grad_fn, _unpool_fn, input, indices, size=tuple(size))


def _unpool_args(spread, kernel_size: Any, stride: Any, padding: Any) -> tuple:
    k = spread(kernel_size)
    return k, k if stride is None else spread(stride), spread(padding)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    _tensor("max_unpool1d", input)
    k, s, p = _unpool_args(_single, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    two = _max_unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1], ())
    return two.squeeze(-1)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    _tensor("max_unpool2d", input)
    k, s, p = _unpool_args(_pair, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(2, input, indices, size, s)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    _tensor("max_unpool3d", input)
    k, s, p = _unpool_args(_triple, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(3, input, indices, size, s)


# -- power-average pooling -----------------------------------------------------------


def _lp_pool(
    n: int,
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any,
    ceil_mode: bool,
) -> Tensor:
    """torch's ``F.lp_pool{n}d``: the max of |x| for an infinite norm, else
    (sum of x**p over each window) ** (1/p), through ``avg_pool{n}d``."""
    avg, most = {
        1: (avg_pool1d, max_pool1d),
        2: (avg_pool2d, max_pool2d),
        3: (avg_pool3d, max_pool3d),
    }[n]
    if isinstance(norm_type, int | float) and norm_type == math.inf:
        return most(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if isinstance(norm_type, int | float) and norm_type == -math.inf:
        return -most(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    count = kernel_size if n == 1 else math.prod(_ntuple(n)(kernel_size))
    powered = input.pow(norm_type)
    if stride is not None:
        out = avg(powered, kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(powered, kernel_size, padding=0, ceil_mode=ceil_mode)
    return (ops.sign(out) * relu(out.abs())).mul(count).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# -- modules -------------------------------------------------------------------------


class _MaxUnpoolNd(Module):
    """torch's ``_MaxUnpoolNd``: ``_n`` spatial axes, ``_unpool`` the functional
    form; the arguments kept as tuples."""

    _n: int
    _unpool: Any

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__()
        spread = _ntuple(self._n)
        self.kernel_size = spread(kernel_size)
        self.stride = spread(stride if stride is not None else kernel_size)
        self.padding = spread(padding)

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Any = None
    ) -> Tensor:
        return type(self)._unpool(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class MaxUnpool1d(_MaxUnpoolNd):
    _n, _unpool = 1, max_unpool1d


class MaxUnpool2d(_MaxUnpoolNd):
    _n, _unpool = 2, max_unpool2d


class MaxUnpool3d(_MaxUnpoolNd):
    _n, _unpool = 3, max_unpool3d


class _LPPoolNd(Module):
    """torch's ``_LPPoolNd``: ``_pool`` the functional form."""

    _pool: Any

    def __init__(
        self,
        norm_type: float,
        kernel_size: Any,
        stride: Any = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    _pool = lp_pool1d


class LPPool2d(_LPPoolNd):
    _pool = lp_pool2d


class LPPool3d(_LPPoolNd):
    _pool = lp_pool3d
