"""Blitz 1, "Tensors": the special functions and two-argument elementwise math
(``atan2``, ``hypot``, ``logaddexp``, ``xlogy``, ``lgamma``, ``erfinv``,
``nan_to_num`` ...), with torch's dtype rules and, where JAX's derivative differs
from torch's (at 0, at the infinities, outside the domain), the backward formula
of torch's ``derivatives.yaml`` as a custom VJP."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _binary_fn,
    _cast,
    _default_float,
    _elementwise,
    _no_grad,
    _not_implemented,
    _promote,
    _require_a_tensor,
    _require_tensors,
    _sign,
    _unary_fn,
    _value,
    _without_derivative,
)
from jaxblitz.compat.ops._unary import _floating_unary, _same_unary
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Pure JAX functions with torch's derivatives
# ---------------------------------------------------------------------------


def _torch_vjp(value, backward):
    """``value(*args)`` whose VJP is torch's: ``backward(*args, out, g)`` gives one
    gradient per argument (each argument's own, so a NaN slope of one never
    reaches another's gradient)."""
    f = jax.custom_vjp(value)
    f.defvjp(lambda *a: (out := value(*a), (*a, out)), lambda res, g: backward(*res, g))
    return f


def _atan2_bwd(x, y, out, g):
    denom = x * x + y * y  # torch: a zero gradient at (0, 0)
    recip = jnp.where(denom == 0, 0, 1 / jnp.where(denom == 0, 1, denom))
    return g * y * recip, g * -x * recip


def _hypot_bwd(x, y, out, g):
    return g * x / out, g * y / out


def _logaddexp(x, y):
    # torch's: the larger plus log1p(exp(-|x - y|)); equal infinities give themselves
    m = jnp.maximum(x, y)
    same_inf = jnp.isinf(x) & (x == y)
    return jnp.where(same_inf, x, m + jnp.log1p(jnp.exp(-jnp.abs(x - y))))


def _logaddexp2(x, y):
    m = jnp.maximum(x, y)
    same_inf = jnp.isinf(x) & (x == y)
    tail = jnp.log1p(jnp.exp2(-jnp.abs(x - y))) / math.log(2)
    return jnp.where(same_inf, x, m + tail)


def _logaddexp_bwd(x, y, out, g):
    return g / (1 + jnp.exp(y - x)), g / (1 + jnp.exp(x - y))


def _logaddexp2_bwd(x, y, out, g):
    return g / (1 + jnp.exp2(y - x)), g / (1 + jnp.exp2(x - y))


def _copysign_bwd(x, y, out, g):
    ratio = jnp.where(x == 0, 0, out / jnp.where(x == 0, 1, x))
    return g * ratio, jnp.zeros_like(y)


def _xlogy(x, y):
    # torch: NaN where y is NaN, 0 where x is 0, else x * log(y)
    return jnp.where(jnp.isnan(y), y, jnp.where(x == 0, 0, x * jnp.log(y)))


def _xlogy_bwd(x, y, out, g):
    dx = jnp.where((x == 0) & (y <= 0), 0, _xlogy(g, y))
    return dx, g * x / y


def _fmax_bwd(x, y, out, g):
    first = (x >= y) | jnp.isnan(y)
    return jnp.where(first, g, 0), jnp.where(first, 0, g)


def _fmin_bwd(x, y, out, g):
    first = (x <= y) | jnp.isnan(y)
    return jnp.where(first, g, 0), jnp.where(first, 0, g)


def _ldexp(x, e):
    return x * jnp.exp2(e)


def _ldexp_bwd(x, e, out, g):
    return g * jnp.exp2(e), g * x * math.log(2) * jnp.exp2(e)


def _nextafter_bwd(x, y, out, g):  # torch: the slope is 1 for x (0 where y == x)
    return jnp.where(x != y, g, 0), jnp.zeros_like(y)


_atan2 = _torch_vjp(jnp.arctan2, _atan2_bwd)
_hypot = _torch_vjp(jnp.hypot, _hypot_bwd)
_logaddexp_v = _torch_vjp(_logaddexp, _logaddexp_bwd)
_logaddexp2_v = _torch_vjp(_logaddexp2, _logaddexp2_bwd)
_copysign = _torch_vjp(jnp.copysign, _copysign_bwd)
_xlogy_v = _torch_vjp(_xlogy, _xlogy_bwd)
_fmax = _torch_vjp(jnp.fmax, _fmax_bwd)
_fmin = _torch_vjp(jnp.fmin, _fmin_bwd)
_ldexp_v = _torch_vjp(_ldexp, _ldexp_bwd)
_nextafter = _torch_vjp(jnp.nextafter, _nextafter_bwd)


def _pairwise_fn(x, y, *, op, dt):
    """``op`` on ``x`` and ``y`` cast to ``dt`` and broadcast (a custom VJP gives
    gradients of its arguments' shapes; JAX's broadcast sums them back)."""
    return op(*jnp.broadcast_arrays(_cast(x, dt), _cast(y, dt)))


def _igamma_value(a, x):
    # torch: a == 0 gives 1 for x > 0, else NaN (JAX: NaN, and 1 at x == 0)
    at_zero = jnp.where(x > 0, 1, jnp.nan).astype(x.dtype)
    return jnp.where(a == 0, at_zero, jss.gammainc(a, x))


def _igammac_value(a, x):
    at_zero = jnp.where(x > 0, 0, jnp.nan).astype(x.dtype)
    return jnp.where(a == 0, at_zero, jss.gammaincc(a, x))


def _igamma_bwd(a, x, out, g):  # torch: no derivative for a (see _igamma_fn)
    slope = jnp.exp((a - 1) * jnp.log(x) - x - jss.gammaln(a))
    return jnp.zeros_like(a), g * slope


def _igammac_bwd(a, x, out, g):
    da, dx = _igamma_bwd(a, x, out, g)
    return da, -dx


_igamma_v = _torch_vjp(_igamma_value, _igamma_bwd)
_igammac_v = _torch_vjp(_igammac_value, _igammac_bwd)


def _no_input_derivative(a, *, what):
    """``a``, whose gradient raises torch's error; an ``a`` that does not require
    grad is a constant of the VJP, so this is not asked for it."""

    def bwd(_, g):
        raise NotImplementedError(
            f"the derivative for '{what}: input' is not implemented."
        )

    f = jax.custom_vjp(lambda a: a)
    f.defvjp(lambda a: (a, None), bwd)
    return f(a)


def _igamma_fn(a, x, *, upper, dt):
    a, x = jnp.broadcast_arrays(_cast(a, dt), _cast(x, dt))
    a = _no_input_derivative(a, what="igammac" if upper else "igamma")
    return (_igammac_v if upper else _igamma_v)(a, x)


def _digamma(x):
    # torch: digamma(+-0) is -+inf (JAX: NaN)
    return jnp.where(x == 0, jnp.copysign(jnp.inf, -x), jss.digamma(x))


def _trigamma(x):
    # torch's calc_trigamma: reflection below 1/2, six steps, then the series
    small = x < 0.5
    sin_pi_x = jnp.sin(math.pi * x)
    result = jnp.where(small, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0)
    x = jnp.where(small, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    series = 1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))
    return jnp.where(small, -1, 1) * (result + series / x)


