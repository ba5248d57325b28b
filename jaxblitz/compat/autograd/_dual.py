"""Blitz 2, "autograd" (forward mode): the state behind
``torch.autograd.forward_ad`` -- the live dual level and each tensor's tangent --
and the funnel's side of it: an op with a dual input computes its output's
tangent with ``jax.jvp`` of the same pure function it ran for the value, so
every op that goes through the funnel carries tangents, derived by JAX.

A tangent lives in the dual tensor's ``__dict__`` as ``(level, Tensor)``; it
counts only while that level is the live one, so exiting the level drops every
tangent made in it at once (as torch deletes them) without visiting tensors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat import lazy
from jaxblitz.compat.tensor import _layout
from jaxblitz.compat.tensor._dtype import call_x64
from jaxblitz.compat.tensor._tensor_base import TensorBase


class Level:
    """One ``enter_dual_level()``: its index (torch's, always 0: levels do not
    nest) and, by identity, the tangents made under it."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


# [the live level or None, whether ops propagate tangents]: torch's forward
# grad mode is off inside a custom Function's forward and jvp.
state: list[Any] = [None, True]

# The aten names of ops compat computes with ``_without_derivative`` seen while
# tracing a tangent: torch has no forward derivative for them either.
underived: list[str] = []


def live() -> bool:
    """Whether ops must look for tangents now (a level is live and enabled)."""
    return state[0] is not None and state[1]


class off:  # noqa: N801 -- a context manager, named as torch's modes
    """Ops inside carry no tangents (torch's forward grad mode off)."""

    def __enter__(self) -> None:
        self.prev, state[1] = state[1], False

    def __exit__(self, *exc: object) -> None:
        state[1] = self.prev


def not_nested() -> None:
    """torch.func's forward-mode transforms are a dual level of their own."""
    if state[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")


def tangent(t: Any) -> TensorBase | None:
    """``t``'s tangent at the live level, or None."""
    if not isinstance(t, TensorBase):
        return None
    pair = t.__dict__.get("_fw")
    if pair is None or pair[0] is not state[0]:
        return None
    return pair[1]


def set_tangent(t: TensorBase, tan: TensorBase | None) -> None:
    """Make ``tan`` ``t``'s tangent at the live level (None: drop it)."""
    if tan is None:
        t.__dict__.pop("_fw", None)
    else:
        t.__dict__["_fw"] = (state[0], tan)


def tangents(args: Sequence[Any]) -> list | None:
    """Per arg, its tangent's array (None where it has none); None if no arg
    has one. Called by the funnel only while :func:`live`."""
    found = [tangent(a) for a in args]
    if all(f is None for f in found):
        return None
    return [None if f is None else f._value() for f in found]


def _jvp_impl(*arrays: Any, fn: Callable, static: tuple, which: tuple) -> Any:
    """The tangent of ``fn(*primals, **static)`` along the tangents of the
    primals at positions ``which`` (``arrays``: the primals, then those
    tangents); the others held fixed."""
    kwargs = dict(static)
    n = len(arrays) - len(which)
    primals, tans = list(arrays[:n]), arrays[n:]
    pre = kwargs.pop("_pre", ())  # (graph._operands' transposed 2-D views)
    primals = [a.T if i in pre else a for i, a in enumerate(primals)]

    def partial_fn(*diff: Any) -> Any:
        full = list(primals)
        for i, d in zip(which, diff, strict=True):
            full[i] = d
        return fn(*full, **kwargs)

    diff = [primals[i] for i in which]
    tans = [
        jnp.asarray(t).astype(jnp.result_type(p))
        for t, p in zip(tans, diff, strict=True)
    ]
    return jax.jvp(partial_fn, diff, tans)[1]


_jvp = lazy.jit(_jvp_impl, static_argnames=("fn", "static", "which"))


def _aten(name: str) -> str:
    """torch's op name from a node's: ``FloorDivideBackward0`` -> ``floor_divide``."""
    stem = re.sub(r"Backward\d*$", "", name)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()


def _walk(jaxpr: Any) -> bool:
    """Whether ``jaxpr`` (or one nested in it) applies a ``custom_vjp``
    function's linearization: JAX derives no tangent for it, and says so only
    when the program is compiled (far from the op, in lazy mode)."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "custom_lin":
            return True
        for param in eqn.params.values():
            for sub in param if isinstance(param, tuple | list) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and _walk(inner):
                    return True
    return False


# per (fn, static, which, operand shapes and dtypes): why JAX derives no tangent
# (None where it does)
_REFUSALS: dict[tuple, str | None] = {}


def _refusal(name: str, arrays: Sequence[Any], key: tuple) -> str | None:
    fn, items, which = key
    specs = [lazy.spec(a) for a in arrays]
    sigs = tuple((jnp.shape(a), jnp.result_type(a)) for a in specs)
    full = (*key, sigs)
    if full in _REFUSALS:
        return _REFUSALS[full]
    underived.clear()
    jaxpr = call_x64(
        jax.make_jaxpr(lambda *a: _jvp_impl(*a, fn=fn, static=items, which=which)),
        *specs,
    )
    why = None
    if _walk(jaxpr.jaxpr):
        if underived:  # torch has no forward derivative for it either
            why = f"Trying to use forward AD with aten::{underived[0]} that does not "
            why += "support it."
        else:
            why = (
                f"Trying to use forward AD with aten::{_aten(name)}: its kernel in "
                "jaxblitz.compat has a hand-written backward and no forward "
                "derivative, so forward-mode AD through it is not supported"
            )
    _REFUSALS[full] = why
    return why


def propagate(
    name: str, fn: Callable, arrays: Sequence[Any], items: tuple, tans: list, out: Any
) -> None:
    """Give ``out`` (the funnel's result of ``fn`` on ``arrays``) its tangent."""
    if not (out.dtype.is_floating_point or out.dtype.np.kind == "c"):
        return  # an integer or bool result carries no tangent, as in torch
    which = tuple(i for i, t in enumerate(tans) if t is not None)
    operands = [*arrays, *(tans[i] for i in which)]
    why = _refusal(name, operands, (fn, items, which))
    if why is not None:
        raise NotImplementedError(why)
    result = call_x64(_jvp, *operands, fn=fn, static=items, which=which)
    set_tangent(out, TensorBase._wrap(result))


def _write_impl(base: Any, value: Any, *, layout: Any) -> Any:
    return _layout.write(base, value, layout=layout)


_write = lazy.jit(_write_impl, static_argnames=("layout",))


def _zeros(t: TensorBase) -> Any:
    return jnp.zeros(tuple(t.shape), t.dtype.np)


def written(t: TensorBase, result: TensorBase) -> None:
    """After an in-place op wrote ``result`` into ``t``: ``t``'s tangent is
    ``result``'s (zeros if it has none, where ``t`` or its base was dual), and
    a base's tangent takes it in the view's elements, as in torch."""
    new, base = tangent(result), t._base
    if new is None:
        if tangent(t) is None and (base is None or tangent(base) is None):
            return
        new = TensorBase._wrap(call_x64(_zeros, t))
    elif new.dtype is not t.dtype:
        new = new.to(t.dtype)  # type: ignore[attr-defined]
    set_tangent(t, new)
    if base is not None:
        old = tangent(base)
        before = call_x64(_zeros, base) if old is None else old._value()
        merged = call_x64(_write, before, new._value(), layout=t._place())
        set_tangent(base, TensorBase._wrap(merged))
