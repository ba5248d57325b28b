"""Blitz 3, "Neural Networks": average and adaptive pooling beside the Blitz's
``MaxPool2d``, of every rank (``torch.nn.AvgPool1d``/``2d``/``3d``,
``AdaptiveAvgPool*``, ``AdaptiveMaxPool*`` and their ``nn.functional`` twins).

Windows and divisors follow ATen's formulas: an average window is summed by
``lax.reduce_window`` and divided by torch's per-window divisor (padding counted
or not, ``divisor_override``); adaptive window ``i`` of ``n`` over a length ``L``
spans ``[floor(i*L/n), ceil((i+1)*L/n))``. A 1-d pooling is ATen's: its own
argument checks, then the 2-d one over a height of 1.
"""

from __future__ import annotations

import functools
import itertools
import string
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn._args import _bool, _ints, _spread
from jaxblitz.compat.nn._convnd import _single
from jaxblitz.compat.nn._pool_args import _pool2d_check, _pool_axes_check, _pool_size
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._fresh_layout import keeps_channels_last

# -- pure JAX functions --------------------------------------------------------------


def _avg_pool_fn(x, divisor, *, window, stride, padding):
    lead = (1,) * (x.ndim - len(window))
    pads = ((0, 0),) * len(lead) + padding
    zero = np.zeros((), x.dtype)  # concrete: lax takes the differentiable sum
    sums = lax.reduce_window(x, zero, lax.add, lead + window, lead + stride, pads)
    if jnp.issubdtype(x.dtype, jnp.integer):  # C's integer division, as ATen's
        return lax.div(sums, jnp.broadcast_to(divisor.astype(x.dtype), sums.shape))
    return sums / divisor.astype(x.dtype)


def _adaptive_avg_fn(x, *masks_and_counts):
    # masks (o, L) per spatial axis: 0/1 window masks; sums / window sizes
    *masks, counts = masks_and_counts
    n = len(masks)
    ins, outs = string.ascii_lowercase[:n], string.ascii_lowercase[n : 2 * n]
    spec = ",".join(f"{o}{i}" for o, i in zip(outs, ins, strict=True))
    sums = jnp.einsum(
        f"...{ins},{spec}->...{outs}", x, *masks, precision=lax.Precision.HIGHEST
    )
    return sums / counts


def _adaptive_argmax_fn(x, *, windows, n):
    # windows: per output element, its (start, end) on each of the n spatial axes
    size = x.shape[x.ndim - n :]
    if not windows:  # an empty output
        return jnp.zeros((*x.shape[: x.ndim - n], 0), jnp.int64)
    found = []
    for spans in windows:
        part = x[(...,) + tuple(slice(a, b) for a, b in spans)]
        k = jnp.argmax(part.reshape(*x.shape[:-n], -1), axis=-1)  # the first max;
        at = jnp.unravel_index(k, tuple(b - a for a, b in spans))  # a NaN wins
        coords = [c + a for c, (a, _) in zip(at, spans, strict=True)]
        found.append(jnp.ravel_multi_index(coords, size, mode="clip"))
    return jnp.stack(found, axis=-1).astype(jnp.int64)


def _gather_fn(x, index, *, out):
    flat = x.reshape(*x.shape[: x.ndim - len(out)], -1)
    picked = jnp.take_along_axis(flat, index, axis=-1)
    return picked.reshape(*picked.shape[:-1], *out)


# -- argument checks -----------------------------------------------------------------

_WORDS = {1: "one", 2: "two", 3: "three"}


def _arg(name: str, arg: str, position: int, value: Any, n: int = 2) -> tuple:
    """An int or ``n`` ints, as ATen's avg_pool{2,3}d takes them."""
    values = _ints(name, arg, position, value)
    if len(values) not in (1, n):
        must = "must be" if n == 3 and name.startswith("avg") else "must either be"
        omitted = " omitted," if arg == "stride" else ""
        raise RuntimeError(
            f"{name}: {arg} {must}{omitted} a single int, or a tuple of {_WORDS[n]} "
            "ints"
        )
    return _spread(values, n)


def check_1d(name: str, arg: str, values: tuple) -> None:
    """ATen's ``check1d``: a 1-d pooling's argument is one int."""
    if len(values) != 1:
        raise RuntimeError(
            f"{name}() argument '{arg}' should contain one int (got {len(values)})"
        )