# Cephes' Euler-Maclaurin coefficients in torch's zeta
_ZETA_A = (
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
)
_MACHEP = 1.11022302462515654042e-16


def _zeta(x: float, q):
    """torch's Hurwitz zeta(x, q) for an integer x > 1, step for step (its sum
    runs until the term is below machine precision and past q = 9, then the
    Euler-Maclaurin tail), in float64 as torch's CPU accumulates."""
    q = q.astype(jnp.float64)

    def small(b, s):
        return (-_MACHEP * s < b) & (b < _MACHEP * s)

    def cond(c):
        i, a, _, _, done = c
        return jnp.any(~done & ((i < 9) | (a <= 9)))

    def body(c):
        i, a, b, s, done = c
        go = ~done & ((i < 9) | (a <= 9))
        a2 = a + 1
        b2 = a2**-x
        s2 = s + b2
        return (
            i + go,
            jnp.where(go, a2, a),
            jnp.where(go, b2, b),
            jnp.where(go, s2, s),
            done | (go & small(b2, s2)),
        )

    pole = (q <= 0) & (q == jnp.floor(q))  # torch: inf at 0 and the negative ints
    zero = jnp.zeros_like(q)
    start = (jnp.zeros(q.shape, jnp.int32), q, zero, q**-x, pole)
    _, a, b, s, done = jax.lax.while_loop(cond, body, start)
    w = a
    tail = s + b * w / (x - 1) - 0.5 * b
    s = jnp.where(done, s, tail)
    fac, k = jnp.ones_like(q), 0.0
    for coefficient in _ZETA_A:
        fac = fac * (x + k)
        b = b / w
        t = fac * b / coefficient
        s = jnp.where(done, s, s + t)
        done = done | (jnp.abs(t / s) < _MACHEP)
        k += 1
        fac = fac * (x + k)
        b = b / w
        k += 1
    return jnp.where(pole, jnp.inf, s)


