"""Blitz 1, "Tensors": the Bessel and Airy functions of ``torch.special`` that
``jax.scipy.special`` lacks, as pure JAX functions evaluated in float64: the
power series near 0 and, further out, the asymptotic expansions (J, Y, Ai) or
the trapezoidal rule on ``K_v(x) = int_0^inf exp(-x cosh t) cosh(v t) dt``,
which converges geometrically for this smooth, fast-decaying integrand."""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

_EULER = 0.57721566490153286061
_TERMS = 40  # power-series terms: past |x| = 12 they are below float64's epsilon
_SERIES_J = 12.0  # |x| where J and Y switch to the asymptotic expansion
_SERIES_K = 2.0  # x where K switches to the integral
_SERIES_AI = 6.0  # |x| where Ai switches to the asymptotic expansion
_NODES = 96  # trapezoidal nodes for K


def _psi(k: int) -> float:
    """The digamma function at the positive integer ``k``."""
    return -_EULER + math.fsum(1 / j for j in range(1, k))


def _horner(z, coefficients):
    acc = jnp.zeros_like(z)
    for c in reversed(coefficients):
        acc = acc * z + c
    return acc


def _series(n: int, sign: int, weight=lambda k: 1.0) -> list[float]:
    """Coefficients of ``sum_k weight(k) (sign z)^k / (k! (n + k)!)``."""
    return [
        sign**k * weight(k) / (math.factorial(k) * math.factorial(n + k))
        for k in range(_TERMS)
    ]


def _j_series(x, n: int):
    # J_n(x) = (x/2)^n sum_k (-x^2/4)^k / (k! (n + k)!)
    return (x / 2) ** n * _horner(x * x / 4, _series(n, -1))


def _y_series(x, n: int):
    # A&S 9.1.11 for n = 0, 1
    z = x * x / 4
    psi_sum = _series(n, -1, lambda k: _psi(k + 1) + _psi(n + k + 1))
    value = 2 / math.pi * jnp.log(x / 2) * _j_series(x, n)
    value = value - (x / 2) ** n / math.pi * _horner(z, psi_sum)
    return value - 2 / (math.pi * x) if n == 1 else value


