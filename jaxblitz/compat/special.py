"""Blitz 1, "Tensors": ``torch.special``, the special functions.

Most are compat's own functions under torch.special's names (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma`` ...). Others are
``jax.scipy.special``'s, with torch's dtype rules and, as a custom VJP, the
backward formula of torch's ``derivatives.yaml``. The orthogonal polynomials
follow their three-term recurrences, with torch's values at the ends of the
interval; the Bessel and Airy functions JAX lacks are in ``_bessel``. As in
torch, the polynomials, Bessel and Airy functions have no derivative. Every
function but ``softmax`` and ``log_softmax`` takes ``out=``.

The Bessel and Airy functions are computed in float64 whatever the dtype, and
``bessel_j0``, ``bessel_j1``, ``bessel_y0`` and ``bessel_y1`` agree with SciPy
to about 1e-15. PyTorch's CPU kernels are less accurate in two places, where
compat's values differ from PyTorch's: in float64 by up to 1e-6 for
4 < x < 9.1 (J and Y), and in float32 where the oscillation's phase is lost,
past |x| = 6.6e4 (J and Y) and below x = -125 (Ai).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import jax.scipy.special as jss

from jaxblitz.compat.ops import _bessel, _out, _polynomials
from jaxblitz.compat.ops._arrange import log_softmax, softmax  # no out=, as torch's
from jaxblitz.compat.ops._funnel import (
    _default_float,
    _elementwise,
    _no_grad,
    _not_implemented,
    _promote,
    _require_a_tensor,
    _to_out,
    _unary_fn,
    _value,
)
from jaxblitz.compat.ops._reduce import logsumexp as _logsumexp
from jaxblitz.compat.ops._special_math import (
    _no_input_derivative,
    _pairwise_fn,
    _torch_vjp,
    digamma,
    erfc,
    erfinv,
    i0,
    igamma,
    igammac,
    lgamma,
    logit,
    mvlgamma,
    polygamma,
    sinc,
    xlogy,
)
from jaxblitz.compat.ops._unary import (
    _floating_unary,
    erf,
    exp2,
    expm1,
    log1p,
    sigmoid,
)
from jaxblitz.compat.ops._unary import round as _round
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]


def _with_out(name: str, fn):
    """``torch.special.<name>(..., out=None)``: ``fn``'s result, written into
    ``out`` when given (a result it cannot be cast to is refused, as torch)."""

    @functools.wraps(fn)
    def call(*args: Any, out: Tensor | None = None, **kwargs: Any) -> Tensor:
        result = fn(*args, **kwargs)
        if out is not None and not _dtype.can_cast(result.dtype, out.dtype):
            raise RuntimeError(
                f"result type {result.dtype.scalar_type} can't be cast to the "
                f"desired output type {out.dtype.scalar_type}"
            )
        return _to_out(result, out)

    call.__name__ = call.__qualname__ = name
    call.__module__ = __name__
    return call


# ---------------------------------------------------------------------------
# Pure JAX functions with torch's derivatives
# ---------------------------------------------------------------------------


def _not_tiny(x):
    """torch's guard in i1 and i1e's backward: the slope at 0 is 1/2."""
    eps = jnp.finfo(x.dtype).eps
    big = jnp.abs(x) > eps
    return big, jnp.where(big, x, eps)


def _i0e_bwd(x, out, g):
    return (g * (jss.i1e(x) - jnp.sign(x) * out),)


def _i1_bwd(x, out, g):
    big, safe = _not_tiny(x)
    return (g * jnp.where(big, jss.i0(safe) - out / safe, 0.5),)


def _i1e_bwd(x, out, g):
    big, safe = _not_tiny(x)
    slope = jss.i0e(safe) - out * (jnp.sign(safe) + 1 / safe)
    return (g * jnp.where(big, slope, 0.5),)


def _ndtri_bwd(x, out, g):
    return (g * math.sqrt(2 * math.pi) * jnp.exp(out * out / 2),)


def _log_ndtr_bwd(x, out, g):
    return (g / math.sqrt(2 * math.pi) * jnp.exp(-(out + x * x / 2)),)


def _erfcx_bwd(x, out, g):
    return ((2 * x * out - 2 / math.sqrt(math.pi)) * g,)


def _entr(x):
    # torch: -inf below 0, 0 at 0, NaN stays NaN
    safe = jnp.where(x > 0, x, 1)
    value = jnp.where(x > 0, -safe * jnp.log(safe), jnp.where(x == 0, 0, -jnp.inf))
    return jnp.where(jnp.isnan(x), x, value).astype(x.dtype)


def _entr_bwd(x, out, g):
    return (g * -(1 + jnp.log(x)),)


def _ndtr(x):
    # torch: (1 + erf(x / sqrt(2))) / 2, in the input's dtype
    return (1 + jss.erf(x * jnp.asarray(math.sqrt(0.5), x.dtype))) * 0.5


def _xlog1py(x, y):
    # torch: NaN where y is NaN, 0 where x is 0, else x * log1p(y)
    return jnp.where(jnp.isnan(y), y, jnp.where(x == 0, 0, x * jnp.log1p(y)))


def _xlog1py_bwd(x, y, out, g):
    dx = jnp.where((x == 0) & (y <= -1), 0, _xlog1py(g, y))
    return dx, g * x / (y + 1)


def _zeta(x, q):
    # torch's (Cephes') domain, its checks in its order (the last applied first)
    value = jss.zeta(x, q)
    at_inf = jnp.where(q == 1, 1, jnp.where(q < 1, jnp.inf, jnp.nan))
    value = jnp.where(jnp.isposinf(x), at_inf, value)
    value = jnp.where((q <= 0) & (x != jnp.floor(x)), jnp.nan, value)
    value = jnp.where((q <= 0) & (q == jnp.floor(q)), jnp.inf, value)
    value = jnp.where(x < 1, jnp.nan, value)
    return jnp.where(x == 1, jnp.inf, value).astype(x.dtype)


def _zeta_bwd(x, q, out, g):  # torch: x has no derivative (see _zeta_op)
    return jnp.zeros_like(x), g * -x * _zeta(x + 1, q)


_zeta_v = _torch_vjp(_zeta, _zeta_bwd)


def _zeta_op(x, q):
    return _zeta_v(_no_input_derivative(x, what="zeta"), q)


_i0e = _torch_vjp(jss.i0e, _i0e_bwd)
_i1 = _torch_vjp(jss.i1, _i1_bwd)
_i1e = _torch_vjp(jss.i1e, _i1e_bwd)
_ndtri = _torch_vjp(jss.ndtri, _ndtri_bwd)
_log_ndtr = _torch_vjp(lambda x: jss.log_ndtr(x), _log_ndtr_bwd)
_erfcx = _torch_vjp(jss.erfcx, _erfcx_bwd)
_entr_v = _torch_vjp(_entr, _entr_bwd)
_xlog1py_v = _torch_vjp(_xlog1py, _xlog1py_bwd)


def _named(name: str, fn):
    fn.__name__ = fn.__qualname__ = name
    return _with_out(name, fn)


def _full_precision(name: str, dt: _dtype.dtype) -> None:
    """torch's CPU kernels of most special functions lack half precision."""
    if dt in (_dtype.float16, _dtype.bfloat16):
        raise _not_implemented(f"{name}_cpu", dt)