def _polygamma(n: int, x):
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    factorial = jnp.asarray(math.exp(math.lgamma(n + 1)), x.dtype)
    sign = 1 if n % 2 else -1
    return sign * factorial * _zeta(n + 1.0, x).astype(x.dtype)


@functools.cache
def _polygamma_v(n: int):
    """polygamma(n, .) whose VJP is torch's, polygamma(n + 1, .), itself so."""

    def bwd(x, out, g):
        return (g * _polygamma_v(n + 1)(x),)

    return _torch_vjp(functools.partial(_polygamma, n), bwd)


def _polygamma_fn(x, *, n, dt):
    return _polygamma_v(n)(x.astype(dt))


def _lgamma_bwd(x, out, g):
    return (g * _digamma(x),)


def _i0_bwd(x, out, g):
    return (g * jss.i1(x),)


def _digamma_bwd(x, out, g):
    return (g * _trigamma(x),)


_digamma_v = _torch_vjp(_digamma, _digamma_bwd)


def _lgamma_value(x):
    # C's lgamma is exactly 0 at 1 and 2 (JAX's approximation is off by an ulp)
    return jnp.where((x == 1) | (x == 2), 0, jss.gammaln(x)).astype(x.dtype)


_lgamma = _torch_vjp(_lgamma_value, _lgamma_bwd)
_i0 = _torch_vjp(jss.i0, _i0_bwd)


def _mvlgamma_fn(x, *, p, dt):
    x = x.astype(dt)
    js = jnp.arange(p, dtype=dt) / 2  # torch: sum over j of lgamma(x - j / 2)
    terms = _lgamma(x[..., None] - js)
    return jnp.sum(terms, axis=-1) + p * (p - 1) / 4 * math.log(math.pi)


def _sinc(x):
    pi_x = math.pi * x
    safe = jnp.where(x == 0, 1, pi_x)
    return jnp.where(x == 0, 1, jnp.sin(safe) / safe)


def _sinc_bwd(x, out, g):
    pi_x = math.pi * x
    safe = jnp.where(x == 0, 1, x)
    slope = (pi_x * jnp.cos(pi_x) - jnp.sin(pi_x)) / (math.pi * safe * safe)
    return (g * jnp.where(x == 0, 0, slope),)


_sinc_v = _torch_vjp(_sinc, _sinc_bwd)


def _nan_to_num(x, *, nan, posinf, neginf, dt):
    x = x.astype(dt)
    info = jnp.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    with np.errstate(over="ignore"):  # torch: a value past the dtype's range is inf
        nan, big, small = (np.asarray(v).astype(dt) for v in (nan, big, small))
    out = jnp.where(jnp.isnan(x), nan, x)
    out = jnp.where(jnp.isposinf(x), big, out)
    return jnp.where(jnp.isneginf(x), small, out)


def _nan_to_num_fn(x, *, nan, posinf, neginf, dt):
    def value(x):
        return _nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf, dt=dt)

    def bwd(x, out, g):  # torch: grad * isfinite(self)
        return (g * jnp.isfinite(x),)

    return _torch_vjp(value, bwd)(x)


def _logit_fn(x, *, eps, dt):
    def value(x):
        z = x if eps is None else jnp.clip(x, eps, 1 - eps)
        return jnp.log(z / (1 - z))

    def bwd(x, out, g):
        grad = g / (x * (1 - x))
        if eps is None:  # torch: NaN outside [0, 1], g * inf at 0 and 1
            grad = jnp.where((x == 0) | (x == 1), g * jnp.inf, grad)
            return (jnp.where((x < 0) | (x > 1), jnp.nan, grad),)
        return (jnp.where((x < eps) | (x > 1 - eps), 0, grad),)

    return _torch_vjp(value, bwd)(x.astype(dt))


def _sgn(x):
    return jax.lax.stop_gradient(_sign(x))  # torch: a zero gradient, NaN or not


