"""Programs made only of constants, evaluated with NumPy instead of compiled.

An optimizer's ``init`` (Optax's ``tx.init``) builds its state from the
parameters' shapes alone: zeros, step counts, the hyperparameters' values. As an
XLA program it was compiled on the first step's critical path (BENCHMARKS.md);
its jaxpr is a handful of ``broadcast_in_dim``s of literals, which NumPy
computes at once. :func:`plan` traces a function once per
input shapes and keeps its jaxpr when every equation is one NumPy does exactly
(the same IEEE float32 products and sums, no transcendental functions) and none
reads an input's values; :func:`run` evaluates it. Anything else: ``None``, and
the caller compiles as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.extend import core as jex_core


def _broadcast_in_dim(x, *, shape, broadcast_dimensions, **_):
    dims = [1] * len(shape)
    for axis, size in zip(broadcast_dimensions, np.shape(x), strict=True):
        dims[axis] = size
    return np.broadcast_to(np.reshape(x, dims), shape)


def _convert(x, *, new_dtype, **_):
    return np.asarray(x).astype(new_dtype)


def _reshape(x, *, new_sizes, **_):
    return np.reshape(x, new_sizes)


def _same(x, **_):
    return x


_OPS: dict[str, Callable] = {
    "broadcast_in_dim": _broadcast_in_dim,
    "convert_element_type": _convert,
    "reshape": _reshape,
    "squeeze": lambda x, *, dimensions, **_: np.squeeze(x, tuple(dimensions)),
    "copy": _same,
    "copy_p": _same,
    "add": lambda x, y, **_: np.add(x, y),
    "sub": lambda x, y, **_: np.subtract(x, y),
    "mul": lambda x, y, **_: np.multiply(x, y),
    "neg": lambda x, **_: np.negative(x),
    "max": lambda x, y, **_: np.maximum(x, y),
    "min": lambda x, y, **_: np.minimum(x, y),
}
_NESTED = ("pjit", "jit", "closed_call")  # their jaxpr is evaluated in place


def _evaluable(jaxpr: Any, inputs: set) -> bool:
    """Whether every equation is in ``_OPS`` (or a nested jaxpr of such) and
    none reads a variable of ``inputs`` (values only known at run time)."""
    for eqn in jaxpr.eqns:
        if any(not isinstance(v, jex_core.Literal) and v in inputs for v in eqn.invars):
            return False
        name = eqn.primitive.name
        if name in _NESTED:
            if not _evaluable(eqn.params["jaxpr"].jaxpr, set()):
                return False
        elif name not in _OPS or not _exact(eqn):
            return False
    return True


def _exact(eqn: Any) -> bool:
    """Not a float to integer conversion (NumPy's differs from XLA's for NaN
    and out-of-range values)."""
    if eqn.primitive.name != "convert_element_type":
        return True
    source = np.dtype(eqn.invars[0].aval.dtype)
    target = np.dtype(eqn.params["new_dtype"])
    return not (source.kind in "fc" and target.kind in "iub")


def plan(fn: Callable, *args: Any) -> tuple | None:
    """``fn(*args)``'s jaxpr and output tree where NumPy can evaluate it (see the
    module), else None. Traced in x64 mode, as compat's programs are."""
    closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
    if not _evaluable(closed.jaxpr, set(closed.jaxpr.invars)):
        return None
    return closed, jax.tree.structure(shapes)


def _eval(jaxpr: Any, env: dict) -> list:
    """``jaxpr``'s outputs, its constants (and a nested one's inputs) in ``env``."""

    def read(v):
        return v.val if isinstance(v, jex_core.Literal) else env[v]

    for eqn in jaxpr.eqns:
        args = [read(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in _NESTED:
            inner = eqn.params["jaxpr"]
            outs = _eval(
                inner.jaxpr,
                {
                    **dict(zip(inner.jaxpr.constvars, inner.consts, strict=True)),
                    **dict(zip(inner.jaxpr.invars, args, strict=True)),
                },
            )
        else:
            outs = [_OPS[name](*args, **eqn.params)]
        for v, out in zip(eqn.outvars, outs, strict=True):
            env[v] = np.asarray(out, dtype=v.aval.dtype)
    return [read(v) for v in jaxpr.outvars]


def run(planned: tuple) -> Any:
    """The output of a :func:`plan`: NumPy arrays (fresh, writable) in ``fn``'s
    output tree."""
    closed, treedef = planned
    consts = [np.asarray(c) for c in closed.consts]
    outs = _eval(closed.jaxpr, dict(zip(closed.jaxpr.constvars, consts, strict=True)))
    return jax.tree.unflatten(treedef, [np.array(o) for o in outs])