def check_dim_range(name: str, input: Tensor, low: int, high: int) -> None:
    """ATen's ``checkDimRange``: ``low <= input.dim() < high``."""
    if not low <= input.dim() < high:
        raise RuntimeError(
            f"Expected {low} to {high - 1} dimensions, but got {input.dim()}-"
            f"dimensional tensor for argument #1 'self' (while checking arguments "
            f"for {name})"
        )


def pool3d_check(
    name: str, input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool
) -> tuple[int, tuple, list[int]]:
    """ATen's checks of ``max_pool3d`` and ``avg_pool3d`` after their arguments'
    lengths, in ATen's order: the rank; per axis a zero stride or a bad pad
    (pooling_output_shape); pool3d_shape_check. Returns C, (T, H, W), the output's
    [T', H', W']."""
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    _pool_axes_check(k, s, p, d)
    c, *size = input.shape[-4:]
    out = [
        _pool_size(m, kk, ss, pp, dd, ceil)
        for m, kk, ss, pp, dd in zip(size, k, s, p, d, strict=True)
    ]
    if min(k) <= 0:
        raise RuntimeError(
            "kernel size should be greater than zero, but got kT: "
            f"{k[0]} kH: {k[1]} kW: {k[2]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} "
            f"dW: {s[2]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationT: "
            f"{d[0]} dilationH: {d[1]} dilationW: {d[2]}"
        )
    fn = (
        "avg_pool3d()"
        if name == "avg_pool3d"
        else ("max_pool3d_with_indices_out_cpu_template()")
    )
    for i in range(input.dim() - 4, input.dim()):
        if input.shape[i] <= 0:  # ATen prints the (zero) length as the dimension
            raise RuntimeError(
                f"{fn}: Expected input's non-batch dimensions to have positive "
                f"length, but input has a shape of {list(input.shape)} and "
                f"non-batch dimension {input.shape[i]} has length zero!"
            )
    if name == "avg_pool3d" and any(m < kk for m, kk in zip(size, k, strict=True)):
        raise RuntimeError(
            f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than "
            f"kernel size (kT: {k[0]} kH: {k[1]} kW: {k[2]})"
        )
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{size[0]}x{size[1]}x{size[2]}). Calculated "
            f"output size: ({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small"
        )
    return c, tuple(size), out


# -- torch.nn.functional: average pooling --------------------------------------------


def _avg_pool(
    grad_fn: str,
    input: Tensor,
    k: tuple,
    s: tuple,
    p: tuple,
    size: tuple,
    out: list[int],
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    """Average pooling over the last ``len(k)`` axes (checked): ATen's divisor per
    output, the window clipped to the padded input, or to the input itself when
    padding is not counted."""
    sizes = []
    for o, m, kk, ss, pp in zip(out, size, k, s, p, strict=True):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, m + pp)
        padded = end - start
        inside = np.minimum(end, m) - np.maximum(start, 0)
        sizes.append(padded if count_include_pad else inside)
    if divisor_override is not None:
        divisor = np.full(out, divisor_override, np.int64)
    else:
        divisor = functools.reduce(np.multiply.outer, sizes)
    extra = [
        max(0, (o - 1) * ss + kk - (m + 2 * pp))
        for o, m, kk, ss, pp in zip(out, size, k, s, p, strict=True)
    ]
    return apply(
        grad_fn,
        _avg_pool_fn,
        input,
        divisor,
        window=tuple(k),
        stride=tuple(s),
        padding=tuple((pp, pp + e) for pp, e in zip(p, extra, strict=True)),
    )


def _stride(name: str, stride: Any, k: tuple, n: int) -> tuple:
    if stride is None or (isinstance(stride, tuple | list) and not stride):
        return k  # torch: an omitted stride is the kernel size
    return _arg(name, "stride", 3, stride, n)


