"""Blitz 1, "Tensors": the orthogonal polynomials of ``torch.special`` as pure
JAX functions of ``(x, n)``: ``n`` truncated towards zero as torch casts it, 0
for a negative degree, the three-term recurrence run to each element's degree,
and torch's closed forms at the ends of the interval and, for the Chebyshev
polynomials of high degree inside it, the trigonometric ones."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _recurrence(x, n, first, step):
    """p_n(x) from p_0 = 1, p_1 = ``first`` and p_{k+1} = ``step(k, p_k,
    p_{k-1})``, run to the largest ``n`` (each element stops at its own)."""
    top = jnp.max(jnp.where(n > 1, n, 1), initial=1)

    def body(c):
        k, p, q = c
        go = k < n
        r = step(k, q, p)
        return k + 1, jnp.where(go, q, p), jnp.where(go, r, q)

    start = (jnp.ones((), x.dtype), jnp.ones_like(x), jnp.broadcast_to(first, x.shape))
    _, _, q = jax.lax.while_loop(lambda c: c[0] < top, body, start)
    return jnp.where(n == 0, 1, q)


def _degree(x, n):
    """(x, n) broadcast, n as torch casts it (towards zero), -1 (a zero result)
    where it has no integer value."""
    n = jnp.trunc(n)
    n = jnp.where(jnp.isfinite(n), n, -1).astype(x.dtype)
    return jnp.broadcast_arrays(x, n)


def _even(n):
    return jnp.fmod(n, 2) == 0


def _three_term(x, n, first, step, ends=None):
    """The polynomial of the recurrence (``first(x)``, ``step(x, k, q, p)``);
    ``ends(x, n)`` its value at x = +-1 where torch uses a closed form."""
    x, n = _degree(x, n)
    value = _recurrence(x, n, first(x), lambda k, q, p: step(x, k, q, p))
    if ends is not None:
        value = jnp.where(jnp.abs(x) == 1, ends(x, n), value)
    return jnp.where(n < 0, 0, value).astype(x.dtype)


def _chebyshev_forms(kind: str, y, n):
    """(value at y = +-1, trigonometric form inside (-1, 1)) of T, U, V, W."""
    theta = jnp.arccos(jnp.clip(y, -1, 1))
    sign = jnp.where(_even(n), 1, -1)
    if kind == "t":
        return jnp.where(y > 0, 1, sign), jnp.cos(n * theta)
    if kind == "u":
        s = jnp.sin(theta)
        trig = jnp.where(
            s != 0,
            jnp.sin((n + 1) * theta) / jnp.where(s != 0, s, 1),
            (n + 1) * jnp.cos((n + 1) * theta) / y,
        )
        return jnp.where(y > 0, 1, sign) * (n + 1), trig
    if kind == "v":
        end = jnp.where(y > 0, 1, sign * (n + n + 1))
        c = jnp.cos(theta / 2)
        trig = jnp.cos((n + 0.5) * theta) / jnp.where(c != 0, c, 1)
        return end, jnp.where(jnp.sin(theta / 2) != 1, trig, sign * (n + n + 1))
    end = jnp.where(y > 0, n + n + 1, sign)
    s = jnp.sin(theta / 2)
    trig = jnp.sin((n + 0.5) * theta) / jnp.where(s != 0, s, 1)
    return end, jnp.where(jnp.cos(theta / 2) != 1, trig, end)


# the degree past which torch switches to the trigonometric form
_TRIG_FROM = {"t": 6, "u": 8, "v": 8, "w": 8}
_TRIG_FROM_SHIFTED = {"t": 6, "u": 6, "v": 6, "w": 4}
_FIRST = {
    "t": lambda y: y,
    "u": lambda y: y + y,
    "v": lambda y: y + y - 1,
    "w": lambda y: y + y + 1,
}


def chebyshev(x, n, *, kind: str, shifted: bool):
    """The Chebyshev polynomials T, U, V, W of ``x`` (``shifted``: of 2x - 1)."""
    x, n = _degree(x, n)
    y = x + x - 1 if shifted else x
    value = _recurrence(y, n, _FIRST[kind](y), lambda k, q, p: (y + y) * q - p)
    end, trig = _chebyshev_forms(kind, y, n)
    start = (_TRIG_FROM_SHIFTED if shifted else _TRIG_FROM)[kind]
    value = jnp.where((n > start) & (jnp.abs(y) < 1), trig, value)
    value = jnp.where(jnp.abs(y) == 1, end, value)
    return jnp.where(n < 0, 0, value).astype(x.dtype)


def hermite_h(x, n):
    """The physicists' Hermite polynomials."""
    return _three_term(
        x, n, lambda x: x + x, lambda x, k, q, p: (x + x) * q - 2 * k * p
    )


def hermite_he(x, n):
    """The probabilists' Hermite polynomials."""
    return _three_term(x, n, lambda x: x, lambda x, k, q, p: x * q - k * p)


def laguerre_l(x, n):
    """The Laguerre polynomials (1 at x = 0, as torch)."""

    def step(x, k, q, p):
        return ((k + k + (1 - x)) * q - k * p) / (k + 1)

    x, n = _degree(x, n)
    value = _three_term(x, n, lambda x: 1 - x, step)
    return jnp.where((x == 0) & (n >= 0), 1, value).astype(x.dtype)


def legendre_p(x, n):
    """The Legendre polynomials."""

    def step(x, k, q, p):
        return ((k + k + 1) * x * q - k * p) / (k + 1)

    def ends(x, n):
        return jnp.where((x > 0) | _even(n), 1, -1)

    return _three_term(x, n, lambda x: x, step, ends)