def _frexp_mantissa(x, e):
    return jnp.frexp(x)[0]


def _frexp_bwd(x, e, out, g):  # torch: grad / exponent.exp2()
    return g / jnp.exp2(e.astype(g.dtype)), None


_frexp_mantissa_fn = _torch_vjp(_frexp_mantissa, _frexp_bwd)


def _frexp_exponent_fn(x):
    return jnp.frexp(x)[1].astype(jnp.int32)


def _gcd_fn(x, y, *, lcm, dt):
    x, y = _cast(x, dt), _cast(y, dt)
    return jnp.lcm(x, y) if lcm else jnp.gcd(x, y)


def _heaviside_fn(x, values, *, dt):
    def value(x, values):
        return jnp.where(x == 0, values, (x > 0).astype(x.dtype)).astype(x.dtype)

    return _without_derivative("heaviside", value, *jnp.broadcast_arrays(x, values))


def _signbit_fn(x):
    if x.dtype == bool:
        return jnp.zeros(x.shape, bool)
    return jnp.signbit(x)


def _isreal_fn(x):
    return jnp.ones(x.shape, bool)


# ---------------------------------------------------------------------------
# torch's functions
# ---------------------------------------------------------------------------

acosh = _floating_unary("AcoshBackward0", jnp.arccosh)
declare.alias("acosh", acosh, method=True, inplace=True)
saves("AcoshBackward0", (0, None))
asinh = _floating_unary("AsinhBackward0", jnp.arcsinh)
declare.alias("asinh", asinh, method=True, inplace=True)
saves("AsinhBackward0", (0, None))
atanh = _floating_unary("AtanhBackward0", jnp.arctanh)
declare.alias("atanh", atanh, method=True, inplace=True)
saves("AtanhBackward0", (0, None))
arccosh, arcsinh, arctanh = acosh, asinh, atanh
declare.alias("arctanh", arctanh, method=True, inplace=True)
declare.alias("arcsinh", arcsinh, method=True, inplace=True)
declare.alias("arccosh", arccosh, method=True, inplace=True)
erfc = _floating_unary("ErfcBackward0", jss.erfc)
declare.alias("erfc", erfc, method=True, inplace=True)
saves("ErfcBackward0", (0, None))
erfinv = _floating_unary("ErfinvBackward0", jss.erfinv)
declare.alias("erfinv", erfinv, method=True, inplace=True)
saves("ErfinvBackward0", (0, None))
lgamma = _floating_unary("LgammaBackward0", _lgamma)
declare.alias("lgamma", lgamma, method=True, inplace=True)
saves("LgammaBackward0", (0, None))
digamma = _floating_unary("DigammaBackward0", _digamma_v)
declare.alias("digamma", digamma, method=True, inplace=True)
saves("DigammaBackward0", (0, None))
i0 = _floating_unary("I0Backward0", _i0)
declare.alias("i0", i0, method=True, inplace=True)
saves("I0Backward0", (0, None))
sinc = _floating_unary("SincBackward0", _sinc_v)
declare.alias("sinc", sinc, method=True, inplace=True)
saves("SincBackward0", (0, None))
deg2rad = _floating_unary("Deg2RadBackward0", jnp.deg2rad)
declare.alias("deg2rad", deg2rad, method=True, inplace=True)
rad2deg = _floating_unary("Rad2DegBackward0", jnp.rad2deg)
declare.alias("rad2deg", rad2deg, method=True, inplace=True)
sgn = _same_unary("SgnBackward0", _sgn)
declare.alias("sgn", sgn, method=True, inplace=True)
saves("SgnBackward0", (0, None), ("result", None))


def _float_pair(name: str, op, *, ints: bool):
    """``torch.<what>(input, other)`` of two Tensors; ``ints=True``: integers give
    the default float dtype, else they are refused (torch's ``<what>_cpu``)."""
    what = name.removesuffix("Backward0").lower()

    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(what, input, other)
        dt = _promote(input, other)
        if not dt.is_floating_point:
            if not ints:
                raise _not_implemented(f"{what}_cpu", dt)
            dt = _default_float(dt)
        return _elementwise(name, _pairwise_fn, input, other, op=op, dt=dt)

    fn.__name__ = what
    return fn