def _avg_bools(fn: str, ceil_mode: Any, count_include_pad: Any, at: int = 0) -> None:
    """avg_pool's bool arguments, refused unless bools as torch's binding refuses
    them (``at``: ceil_mode's position where given positionally, as the modules
    give it; a keyword has none in torch's message)."""
    _bool(fn, "ceil_mode", ceil_mode, at or None)
    _bool(fn, "count_include_pad", count_include_pad, at + 1 if at else None)


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """``torch.nn.functional.avg_pool1d``: ATen's 2-d pooling over a height of 1."""
    _tensor("avg_pool1d", input)
    k = _ints("avg_pool1d", "kernel_size", 2, kernel_size)
    none = stride is None or (isinstance(stride, tuple | list) and not stride)
    s = k if none else _ints("avg_pool1d", "stride", 3, stride)
    p = _ints("avg_pool1d", "padding", 4, padding)
    _avg_bools("avg_pool1d", ceil_mode, count_include_pad)
    check_dim_range("avg_pool1d", input, 2, 4)
    for arg, values in (("kernel_size", k), ("stride", s), ("padding", p)):
        check_1d("avg_pool1d", arg, values)
    two = avg_pool2d(
        input.unsqueeze(-2),
        (1, k[0]),
        (1, s[0]),
        (0, p[0]),
        ceil_mode,
        count_include_pad,
    )
    return two.squeeze(-2)


@keeps_channels_last(1)
def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    _tensor("avg_pool2d", input)
    k = _arg("avg_pool2d", "kernel_size", 2, kernel_size)
    s = _stride("avg_pool2d", stride, k, 2)
    p = _arg("avg_pool2d", "padding", 4, padding)
    _avg_bools("avg_pool2d", ceil_mode, count_include_pad)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError("\"avg_pool2d\" not implemented for 'Bool'")
    _, h, w, out = _pool2d_check("avg_pool2d", input, k, s, p, (1, 1), ceil_mode)
    return _avg_pool(
        "AvgPool2DBackward0",
        input,
        k,
        s,
        p,
        (h, w),
        out,
        count_include_pad,
        divisor_override,
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "avg_pool3d",
            avg_pool3d,
            input,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )
    _tensor("avg_pool3d", input)
    k = _arg("avg_pool3d", "kernel_size", 2, kernel_size, 3)
    s = _stride("avg_pool3d", stride, k, 3)
    p = _arg("avg_pool3d", "padding", 4, padding, 3)
    _avg_bools("avg_pool3d", ceil_mode, count_include_pad)
    if input.dim() in (4, 5) and divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _, size, out = pool3d_check("avg_pool3d", input, k, s, p, (1, 1, 1), ceil_mode)
    if input.dtype.scalar_type == "Bool":
        raise NotImplementedError("\"avg_pool3d_out_frame\" not implemented for 'Bool'")
    return _avg_pool(
        "AvgPool3DBackward0",
        input,
        k,
        s,
        p,
        size,
        out,
        count_include_pad,
        divisor_override,
    )


# -- torch.nn.functional: adaptive pooling -------------------------------------------


def _list_with_default(output_size: Any, input: Tensor) -> Any:
    """torch's ``_list_with_default``: a None in ``output_size`` is the input's size."""
    if not isinstance(output_size, tuple | list):
        return output_size
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    tail = input.shape[input.dim() - len(output_size) :]
    return [m if o is None else o for o, m in zip(output_size, tail, strict=True)]


def _adaptive_args(name: str, n: int, input: Tensor, output_size: Any) -> tuple:
    """ATen's checks of adaptive_{avg,max}_pool{2,3}d, in its words; the output's
    spatial sizes."""
    _tensor(name, input)
    sizes = _list_with_default(output_size, input)
    sizes = list(sizes) if isinstance(sizes, tuple | list) else [sizes] * n
    avg, shape = name.startswith("adaptive_avg"), list(input.shape)
    if len(sizes) != n:
        if avg:
            raise RuntimeError(f"{name}: output_size must be {n}")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")
    if input.dim() not in (n + 1, n + 2):
        colon = ":" if n == 3 and not avg else ""
        raise RuntimeError(
            f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got{colon} {shape}"
        )
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {shape} with dimension {d} being "
                "empty"
            )
    sizes = [int(o) for o in sizes]
    if min(sizes) < 0:
        if not avg:  # ATen allocates the output first
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {min(sizes)}: "
                f"{shape[: input.dim() - n] + sizes}"
            )
        listed = f"{sizes[0]}, {sizes[1]}" + (f",{sizes[2]}" if n == 3 else "")
        raise RuntimeError(
            f"{name}: elements of output_size must be greater than or equal to 0 "
            f"but received {{{listed}}}"
        )
    if not input.dtype.is_floating_point:
        cpu = "_cpu" if n == 3 else ""
        raise NotImplementedError(
            f"\"{name}{cpu}\" not implemented for '{input.dtype.scalar_type}'"
        )
    return tuple(sizes)


