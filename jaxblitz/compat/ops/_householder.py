"""Blitz 1, "Tensors": torch's Householder QR before ``torch.linalg`` --
``torch.geqrf`` (LAPACK's reflectors and ``tau``), ``orgqr`` (their ``Q``, as
``torch.linalg.householder_product``) and ``ormqr`` (a matrix multiplied by that
``Q``) and their Tensor methods. The products are written out reflector by
reflector so that JAX differentiates them, as torch differentiates
``orgqr``/``ormqr``; ``geqrf`` has no derivative, in torch as here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._decompositions import _floating, _return_type
from jaxblitz.compat.ops._funnel import _not_implemented, _require_tensors

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_Geqrf = _return_type("geqrf", ("a", "tau"))


def _geqrf_raw(x, which):
    h, tau = jnp.linalg.qr(x, mode="raw")  # NumPy's raw mode: h is a^T
    return jnp.swapaxes(h, -1, -2) if which == 0 else tau


def _geqrf_fwd(x, which):
    return _geqrf_raw(x, which), None


def _geqrf_bwd(which, saved, g):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


# torch records geqrf but has no derivative: backward through it raises.
_geqrf_fn = jax.custom_vjp(_geqrf_raw, nondiff_argnums=(1,))
_geqrf_fn.defvjp(_geqrf_fwd, _geqrf_bwd)


def _geqrf(x, *, which):
    return _geqrf_fn(x, which)


@declare(method=True)
def geqrf(input: Tensor):
    """``torch.geqrf``: LAPACK's Householder QR, ``(a, tau)``; backward through
    it raises, as torch has no derivative for it."""
    _require_tensors("geqrf", input)
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not input.dtype.is_floating_point:
        raise _not_implemented("geqrf_cpu", input.dtype)
    return _Geqrf(
        apply("GeqrfBackward0", _geqrf, input, which=0),
        apply("GeqrfBackward0", _geqrf, input, which=1),
    )


def _reflect(c, a, tau, i, *, left):
    """``H_i c`` (``left``) or ``c H_i``, ``H_i = I - tau_i v_i v_i^T`` with
    ``v_i`` column ``i`` of ``a`` below the diagonal and 1 on it."""
    m = a.shape[-2]
    v = jnp.where(jnp.arange(m) > i, a[..., :, i], 0.0)
    v = v.at[..., i].set(1.0)
    t = tau[..., i, None, None]
    if left:
        return c - t * v[..., :, None] * (v[..., None, :] @ c)
    return c - t * (c @ v[..., :, None]) * v[..., None, :]


def _apply_q(c, a, tau, *, left, transpose):
    """``Q c``, ``Q^T c``, ``c Q`` or ``c Q^T`` with ``Q = H_0 H_1 ... H_{k-1}``."""
    k = tau.shape[-1]
    first_last = left == transpose  # Q^T c and c Q apply H_0 first
    for i in range(k) if first_last else reversed(range(k)):
        c = _reflect(c, a, tau, i, left=left)
    return c


def _orgqr_fn(a, tau):
    m, n = a.shape[-2:]
    eye = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), (*a.shape[:-2], m, n))
    return _apply_q(eye, a, tau, left=True, transpose=False)


def _ormqr_fn(a, tau, c, *, left, transpose):
    return _apply_q(c, a, tau, left=left, transpose=transpose)


def _householder_checks(what: str, input: Tensor, tau: Tensor) -> None:
    _require_tensors(what, input, tau)
    if input.dim() < 2:
        raise RuntimeError(f"{what}: input must have at least 2 dimensions.")
    if tau.dim() != input.dim() - 1 or tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise NotImplementedError(
            f"{what} with tau of shape {list(tau.shape)} for input of shape "
            f"{list(input.shape)} is not supported by jaxblitz.compat (tau must be "
            "(*, k) for input (*, m, n))"
        )
    if input.dtype is not tau.dtype:
        raise RuntimeError(
            f"{what}: tau dtype {tau.dtype} does not match input dtype {input.dtype}"
        )
    _floating(what, input)


@declare(method=True)
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``torch.orgqr(a, tau)``: the first ``n`` columns of ``Q`` from
    ``geqrf``'s reflectors (``torch.linalg.householder_product``)."""
    return householder_product(input, input2, "torch.orgqr")


def householder_product(input: Tensor, input2: Tensor, called: str) -> Tensor:
    """``orgqr`` as ``called`` (the name its refusal gives)."""
    what = "torch.linalg.householder_product"
    _householder_checks(what, input, input2)
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(
            f"{what}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if input.shape[-1] < input2.shape[-1]:
        raise RuntimeError(
            f"{what}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if (
        not input2.shape[-1]
        and is_grad_enabled()
        and (input.requires_grad or input2.requires_grad)
    ):  # torch's backward then gives no gradient at all, where a VJP gives zeros
        raise NotImplementedError(
            f"{called} with no reflectors (an empty tau) on tensors that require "
            "grad is not supported by jaxblitz.compat (torch's gradients there are "
            "None); compute it under torch.no_grad()"
        )
    return apply("LinalgHouseholderProductBackward0", _orgqr_fn, input, input2)


saves("LinalgHouseholderProductBackward0", (0, None), (1, None), ("result", None))


@declare(method=True)
def ormqr(
    input: Tensor,
    input2: Tensor,
    input3: Tensor,
    left: bool = True,
    transpose: bool = False,
) -> Tensor:
    """``torch.ormqr(a, tau, other)``: ``other`` multiplied by ``Q`` (the
    product of ``geqrf``'s reflectors) on the left or right, transposed or not."""
    what = "torch.ormqr"
    _householder_checks(what, input, input2)
    _require_tensors(what, input3)
    m = input.shape[-2]
    side = -2 if left else -1
    if input3.dim() < 2 or input3.shape[side] != m:
        raise RuntimeError(
            f"{what}: other.shape[{side}] must be equal to input.shape[-2]"
        )
    if input2.shape[-1] > m:
        raise RuntimeError(
            f"{what}: tau.shape[-1] must be less than or equal to input.shape[-2]"
        )
    if tuple(input3.shape[:-2]) != tuple(input.shape[:-2]):
        raise NotImplementedError(
            f"{what} with other's batch shape {list(input3.shape[:-2])} unlike "
            f"input's {list(input.shape[:-2])} is not supported by jaxblitz.compat"
        )
    if not input3.numel():  # torch's backward gives a and tau no gradient
        input, input2 = input.detach(), input2.detach()
    return apply(
        "OrmqrBackward0",
        _ormqr_fn,
        input,
        input2,
        input3,
        left=bool(left),
        transpose=bool(transpose),
    )


saves("OrmqrBackward0", (0, None), (1, None), (2, None), ("result", None))