atan2 = _float_pair("Atan2Backward0", _atan2, ints=True)
declare.alias("atan2", atan2, method=True, inplace=True)
saves("Atan2Backward0", (0, None), (1, None))
arctan2 = atan2
declare.alias("arctan2", arctan2, method=True, inplace=True)
ldexp = _float_pair("LdexpBackward0", _ldexp_v, ints=True)
declare.alias("ldexp", ldexp, method=True, inplace=True)
saves("LdexpBackward0", (1, 0), ("result", None))
hypot = _float_pair("HypotBackward0", _hypot, ints=False)
declare.alias("hypot", hypot, method=True, inplace=True)
saves("HypotBackward0", (0, 0), (1, 1), ("result", None))
logaddexp = _float_pair("LogaddexpBackward0", _logaddexp_v, ints=False)
declare.alias("logaddexp", logaddexp, method=True)
saves("LogaddexpBackward0", (0, None), (1, None))
logaddexp2 = _float_pair("Logaddexp2Backward0", _logaddexp2_v, ints=False)
declare.alias("logaddexp2", logaddexp2, method=True)
saves("Logaddexp2Backward0", (0, None), (1, None))
nextafter = _float_pair("NextafterBackward0", _nextafter, ints=False)
declare.alias("nextafter", nextafter, method=True, inplace=True)
saves("NextafterBackward0", (0, 0), (1, 0))


def _max_pair(name: str, op):
    what = name.removesuffix("Backward0").lower()

    def fn(input: Tensor, other: Tensor) -> Tensor:
        """The larger (smaller) of the two, NaN only where both are NaN."""
        _require_tensors(what, input, other)
        dt = _promote(input, other)
        if dt is _dtype.bool:
            logical = jnp.logical_or if what == "fmax" else jnp.logical_and
            return _no_grad(_binary_fn, input, other, op=logical, dt="bool")
        return _elementwise(name, _pairwise_fn, input, other, op=op, dt=dt)

    fn.__name__ = what
    return fn


fmax = _max_pair("FmaxBackward0", _fmax)
declare.alias("fmax", fmax, method=True)
saves("FmaxBackward0", (0, None), (1, None))
fmin = _max_pair("FminBackward0", _fmin)
declare.alias("fmin", fmin, method=True)
saves("FminBackward0", (0, None), (1, None))


@declare(method=True, inplace=True)
def copysign(input: Tensor, other: Any) -> Tensor:
    """``|input|`` with the sign of ``other`` (a Tensor or a number)."""
    _require_tensors("copysign", input)
    other = _value(other)
    dt = _default_float(_promote(input, other))
    name = "CopysignBackward0" if isinstance(other, TensorBase) else "CopysignBackward1"
    return _elementwise(name, _pairwise_fn, input, other, op=_copysign, dt=dt)


saves("CopysignBackward0", (0, 0), ("result", None))


@declare(method=True, inplace=True)
def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, 0 where input is 0 (NaN where other is NaN)."""
    _require_a_tensor("xlogy", input, other)
    input, other = _value(input), _value(other)
    dt = _default_float(_promote(input, other))
    if not isinstance(input, TensorBase):
        name = "XlogyBackward1"
    else:
        name = "XlogyBackward0" if isinstance(other, TensorBase) else "XlogyBackward2"
    return _elementwise(name, _pairwise_fn, input, other, op=_xlogy_v, dt=dt)


saves("XlogyBackward0", (0, None), (1, None))


def _igamma(upper: bool):
    name = "IgammacBackward0" if upper else "IgammaBackward0"
    what = "igammac" if upper else "igamma"

    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(what, input, other)
        dt = _promote(input, other)
        if not dt.is_floating_point:
            raise _not_implemented(f"{what}_cpu", dt)
        return _elementwise(name, _igamma_fn, input, other, upper=upper, dt=dt)

    fn.__name__ = what
    return fn


saves("IgammaBackward0", (0, None), (1, None))
saves("IgammacBackward0", (0, None), (1, None))


igamma = _igamma(upper=False)
declare.alias("igamma", igamma, method=True, inplace=True)
igammac = _igamma(upper=True)
declare.alias("igammac", igammac, method=True, inplace=True)


@declare
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of digamma."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    dt = _default_float(input.dtype)
    return apply("PolygammaBackward0", _polygamma_fn, input, n=n, dt=dt.np_name)


saves("PolygammaBackward0", (0, None))


@declare(method=True, inplace=True)
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype is _dtype.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    dt = _default_float(input.dtype)
    return apply("MvlgammaBackward0", _mvlgamma_fn, input, p=p, dt=dt.np_name)


saves("MvlgammaBackward0", (0, None))


@declare(method=True, inplace=True)
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(z / (1 - z))``, z the input clamped to ``[eps, 1 - eps]``."""
    dt = _default_float(input.dtype)
    return apply("LogitBackward0", _logit_fn, input, eps=eps, dt=dt.np_name)


