"""Blitz 1, "Tensors" (random sampling): ``torch.poisson`` and
``torch.binomial``, drawn per element from the rates (counts and probabilities)
given, in PyTorch's shapes, dtypes and errors.

As :mod:`._multinomial`, the numbers are drawn with ``jax.random`` from compat's
generator's next key, in one JAX function of the parameters (lazy mode keeps it
in its program; both modes draw the same): ``torch.manual_seed`` repeats them,
PyTorch's own values are not reproduced. Checks of the parameters' values run
where the values are (:mod:`compat.tensor._checks`). Parameters at or past a
domain's edge give torch's answers (no trials or a probability at or under 0: 0; a
probability at or over 1: the count; NaN: NaN); where torch's answer is only
its sampler's arithmetic (an infinite rate, a fractional count) compat refuses
with ``NotImplementedError`` rather than make up other values.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _require_tensors, _without_derivative
from jaxblitz.compat.tensor import creation
from jaxblitz.compat.tensor._checks import check_values
from jaxblitz.compat.tensor._tensor_base import TensorBase, _type_name

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _zero_slope_fn(rates, samples):
    """``samples``; the gradient to ``rates`` is zero (torch's PoissonBackward0)."""
    return samples.astype(rates.dtype)


def _no_slope_fn(count, prob, samples):
    return _without_derivative("binomial", lambda c, p, s: s, count, prob, samples)


def _typed_key(key: Any) -> jax.Array:
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    return jax.random.wrap_key_data(key, impl="threefry2x32")


_NEGATIVE_RATE = "invalid Poisson rate, expected rate to be non-negative"
_INFINITE_RATE = (
    "poisson: an infinite rate has no finite sample (torch returns its "
    "sampler's overflow); jaxblitz.compat refuses it"
)
_FRACTIONAL = (
    "binomial: a fractional count has no distribution (torch returns its "
    "sampler's arithmetic); jaxblitz.compat refuses it"
)


def _bad_rates(rates: Any) -> tuple:
    """Negative (or NaN) rates, then infinite ones: torch's error, then
    compat's refusal (codes 0 and 1, all of the first checked first)."""
    xp = np if isinstance(rates, np.ndarray) else jnp
    negative = ~(rates >= 0)
    infinite = ~negative & ~(abs(rates) < np.inf)
    return xp.stack([negative, infinite]), xp.stack([negative * 0, negative * 0 + 1])


def _rate_error(code: Any, _: int) -> Exception:
    if int(code) == 0:
        return RuntimeError(_NEGATIVE_RATE)
    return NotImplementedError(_INFINITE_RATE)


def _poisson_fn(rates, key, *, dt):
    safe = jnp.where(jnp.isfinite(rates) & (rates >= 0), rates, 0.0)
    return jax.random.poisson(_typed_key(key), safe, rates.shape).astype(dt)


def _split_cases(n, p):
    """torch's sampler: no trials or p <= 0 give 0, p >= 1 gives the count (NaN
    compares false throughout), a NaN left over gives NaN; the rest are drawn."""
    zero = (n <= 0) | (p <= 0)
    every = ~zero & (p >= 1)
    drawn = ~zero & ~every & (n == n) & (p == p)
    return zero, every, drawn


def _fractional(n: Any, p: Any) -> tuple:
    drawn = _split_cases(n, p)[2]
    return drawn & (n != n // 1), n + p * 0


def _binomial_fn(n, p, key, *, shape, dt):
    n, p = jnp.broadcast_to(n, shape), jnp.broadcast_to(p, shape)
    zero, every, drawn = _split_cases(n, p)
    draws = jax.random.binomial(
        _typed_key(key), jnp.where(drawn, n, 0.0), jnp.where(drawn, p, 0.5), shape
    )
    values = jnp.where(zero, 0.0, jnp.where(every, n, jnp.where(drawn, draws, jnp.nan)))
    return values.astype(dt)


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
    check_values([input], _bad_rates, _rate_error)
    key = creation._key(generator)
    samples = run(_poisson_fn, input.detach()._value(), key, dt=input.dtype.np_name)
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
    check_values(
        [count, prob],
        _fractional,
        lambda *_: NotImplementedError(_FRACTIONAL),
    )
    samples = run(
        _binomial_fn,
        count.detach()._value(),
        prob.detach()._value(),
        creation._key(generator),
        shape=tuple(shape),
        dt=count.dtype.np_name,
    )
    return apply("NotImplemented", _no_slope_fn, count, prob, samples)