def _unary(name: str, grad_fn: str, op, *, halves: bool = True):
    """A special function of one tensor: integers and bools give the default
    float dtype (``halves=False``: float16 and bfloat16 are refused, as torch)."""
    value = _floating_unary(grad_fn, op)

    def fn(input: Tensor) -> Tensor:
        if not halves:
            _full_precision(name, input.dtype)
        return value(input)

    return _named(name, fn)


i0e = _unary("i0e", "SpecialI0EBackward0", _i0e)
i1 = _unary("i1", "SpecialI1Backward0", _i1)
i1e = _unary("i1e", "SpecialI1EBackward0", _i1e)
ndtr = _unary("ndtr", "MulBackward1", _ndtr)  # torch: composite of erf
ndtri = _unary("ndtri", "SpecialNdtriBackward0", _ndtri, halves=False)
log_ndtr = _unary("log_ndtr", "SpecialLogNdtrBackward0", _log_ndtr, halves=False)
erfcx = _unary("erfcx", "SpecialErfcxBackward0", _erfcx, halves=False)
entr = _unary("entr", "SpecialEntrBackward0", _entr_v)


def _pair(name: str, grad_fn: str, op, *, halves: bool = True):
    """A special function of two operands (one may be a number), promoted
    together, integers giving the default float dtype; the grad_fn's number
    says which operand is a number, as torch's does."""

    def fn(input: Any, other: Any) -> Tensor:
        _require_a_tensor(f"special_{name}", input, other)
        input, other = _value(input), _value(other)
        dt = _default_float(_promote(input, other))
        if not halves:
            _full_precision(name, dt)
        number = 1 if not isinstance(input, TensorBase) else 0
        if not isinstance(other, TensorBase):
            number = 2
        return _elementwise(
            f"{grad_fn}{number}", _pairwise_fn, input, other, op=op, dt=dt
        )

    return _named(name, fn)


xlog1py = _pair("xlog1py", "SpecialXlog1PyBackward", _xlog1py_v)
zeta = _pair("zeta", "SpecialZetaBackward", _zeta_op, halves=False)


# ---------------------------------------------------------------------------
# Without a derivative (torch's results do not require grad)
# ---------------------------------------------------------------------------


