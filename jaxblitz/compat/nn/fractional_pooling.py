"""Beyond the Blitz's ``MaxPool2d``: fractional max pooling
(``torch.nn.FractionalMaxPool2d``/``3d`` and their ``nn.functional`` twins), the
pooling windows placed by a random sample per channel (Graham's "Fractional
Max-Pooling").

The windows are ATen's: along an axis of input size ``L``, output size ``O`` and
pool size ``k``, with the channel's sample ``u`` (in the input's dtype, each
operation rounded to it, as ATen's ``generate_intervals<scalar_t>``)::

    alpha = (L - k) / (O - 1)
    start[i] = int((i + u) * alpha) - int(u * alpha)   # i < O - 1
    start[O - 1] = L - k

A window's maximum is its first in row-major order, or its last NaN; the index is
the flat position in the channel's plane. The samples are data (they may be
pending, lazily): the windows are computed inside the index's program, and only
the output's shape is decided on the host. Values gather the input at the
indices, so the gradient scatters to them, as torch's backward does.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn._args import _ints
from jaxblitz.compat.nn._convnd import _pair, _triple
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops._funnel import _tensor
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import rand

# -- pure JAX functions --------------------------------------------------------------

# the samples' column for each spatial axis: ATen's 2-d kernel takes W's first
_COLUMNS = {2: (1, 0), 3: (0, 1, 2)}


def _starts(u: jax.Array, length: int, out: int, k: int) -> jax.Array:
    """ATen's ``generate_intervals``: each window's start, ``u``'s shape + (out,)."""
    dt = u.dtype
    last = jnp.full((*u.shape, min(out, 1)), length - k, jnp.int32)
    if out <= 1:
        return last
    alpha = jnp.asarray(length - k, dt) / jnp.asarray(out - 1, dt)
    i = jnp.arange(out - 1).astype(dt)
    first = ((i + u[..., None]) * alpha).astype(jnp.int32)  # C's truncation
    return jnp.concatenate([first - (u * alpha).astype(jnp.int32)[..., None], last], -1)


def _fractional_argmax_fn(x, samples, *, kernel, out):
    """Each output element's flat input index, (N, C, *out) as int64."""
    n = len(kernel)
    unbatched = x.ndim == n + 1
    if unbatched:
        x = x[None]
    size = x.shape[2:]
    u = samples[: x.shape[0]]  # torch reads the first N samples
    strides = [math.prod(size[d + 1 :]) for d in range(n)]
    empty = any(k <= 0 for k in kernel)
    at = jnp.zeros((*x.shape[:2], *out, *(max(k, 1) for k in kernel)), jnp.int32)
    for d, col in enumerate(_COLUMNS[n]):
        start = _starts(u[..., col], size[d], out[d], kernel[d])  # (N, C, O_d)
        offsets = jnp.arange(1 if empty else kernel[d])
        rows = start[..., None] + offsets  # (N, C, O_d, k_d)
        shape = [1] * (2 + 2 * n)
        shape[:2], shape[2 + d], shape[2 + n + d] = x.shape[:2], out[d], rows.shape[-1]
        at = at + rows.reshape(shape) * strides[d]
    window = math.prod(max(k, 1) for k in kernel)
    at = at.reshape(*at.shape[: 2 + n], window)  # (N, C, *out, window)
    if empty:  # torch: no element beats its starting -inf; the window's start
        index = at[..., 0]
    else:
        flat = x.reshape(*x.shape[:2], math.prod(size))
        spots = at.reshape(*x.shape[:2], math.prod(out) * window)
        vals = jnp.take_along_axis(flat, spots, axis=-1)
        vals = vals.reshape(at.shape)
        nan = jnp.isnan(vals)
        last_nan = vals.shape[-1] - 1 - jnp.argmax(nan[..., ::-1], axis=-1)
        first_max = jnp.argmax(jnp.where(nan, -jnp.inf, vals), axis=-1)
        pick = jnp.where(nan.any(-1), last_nan, first_max)
        index = jnp.take_along_axis(at, pick[..., None], axis=-1)[..., 0]
    index = index.astype(jnp.int64).reshape(*x.shape[:2], math.prod(out))
    return index[0] if unbatched else index


