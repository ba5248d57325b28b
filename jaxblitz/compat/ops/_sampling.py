"""Blitz 1, "Tensors" (random sampling): ``torch.poisson`` and
``torch.binomial``, drawn per element from the rates (counts and probabilities)
given, in PyTorch's shapes, dtypes and errors.

As :mod:`._multinomial`, the numbers come from compat's generator on the host (a
NumPy generator seeded by its next key): ``torch.manual_seed`` repeats them,
PyTorch's own values are not reproduced. Parameters at or past a domain's edge
give torch's answers (no trials or a probability at or under 0: 0; a
probability at or over 1: the count; NaN: NaN); where torch's answer is only
its sampler's arithmetic (an infinite rate, a fractional count) compat refuses
with ``NotImplementedError`` rather than make up other values.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _require_tensors, _without_derivative
from jaxblitz.compat.tensor import _host_random, creation
from jaxblitz.compat.tensor._tensor_base import TensorBase, _type_name

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _zero_slope_fn(rates, samples):
    """``samples``; the gradient to ``rates`` is zero (torch's PoissonBackward0)."""
    return samples.astype(rates.dtype)


def _no_slope_fn(count, prob, samples):
    return _without_derivative("binomial", lambda c, p, s: s, count, prob, samples)


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(), np.float64)


def _rng(generator: Any) -> np.random.Generator:
    return _host_random.generator(creation._key(generator))


def _floating(kernel: str, t: Tensor) -> None:
    if not t.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{t.dtype.scalar_type}'"
        )


@declare
def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """``torch.poisson``: a Poisson draw for each rate of ``input``."""
    _require_tensors("poisson", input)
    _floating("poisson_cpu", input)
    rates = _host(input)
    if not bool(np.all(rates >= 0)):  # NaN fails too, as in torch
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if not bool(np.all(np.isfinite(rates))):
        raise NotImplementedError(
            "poisson: an infinite rate has no finite sample (torch returns its "
            "sampler's overflow); jaxblitz.compat refuses it"
        )
    samples = _rng(generator).poisson(rates).astype(input.dtype.np)
    return apply("PoissonBackward0", _zero_slope_fn, input, samples)


@declare
def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """``torch.binomial``: a Binomial(count, prob) draw for each element of the
    broadcast ``count`` and ``prob`` (floating-point tensors of one dtype)."""
    for position, (arg, v) in enumerate((("count", count), ("prob", prob)), 1):
        if not isinstance(v, TensorBase):
            raise TypeError(
                f"binomial(): argument '{arg}' (position {position}) must be Tensor, "
                f"not {_type_name(v)}"
            )
    if not count.dtype.is_floating_point:
        raise ValueError(
            "binomial only supports floating-point dtypes for count, got: "
            f"{count.dtype.scalar_type}"
        )
    if prob.dtype is not count.dtype:
        raise RuntimeError(
            f"Found dtype {prob.dtype.scalar_type} but expected "
            f"{count.dtype.scalar_type}"
        )
    try:
        shape = np.broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    except ValueError:
        a, b = tuple(count.shape), tuple(prob.shape)
        bad = next(i for i in range(1, min(len(a), len(b)) + 1) if a[-i] != b[-i])
        raise RuntimeError(
            f"The size of tensor a ({a[-bad]}) must match the size of tensor b "
            f"({b[-bad]}) at non-singleton dimension {max(len(a), len(b)) - bad}"
        ) from None
    if tuple(shape) != tuple(count.shape) and count.numel():
        warnings.warn(  # torch's output starts as count's shape, then is resized
            "An output with one or more elements was resized since it had shape "
            f"{list(count.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. "
            "You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0).",
            UserWarning,
            stacklevel=2,
        )
    n = np.broadcast_to(_host(count), shape)
    p = np.broadcast_to(_host(prob), shape)
    # torch's sampler: no trials or p <= 0 give 0, p >= 1 gives the count (NaN
    # compares false throughout), a NaN left over gives NaN
    with np.errstate(invalid="ignore"):
        zero = (n <= 0) | (p <= 0)
        every = ~zero & (p >= 1)
        drawn = ~zero & ~every & ~np.isnan(n) & ~np.isnan(p)
    counts = n[drawn]
    if not bool(np.all(counts == np.floor(counts))):
        raise NotImplementedError(
            "binomial: a fractional count has no distribution (torch returns its "
            "sampler's arithmetic); jaxblitz.compat refuses it"
        )
    draws = _rng(generator).binomial(
        np.where(drawn, n, 0).astype(np.int64), np.where(drawn, p, 0)
    )
    values = np.where(zero, 0.0, np.where(every, n, np.where(drawn, draws, np.nan)))
    samples = values.astype(count.dtype.np)
    return apply("NotImplemented", _no_slope_fn, count, prob, samples)