def _spherical_j0(x):
    # sin(x) / x, its Taylor series near 0, 0 at the infinities
    x2 = x * x
    series = 1.0
    for k in range(7, 0, -1):  # the series' terms in Horner form
        series = 1 - x2 / ((2 * k) * (2 * k + 1)) * series
    safe = jnp.where(jnp.abs(x) < 0.5, 1, x)
    value = jnp.where(jnp.abs(x) < 0.5, series, jnp.sin(safe) / safe)
    return jnp.where(jnp.isinf(x), 0, value).astype(x.dtype)


def _no_derivative_unary(name: str, op):
    def fn(input: Tensor) -> Tensor:
        dt = _default_float(input.dtype)
        _full_precision(name, dt)
        return _no_grad(_unary_fn, input, op=op, dt=dt.np_name)

    return _named(name, fn)


modified_bessel_i0 = _no_derivative_unary("modified_bessel_i0", jss.i0)
modified_bessel_i1 = _no_derivative_unary("modified_bessel_i1", jss.i1)
spherical_bessel_j0 = _no_derivative_unary("spherical_bessel_j0", _spherical_j0)


bessel_j0 = _no_derivative_unary("bessel_j0", functools.partial(_bessel.bessel_j, n=0))
bessel_j1 = _no_derivative_unary("bessel_j1", functools.partial(_bessel.bessel_j, n=1))
bessel_y0 = _no_derivative_unary("bessel_y0", functools.partial(_bessel.bessel_y, n=0))
bessel_y1 = _no_derivative_unary("bessel_y1", functools.partial(_bessel.bessel_y, n=1))
modified_bessel_k0 = _no_derivative_unary(
    "modified_bessel_k0", functools.partial(_bessel.bessel_k, n=0, scaled=False)
)
modified_bessel_k1 = _no_derivative_unary(
    "modified_bessel_k1", functools.partial(_bessel.bessel_k, n=1, scaled=False)
)
scaled_modified_bessel_k0 = _no_derivative_unary(
    "scaled_modified_bessel_k0", functools.partial(_bessel.bessel_k, n=0, scaled=True)
)
scaled_modified_bessel_k1 = _no_derivative_unary(
    "scaled_modified_bessel_k1", functools.partial(_bessel.bessel_k, n=1, scaled=True)
)
airy_ai = _no_derivative_unary("airy_ai", _bessel.airy_ai)


# ---------------------------------------------------------------------------
# Orthogonal polynomials p(x, n) (no derivative, as torch)
# ---------------------------------------------------------------------------


def _polynomial(name: str, op):
    def fn(input: Any, n: Any) -> Tensor:
        _require_a_tensor(f"special_{name}", input, n)
        input, n = _value(input), _value(n)
        dt = _default_float(_promote(input, n))
        _full_precision(name, dt)
        return _no_grad(_pairwise_fn, input, n, op=op, dt=dt.np_name)

    return _named(name, fn)


def _chebyshev(kind: str, shifted: bool):
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    op = functools.partial(_polynomials.chebyshev, kind=kind, shifted=shifted)
    return _polynomial(name, op)


chebyshev_polynomial_t = _chebyshev("t", shifted=False)
chebyshev_polynomial_u = _chebyshev("u", shifted=False)
chebyshev_polynomial_v = _chebyshev("v", shifted=False)
chebyshev_polynomial_w = _chebyshev("w", shifted=False)
shifted_chebyshev_polynomial_t = _chebyshev("t", shifted=True)
shifted_chebyshev_polynomial_u = _chebyshev("u", shifted=True)
shifted_chebyshev_polynomial_v = _chebyshev("v", shifted=True)
shifted_chebyshev_polynomial_w = _chebyshev("w", shifted=True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", _polynomials.hermite_h)
hermite_polynomial_he = _polynomial("hermite_polynomial_he", _polynomials.hermite_he)
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", _polynomials.laguerre_l)
legendre_polynomial_p = _polynomial("legendre_polynomial_p", _polynomials.legendre_p)


# ---------------------------------------------------------------------------
# compat's own functions under torch.special's names
# ---------------------------------------------------------------------------

expit = _with_out("expit", sigmoid)
gammaln = _with_out("gammaln", lgamma)
psi = _with_out("psi", digamma)
multigammaln = _with_out("multigammaln", mvlgamma)
gammainc = _with_out("gammainc", igamma)
gammaincc = _with_out("gammaincc", igammac)
logsumexp = _with_out("logsumexp", _logsumexp)
round = _with_out("round", _round)  # noqa: A001
digamma = _with_out("digamma", digamma)
erf = _with_out("erf", erf)
erfc = _with_out("erfc", erfc)
erfinv = _with_out("erfinv", erfinv)
exp2 = _with_out("exp2", exp2)
expm1 = _with_out("expm1", expm1)
i0 = _with_out("i0", i0)
log1p = _with_out("log1p", log1p)
logit = _with_out("logit", logit)
polygamma = _with_out("polygamma", polygamma)
sinc = _with_out("sinc", sinc)
xlogy = _with_out("xlogy", xlogy)

# torch's out= rules for the special functions it lists (ops/_out.py)
_out.give_out(globals(), "special.")