def _spans(o: int, n: int) -> list[tuple[int, int]]:
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _adaptive_avg(n: int, input: Tensor, output_size: Any) -> Tensor:
    name = f"adaptive_avg_pool{n}d"
    out = _adaptive_args(name, n, input, output_size)
    axes = tuple(range(-1, -n - 1, -1))
    if out == (1,) * n:  # torch: a mean over the spatial axes
        return input.mean(axes, keepdim=True)
    masks, lengths = [], []
    for o, m in zip(out, input.shape[-n:], strict=True):
        mask = np.zeros((o, m), input.dtype.np)
        for i, (start, end) in enumerate(_spans(o, m)):
            mask[i, start:end] = 1
        masks.append(mask)
        lengths.append(mask.sum(1))
    counts = functools.reduce(np.multiply.outer, lengths).astype(input.dtype.np)
    grad_fn = f"AdaptiveAvgPool{n}DBackward0"
    return apply(grad_fn, _adaptive_avg_fn, input, *masks, counts)


def _adaptive_max(n: int, input: Tensor, output_size: Any, indices: bool) -> Any:
    out = _adaptive_args(f"adaptive_max_pool{n}d", n, input, output_size)
    spans = [_spans(o, m) for o, m in zip(out, input.shape[-n:], strict=True)]
    windows = tuple(itertools.product(*spans))
    index = run(_adaptive_argmax_fn, input._value(), windows=windows, n=n)
    values = apply(f"AdaptiveMaxPool{n}DBackward0", _gather_fn, input, index, out=out)
    if not indices:
        return values
    return values, Tensor._wrap(index).reshape(*index.shape[:-1], *out)


def _adaptive_1d(name: str, input: Tensor, output_size: Any) -> int:
    """ATen's adaptive_{avg,max}_pool1d checks before its 2-d pooling."""
    _tensor(name, input)
    check_dim_range(name, input, 2, 4)
    sizes = _ints(name, "output_size", 2, output_size)
    check_1d(name, "output_size", sizes)
    return sizes[0]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    o = _adaptive_1d("adaptive_avg_pool1d", input, output_size)
    return _adaptive_avg(2, input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "adaptive_avg_pool3d", adaptive_avg_pool3d, input, output_size
        )
    return _adaptive_avg(3, input, output_size)


def adaptive_max_pool1d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    o = _adaptive_1d("adaptive_max_pool1d", input, output_size)
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                "adaptive_max_pool1d(): Expected input to have non-zero size for "
                f"non-batch dimensions, but input has sizes {list(input.shape)} with "
                f"dimension {d} being empty"
            )
    values, index = _adaptive_max(2, input.unsqueeze(-2), (1, o), True)
    if not return_indices:
        return values.squeeze(-2)
    return values.squeeze(-2), index.squeeze(-2)


def adaptive_max_pool2d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    if _autocast.on:
        return _autocast.run(
            "adaptive_max_pool3d",
            adaptive_max_pool3d,
            input,
            output_size,
            return_indices,
        )
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    return adaptive_max_pool3d(input, output_size, return_indices=True)


# -- modules -------------------------------------------------------------------------


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class AvgPool1d(_AvgPoolNd):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding, self.ceil_mode = _single(padding), ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        _avg_bools("avg_pool1d", self.ceil_mode, self.count_include_pad, 5)
        return avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class _AvgPoolWithDivisor(_AvgPoolNd):
    _pool: Any

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = (
            count_include_pad,
            divisor_override,
        )

    def forward(self, input: Tensor) -> Tensor:
        name = type(self)._pool.__name__
        _avg_bools(name, self.ceil_mode, self.count_include_pad, 5)
        return type(self)._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool2d(_AvgPoolWithDivisor):
    _pool = avg_pool2d


class AvgPool3d(_AvgPoolWithDivisor):
    _pool = avg_pool3d


class _AdaptiveAvgPoolNd(Module):
    _pool: Any

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _pool = adaptive_avg_pool1d


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _pool = adaptive_avg_pool2d


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _pool = adaptive_avg_pool3d


class _AdaptiveMaxPoolNd(Module):
    _pool: Any

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _pool = adaptive_max_pool1d


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _pool = adaptive_max_pool2d


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _pool = adaptive_max_pool3d