def _gather_fn(x, index, *, out):
    # pooling's, with every size spelled out: a reshape to -1 of no elements
    # (an empty batch or output) has no answer
    lead = x.shape[: x.ndim - len(out)]
    flat = x.reshape(*lead, math.prod(x.shape[len(lead) :]))
    return jnp.take_along_axis(flat, index, axis=-1).reshape(*lead, *out)


def _lowest_fn(x, index, *, out):
    # every window empty (a pool size <= 0): torch's starting -inf throughout
    del index
    return jnp.full((*x.shape[: x.ndim - len(out)], *out), -jnp.inf, x.dtype)


# -- argument checks -----------------------------------------------------------------


def _parsed(name: str, arg: str, position: int, value: Any, n: int) -> tuple:
    """An int (for every axis) or a sequence of ints, as ATen's binding parses
    it (its length is the meta function's check: :func:`_lengths`)."""
    values = _ints(name, arg, position, value)
    return values if isinstance(value, tuple | list) else values * n


def _lengths(name: str, n: int, kernel: tuple, out: tuple) -> None:
    ints = "Ints" if n == 2 else "three Ints"
    for arg, values in (("kernel_size", kernel), ("output_size", out)):
        if len(values) != n:
            raise RuntimeError(
                f"{name}: {arg} must either be a single Int or tuple of {ints}"
            )


def _check(n: int, input: Tensor, kernel: tuple, out: tuple, samples: Any) -> None:
    """ATen's checks of fractional_max_pool{2,3}d, in its order and words."""
    name = f"fractional_max_pool{n}d"
    where = f"{name}()" if n == 2 else f"{name}_out()"
    shape = list(input.shape)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"{where}: Expected {n + 1}D or {n + 2}D tensor, but got: {shape}"
        )
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{where}: Expected input to have non-zero size for non-batch "
                f"dimensions, but got{shape} with dimension {d} being empty."
            )
    size = input.shape[-n:]
    axes = ("height", "width") if n == 2 else ("time", "width", "height")
    order = (0, 1) if n == 2 else (0, 2, 1)
    for axis, d in zip(axes, order, strict=True):
        # the 2-d check allows a last window that ends at the edge, the 3-d not
        room = size[d] + 1 if n == 2 else size[d]
        if not out[d] + kernel[d] - 1 < room:
            raise RuntimeError(
                f"{where}: pool {axis} {kernel[d]} too large relative to input "
                f"{axis} {size[d]}"
            )
    full = [*input.shape[:-n], *out]
    for s in full:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {full}"
            )
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(
            f"Expect _random_samples to have 3 dimensions, got {samples.dim()}"
        )
    batch = 1 if input.dim() == n + 1 else input.shape[0]
    if samples.shape[0] < batch:
        raise RuntimeError(
            "Expect _random_samples.size(0) no less then input batch size."
        )
    if samples.shape[1] != input.shape[-n - 1]:
        raise RuntimeError(
            "Expect _random_samples.size(1) equals to input channel size."
        )
    if samples.shape[2] != n:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {n}; got {samples.shape[2]}."
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{name}_out_frame\" not implemented for '{input.dtype.scalar_type}'"
        )


