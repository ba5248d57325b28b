"""Blitz 2, "autograd" (function transforms on the tape): a ``torch.func``
transform of tensors that require grad, recorded as one node whose backward is
JAX's VJP of the whole transform, so that ``backward()`` reaches those tensors
(an ensemble's stacked parameters, from ``stack_module_state``), as in torch.

torch records the ops inside the transform one by one; here the node is named
``FuncTransformBackward``, and differentiating its gradient again
(``create_graph=True``) is refused, as for any custom Function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat._func_trees import arrays, is_tensor, ordered, plain
from jaxblitz.compat.autograd.function import Function
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase


def _differentiable(dtype: Any) -> bool:
    return jnp.issubdtype(dtype, jnp.floating)


class FuncTransform(Function):
    """The transform over its flat tensor inputs; its outputs flat too."""

    @staticmethod
    def forward(ctx: Any, flat: Callable, *inputs: Any) -> Any:
        with x64(True):
            outs, ctx.vjp = jax.vjp(flat, *[t._data for t in inputs])
        ctx.outs = [(o.shape, o.dtype) for o in outs]
        result = tuple(TensorBase._wrap(o) for o in outs)
        ctx.mark_non_differentiable(
            *[
                r
                for r, o in zip(result, outs, strict=True)
                if not _differentiable(o.dtype)
            ]
        )
        return result

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        cotangents: list[Any] = []
        for g, (shape, dtype) in zip(grads, ctx.outs, strict=True):
            if not _differentiable(dtype):
                cotangents.append(np.zeros(shape, jax.dtypes.float0))
            elif g is None:
                cotangents.append(jnp.zeros(shape, dtype))
            else:
                cotangents.append(g._data.astype(dtype))
        with x64(True):
            found = ctx.vjp(cotangents)
        return (
            None,
            *[
                None if g.dtype == jax.dtypes.float0 else TensorBase._wrap(g)
                for g in found
            ],
        )


def recorded(transform: Callable, args: tuple) -> Any:
    """``transform`` (of the arrays of ``args``, as :func:`arrays` takes them
    out) run as one recorded node; its results as tensors."""
    treedef = jax.tree.structure(arrays(args))
    inputs = [t for t in jax.tree.leaves(ordered(args)) if is_tensor(t)]
    shape: list = []

    def flat(*xs: Any) -> list:
        out_leaves, out_def = jax.tree.flatten(
            transform(*jax.tree.unflatten(treedef, xs))
        )
        shape.append(out_def)
        return out_leaves

    outs = FuncTransform.apply(flat, *inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    return plain(jax.tree.unflatten(shape[0], list(outs)))