saves("LogitBackward0", (0, None))


@declare(method=True, inplace=True)
def nan_to_num(
    input: Tensor,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Tensor:
    """NaN, +inf and -inf replaced (by default 0 and the dtype's extremes)."""
    dt = input.dtype
    if not dt.is_floating_point:
        return apply(
            "NanToNumBackward0", _unary_fn, input, op=jnp.asarray, dt=dt.np_name
        )
    return apply(
        "NanToNumBackward0",
        _nan_to_num_fn,
        input,
        nan=float(nan),
        posinf=None if posinf is None else float(posinf),
        neginf=None if neginf is None else float(neginf),
        dt=dt.np_name,
    )


saves("NanToNumBackward0", (0, None))


@declare(method=True)
def frexp(input: Tensor) -> tuple[Tensor, Tensor]:
    """``(mantissa, exponent)``: ``input = mantissa * 2 ** exponent``, the
    exponent int32."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    exponent = _no_grad(_frexp_exponent_fn, input)
    mantissa = apply("FrexpBackward0", _frexp_mantissa_fn, input, exponent._value())
    return _FrexpType((mantissa, exponent))


class _FrexpType(tuple):
    """``torch.return_types.frexp(mantissa=..., exponent=...)``."""

    mantissa = property(lambda self: self[0])
    exponent = property(lambda self: self[1])

    def __repr__(self) -> str:
        return (
            f"torch.return_types.frexp(\nmantissa={self[0]!r},\nexponent={self[1]!r})"
        )


_FrexpType.__name__ = _FrexpType.__qualname__ = "frexp"
_FrexpType.__module__ = "torch.return_types"


@declare(method=True)
def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0)."""
    return _no_grad(_signbit_fn, input)


@declare(method=True)
def isreal(input: Tensor) -> Tensor:
    """True everywhere: compat has no complex dtypes."""
    return _no_grad(_isreal_fn, input)


def _int_pair(kernel: str):
    def fn(input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(kernel, input, other)
        dt = _promote(input, other)
        if dt.is_floating_point or dt is _dtype.bool:
            raise _not_implemented(f"{kernel}_cpu", dt)
        return _no_grad(_gcd_fn, input, other, lcm=kernel == "lcm", dt=dt.np_name)

    fn.__name__ = kernel
    return fn


gcd = _int_pair("gcd")
declare.alias("gcd", gcd, method=True, inplace=True)
lcm = _int_pair("lcm")
declare.alias("lcm", lcm, method=True, inplace=True)


@declare(method=True, inplace=True)
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 below zero, 1 above, ``values`` at zero (no derivative, as torch)."""
    for position, (arg, v) in enumerate((("input", input), ("values", values)), 1):
        if not isinstance(v, TensorBase):
            raise TypeError(
                f"heaviside(): argument '{arg}' (position {position}) must be Tensor, "
                f"not {type(v).__name__}"
            )
    if input.dtype is not values.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes."
        )
    return _elementwise("NotImplemented", _heaviside_fn, input, values, dt=input.dtype)


@declare(method=True)
def float_power(input: Any, exponent: Any) -> Tensor:
    """``pow`` in float64 (both operands cast to double first)."""
    from jaxblitz.compat.ops._arith import pow as pow_

    _require_a_tensor("float_power", input, exponent)
    input, exponent = _value(input), _value(exponent)
    as_double = [
        v.to(_dtype.float64) if isinstance(v, TensorBase) else float(v)
        for v in (input, exponent)
    ]
    return pow_(*as_double)


def polygamma_method(self: Tensor, n: int) -> Tensor:
    """``x.polygamma(n)`` is ``torch.polygamma(n, x)``."""
    return polygamma(n, self)


def float_power_base(self: Tensor, exponent: Any) -> Tensor:
    """``float_power`` for ``x.float_power_(exponent)``: x must be float64."""
    if self.dtype is not _dtype.float64:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {self.dtype.scalar_type} but "
            "the operation's result requires dtype Double"
        )
    return float_power(self, exponent)