def _hankel(x, n: int):
    """(P, Q, chi) of the asymptotic expansions of J_n and Y_n (A&S 9.2.5)."""
    mu = 4.0 * n * n
    p = q = jnp.zeros_like(x)
    a, term = 1.0, jnp.ones_like(x)
    for k in range(24):
        sign = -1 if (k // 2) % 2 else 1
        if k % 2:
            q = q + sign * a * term
        else:
            p = p + sign * a * term
        a *= (mu - (2 * k + 1) ** 2) / ((k + 1) * 8)
        term = term / x
    return p, q, x - (n / 2 + 0.25) * math.pi


def bessel_j(x, *, n: int):
    """J_n(x), n = 0 or 1; NaN at the infinities, as torch."""
    dt, x = x.dtype, x.astype(jnp.float64)
    ax = jnp.abs(x)
    small = ax <= _SERIES_J
    near = _j_series(jnp.where(small, x, 0), n)
    far_x = jnp.where(small, 2 * _SERIES_J, ax)
    p, q, chi = _hankel(far_x, n)
    far = jnp.sqrt(2 / (math.pi * far_x)) * (p * jnp.cos(chi) - q * jnp.sin(chi))
    if n == 1:
        far = jnp.sign(x) * far
    return jnp.where(small, near, far).astype(dt)


def bessel_y(x, *, n: int):
    """Y_n(x), n = 0 or 1: -inf at 0, NaN below 0 and at +inf, as torch."""
    dt, x = x.dtype, x.astype(jnp.float64)
    small = x <= _SERIES_J
    near = _y_series(jnp.where(small & (x > 0), x, 1), n)
    far_x = jnp.where(small, 2 * _SERIES_J, x)
    p, q, chi = _hankel(far_x, n)
    far = jnp.sqrt(2 / (math.pi * far_x)) * (p * jnp.sin(chi) + q * jnp.cos(chi))
    value = jnp.where(small, near, far)
    value = jnp.where(x == 0, -jnp.inf, value)
    return jnp.where(x < 0, jnp.nan, value).astype(dt)


def _k_series(x, n: int):
    # A&S 9.6.13 and 9.6.11 (n = 1), with I_n's own series
    z = x * x / 4
    i_n = (x / 2) ** n * _horner(z, _series(n, 1))
    psi_sum = _series(n, 1, lambda k: _psi(k + 1) + _psi(n + k + 1))
    if n == 0:
        return -jnp.log(x / 2) * i_n + _horner(z, psi_sum) / 2
    return 1 / x + jnp.log(x / 2) * i_n - x / 4 * _horner(z, psi_sum)


def _k_scaled_integral(x, n: int):
    """exp(x) K_n(x) by the trapezoidal rule, cut where the integrand is below
    exp(-50): x (cosh t - 1) = 2 x sinh(t / 2)^2 = 50."""
    top = 2 * jnp.arcsinh(jnp.sqrt(25 / x))
    h = top / _NODES

    def node(i, total):
        t = i * h
        f = jnp.exp(-2 * x * jnp.sinh(t / 2) ** 2) * jnp.cosh(n * t)
        return total + jnp.where((i == 0) | (i == _NODES), f / 2, f)

    return lax.fori_loop(0, _NODES + 1, node, jnp.zeros_like(x)) * h


def bessel_k(x, *, n: int, scaled: bool):
    """K_n(x) (``scaled``: exp(x) K_n(x)), n = 0 or 1: inf at 0, NaN below."""
    dt, x = x.dtype, x.astype(jnp.float64)
    small = x <= _SERIES_K
    near_x = jnp.where(small & (x > 0), x, 1)
    near = _k_series(near_x, n) * (jnp.exp(near_x) if scaled else 1)
    far_x = jnp.where(small | jnp.isinf(x), 2 * _SERIES_K, x)
    far = _k_scaled_integral(far_x, n) * (1 if scaled else jnp.exp(-far_x))
    value = jnp.where(small, near, jnp.where(jnp.isinf(x), 0, far))
    value = jnp.where(x == 0, jnp.inf, value)
    return jnp.where(x < 0, jnp.nan, value).astype(dt)


def _airy_series(x):
    # Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f and g series in x^3 (A&S 10.4.2)
    f, g, fk, gk = [], [], 1.0, 1.0
    for k in range(_TERMS):
        f.append(fk)
        g.append(gk)
        fk /= (3 * k + 3) * (3 * k + 2)
        gk /= (3 * k + 3) * (3 * k + 4)
    ai0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))
    ai1 = -1 / (3 ** (1 / 3) * math.gamma(1 / 3))
    w = x * x * x
    return ai0 * _horner(w, f) + ai1 * x * _horner(w, g)


def _airy_terms(zeta):
    """u_k / zeta^k of Ai's asymptotic expansions (A&S 10.4.58-60), k < 20."""
    u, terms, power = 1.0, [], jnp.ones_like(zeta)
    for k in range(20):
        terms.append(u * power)
        k1 = k + 1
        u *= (6 * k1 - 5) * (6 * k1 - 3) * (6 * k1 - 1) / (216 * k1 * (2 * k1 - 1))
        power = power / zeta
    return terms


def airy_ai(x):
    """Ai(x); NaN at the infinities, as torch."""
    dt, x = x.dtype, x.astype(jnp.float64)
    ax = jnp.abs(x)
    small = ax <= _SERIES_AI
    near = _airy_series(jnp.where(small, x, 0))
    far_x = jnp.where(small | jnp.isinf(x), 2 * _SERIES_AI, ax)
    zeta = 2 / 3 * far_x**1.5
    terms = _airy_terms(zeta)
    decaying = sum((-1) ** k * t for k, t in enumerate(terms))
    right = jnp.exp(-zeta) / (2 * math.sqrt(math.pi) * far_x**0.25) * decaying
    p = sum((-1) ** k * t for k, t in enumerate(terms[0::2]))
    q = sum((-1) ** k * t for k, t in enumerate(terms[1::2]))
    phase = zeta + math.pi / 4
    left = (jnp.sin(phase) * p - jnp.cos(phase) * q) / (
        math.sqrt(math.pi) * far_x**0.25
    )
    far = jnp.where(x > 0, right, left)
    value = jnp.where(small, near, far)
    return jnp.where(jnp.isinf(x), jnp.nan, value).astype(dt)
