"""Blitz 2, "autograd" (forward mode through a custom ``Function``): a
Function's outputs get the tangents its ``jvp`` staticmethod returns, given
one tangent per ``forward`` argument, as torch's custom Functions do."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd import _dual
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.tensor._tensor_base import TensorBase


def _differentiable(t: Any) -> bool:
    return isinstance(t, TensorBase) and (
        t.dtype.is_floating_point or t.dtype.np.kind == "c"
    )


def attach(cls: type, ctx: Any, args: tuple, result: Any) -> None:
    """Call ``cls.jvp(ctx, *tangents)`` -- per argument its tangent, zeros for
    a floating tensor without one, None for anything else -- and give each
    floating output the tangent returned for it."""
    grads = []
    for a in args:
        t = _dual.tangent(a)
        if t is None and _differentiable(a):
            with _dual.off(), no_grad():
                t = a.new_zeros(a.shape)
        grads.append(t)
    ctx._in_jvp = ctx.__dict__.get("saved_for_forward", ())
    try:
        with _dual.off(), no_grad():
            got = cls.jvp(ctx, *grads)
    finally:
        del ctx._in_jvp
    outputs = result if isinstance(result, tuple) else (result,)
    got = got if isinstance(got, tuple) else (got,)
    if len(got) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients "
            f"(expected {len(outputs)} but got {len(got)})"
        )
    for out, g in zip(outputs, got, strict=True):
        if not _differentiable(out) or g is None:
            continue
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than "
                "that of the original Tensor, this is not supported. Tensor is of "
                f"size {list(out.shape)} while the given forward gradient is of "
                f"size {list(g.shape)}."
            )
        _dual.set_tangent(out, g)
