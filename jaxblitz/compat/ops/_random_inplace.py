"""Blitz 1, "Tensors": the in-place samplers ``bernoulli_``, ``random_``,
``exponential_``, ``cauchy_``, ``geometric_`` and ``log_normal_``, and
``torch.bernoulli``, drawn from compat's generator (torch's distributions and
checks, not its stream) through :class:`RandomMixin`.

Each draws uniforms (or raw bits, for ``random_``) at float64 from the generator's
next key and maps them with the distribution's inverse CDF, as torch's CPU
kernels do, then writes the result into the tensor's storage (every view sees it,
its version moves on).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import AutogradMixin, apply, run
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _not_implemented, _require_tensors
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_values, error, outside_unit
from jaxblitz.compat.tensor._dtype import _CPP, x64
from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import default_generator, draw

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _uniforms(shape: tuple, generator: Any) -> jax.Array:
    """Uniforms in [0, 1) at float64, from ``generator`` (compat's default)."""
    key = (generator or default_generator).next_key()
    with x64(True):
        return draw(jax.random.uniform, key, tuple(shape), jnp.float64, 0.0, 1.0)


def _below_fn(u, p, *, dt):
    """Bernoulli draws: ``u < p`` (``p`` broadcast to the uniforms' shape)."""
    return (u < jnp.broadcast_to(p, u.shape).astype(jnp.float64)).astype(dt)


def _write(self: Tensor, values: jax.Array) -> Tensor:
    with x64(True):
        self._set_data(jnp.asarray(values).astype(self.dtype.np))
    return self


def _continuous(self: Tensor, name: str, kernel: str) -> None:
    """torch's refusal of a continuous distribution on an integer tensor."""
    self._check_inplace()
    if self.dtype.is_floating_point:
        return
    if kernel:
        raise _not_implemented(kernel, self.dtype)
    raise RuntimeError(
        f"{name} distribution is a continuous probability distribution. dtype "
        f"must be a floating point but you specified {_CPP[self.dtype.np_name]}"
    )


def _bernoulli_fn(p, u):
    return (u < p).astype(p.dtype)


def _bits_range(dt: _dtype.dtype) -> tuple[int, int]:
    """``random_()``'s range without bounds: [0, 2**mantissa] for floats, the
    dtype's nonnegative values for integers."""
    if dt is _dtype.bool:
        return 0, 2
    if dt.is_floating_point:
        return 0, 2 ** (jnp.finfo(dt.np).nmant + 1) + 1
    return 0, int(np.iinfo(dt.np).max) + 1


def _check_bound(value: int, dt: _dtype.dtype, what: str) -> None:
    if dt is _dtype.bool:
        low, high = 0, 1
    elif dt.is_floating_point:
        info = jnp.finfo(dt.np)
        low, high = float(info.min), float(info.max)
    else:
        info = np.iinfo(dt.np)
        low, high = int(info.min), int(info.max)
    if not low <= value <= high:
        raise RuntimeError(f"{what} is out of bounds for {_CPP[dt.np_name]}")


def _random_ints(shape: tuple, low: int, high: int, generator: Any) -> jax.Array:
    """Integers uniform in [low, high) (a span up to 2**64) as int64 bits."""
    key = (generator or default_generator).next_key()
    span = high - low
    with x64(True):
        bits = draw(jax.random.bits, key, tuple(shape), jnp.uint64)
        if span < 2**64:
            bits = bits % jnp.uint64(span)
        return (bits + jnp.uint64(low % 2**64)).astype(jnp.int64)


_NOT_PROBABILITIES = error(
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
    "error message be improved?  If so, please report an enhancement request to "
    "PyTorch.)"
)


def _check_probabilities(p: Tensor) -> None:
    """torch's check (NaN fails it), made at the sync point for pending values."""
    check_values([p], outside_unit, _NOT_PROBABILITIES)


class RandomMixin(AutogradMixin):
    """``bernoulli``/``bernoulli_``, ``random_``, ``exponential_``, ``cauchy_``,
    ``geometric_`` and ``log_normal_``."""

    __slots__ = ()

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Tensor:
        return bernoulli(self, p, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        self._check_inplace()
        if isinstance(p, TensorBase):
            _check_probabilities(p)
            u = _uniforms(tuple(self.shape), generator)
            drawn = run(_below_fn, u, p._value(), dt=self.dtype.np_name)
            self._set_data(drawn)  # (recorded, where p is pending)
            return self
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        u = _uniforms(tuple(self.shape), generator)
        with x64(True):
            return _write(self, u < p)

    def random_(self, *args: Any, generator: Any = None, **kw: Any) -> Tensor:
        """``random_()``, ``random_(to)``, ``random_(from, to)`` (``to=None``: up to
        the dtype's top): integers uniform in [from, to)."""
        self._check_inplace()
        if len(args) == 1 and not kw:
            args = (0, args[0])
        bounds = dict(zip(("from", "to"), args, strict=False)) | kw
        dt = self.dtype
        low, high = _bits_range(dt)
        if bounds:
            low = int(bounds.get("from", 0))
            if bounds.get("to") is not None:
                high = int(bounds["to"])
            elif not dt.is_floating_point and dt is not _dtype.bool:
                high = int(np.iinfo(dt.np).max) + 1
        if low >= high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                f"to={high}"
            )
        _check_bound(low, dt, "from")
        _check_bound(high - 1, dt, "to - 1")
        return _write(self, _random_ints(tuple(self.shape), low, high, generator))

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        _continuous(self, "Exponential", "")
        if not lambd > 0:
            raise RuntimeError(
                f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}"
            )
        u = _uniforms(tuple(self.shape), generator)
        with x64(True):
            return _write(self, -jnp.log1p(-u) / lambd)

    def cauchy_(
        self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
    ) -> Tensor:
        _continuous(self, "Cauchy", "")
        if not sigma > 0:
            raise RuntimeError(
                f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}"
            )
        u = _uniforms(tuple(self.shape), generator)
        with x64(True):
            return _write(self, median + sigma * jnp.tan(math.pi * (u - 0.5)))

    def log_normal_(
        self, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
    ) -> Tensor:
        _continuous(self, "", "log_normal_cpu")
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
        key = (generator or default_generator).next_key()
        with x64(True):
            z = draw(jax.random.normal, key, tuple(self.shape), jnp.float64)
            return _write(self, jnp.exp(mean + std * z))

    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        self._check_inplace()
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
        u = _uniforms(tuple(self.shape), generator)
        with x64(True):  # the trials up to the first success: 1, 2, ...
            trials = jnp.maximum(jnp.ceil(jnp.log1p(-u) / math.log1p(-p)), 1.0)
            return _write(self, trials)


@declare
def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """``torch.bernoulli``: 1 with probability ``input`` (or ``p``), else 0."""
    _require_tensors("bernoulli", input)
    if p is not None:
        from jaxblitz.compat.tensor.creation import empty_like  # noqa: PLC0415

        return empty_like(input).bernoulli_(p, generator=generator)
    if not input.dtype.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", input.dtype)
    _check_probabilities(input)
    u = _uniforms(tuple(input.shape), generator)
    with x64(True):
        u = TensorBase._wrap(u.astype(input.dtype.np))
    return apply("BernoulliBackward0", _bernoulli_fn, input, u)