def _pool(n: int, input: Tensor, kernel_size: Any, output_size: Any, samples: Any):
    """``torch._C._nn.fractional_max_pool{n}d``: (values, indices)."""
    name = f"fractional_max_pool{n}d"
    if _autocast.on:  # torch's CPU autocast runs it in float32
        pool = functools.partial(_pool, n)
        return _autocast.run(name, pool, input, kernel_size, output_size, samples)
    _tensor(name, input)
    kernel = _parsed(name, "kernel_size", 2, kernel_size, n)
    out = _parsed(name, "output_size", 3, output_size, n)
    if not isinstance(samples, Tensor):
        raise TypeError(
            f"{name}(): argument 'random_samples' (position 4) must be Tensor, not "
            f"{type(samples).__name__}"
        )
    _lengths(name, n, kernel, out)
    _check(n, input, kernel, out, samples)
    index = run(
        _fractional_argmax_fn,
        input._value(),
        samples._value(),
        kernel=kernel,
        out=out,
    )
    fn = _lowest_fn if any(k <= 0 for k in kernel) else _gather_fn
    values = apply(f"FractionalMaxPool{n}DBackward0", fn, input, index, out=out)
    return values, Tensor._wrap(index).reshape(*input.shape[:-n], *out)


def _output_size(n: int, input: Tensor, output_size: Any, output_ratio: Any) -> Any:
    """torch's Python prelude: the output size from ``output_ratio``."""
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(
            f"{name} requires specifying either an output_size or an output_ratio"
        )
    if output_size is not None:
        return output_size
    if n == 2:
        if len(output_ratio) > 2:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple "
                "of Ints."
            )
        ratio = _pair(output_ratio)
    else:
        ratio = _triple(output_ratio)
    return [int(input.size(d - n) * ratio[d]) for d in range(n)]


def _samples(n: int, input: Tensor, samples: Any) -> Any:
    """torch's draw where none is given: ``(N, C, n)`` uniform in [0, 1), from
    compat's generator."""
    if samples is not None:
        return samples
    batch = 1 if input.dim() == n + 1 else input.size(0)
    channels = input.size(-n - 1)
    return rand(batch, channels, n, dtype=input.dtype, device=input.device)


# -- torch.nn.functional -------------------------------------------------------------


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    size = _output_size(2, input, output_size, output_ratio)
    samples = _samples(2, input, _random_samples)
    return _pool(2, input, kernel_size, size, samples)


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    size = _output_size(3, input, output_size, output_ratio)
    samples = _samples(3, input, _random_samples)
    return _pool(3, input, kernel_size, size, samples)


def _dispatch(with_indices: Any) -> Any:
    """torch's ``boolean_dispatch`` on ``return_indices`` (argument 4)."""

    @functools.wraps(with_indices)
    def fn(input, kernel_size, *args: Any, **kwargs: Any) -> Any:
        flag = kwargs.get("return_indices", args[2] if len(args) > 2 else False)
        values, indices = with_indices(input, kernel_size, *args, **kwargs)
        return (values, indices) if flag else values

    fn.__name__ = fn.__qualname__ = with_indices.__name__.removesuffix("_with_indices")
    return fn


fractional_max_pool2d = _dispatch(fractional_max_pool2d_with_indices)
fractional_max_pool3d = _dispatch(fractional_max_pool3d_with_indices)


# -- modules -------------------------------------------------------------------------


class _FractionalMaxPoolNd(Module):
    _n: int
    _pool: Any

    def __init__(
        self,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Any = None,
    ) -> None:
        super().__init__()
        n, kind = self._n, type(self).__name__
        spread = _pair if n == 2 else _triple
        if n == 3 and (
            (isinstance(kernel_size, int) and kernel_size <= 0)
            or (
                isinstance(kernel_size, tuple | list)
                and not all(k > 0 for k in kernel_size)
            )
        ):
            raise ValueError(
                f"kernel_size must be greater than 0, but got {kernel_size}"
            )
        self.kernel_size = spread(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = spread(output_size) if output_size is not None else None
        self.output_ratio = spread(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{kind} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError(
                "only one of output_size and output_ratio may be specified"
            )
        ratio = self.output_ratio
        if ratio is not None and not all(0 < ratio[i] < 1 for i in range(n)):
            raise ValueError(
                f"output_ratio must be between 0 and 1 (got {output_ratio})"
            )

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _n = 2
    _pool = fractional_max_pool2d


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _n = 3
    _pool = fractional_max_pool3d
