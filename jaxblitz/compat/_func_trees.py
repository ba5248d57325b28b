"""Blitz 2, "autograd" (function transforms): the arguments and results of
``torch.func``'s transforms as JAX's transforms take them -- tensors as their
arrays, every other leaf left out -- and back."""

from __future__ import annotations

from typing import Any

import jax

from jaxblitz.compat.tensor._tensor_base import TensorBase


def is_tensor(x: Any) -> bool:
    return isinstance(x, TensorBase)


class _Ordered(dict):
    """A dict as JAX's transforms carry it with its keys in their own order
    (JAX sorts a plain dict's keys; torch's results keep the caller's order)."""


jax.tree_util.register_pytree_node(
    _Ordered,
    lambda d: (list(d.values()), list(d)),
    lambda keys, values: _Ordered(zip(keys, values, strict=True)),
)


def ordered(tree: Any) -> Any:
    """``tree`` with each plain dict (in lists, tuples, dicts) an :class:`_Ordered`."""
    if type(tree) is dict:
        return _Ordered((k, ordered(v)) for k, v in tree.items())
    if type(tree) in (list, tuple):
        return type(tree)(ordered(v) for v in tree)
    return tree


def plain(tree: Any) -> Any:
    """:func:`ordered`'s inverse."""
    if type(tree) is _Ordered:
        return {k: plain(v) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(plain(v) for v in tree)
    return tree


def arrays(tree: Any) -> Any:
    """``tree`` with each tensor as its array and every other leaf as None (an
    empty node to JAX, so it is neither mapped nor differentiated)."""
    return jax.tree.map(lambda x: x._data if is_tensor(x) else None, ordered(tree))


def tensors(tree: Any, like: Any) -> Any:
    """:func:`arrays`'s inverse: ``like``'s leaves, each tensor's replaced by the
    array at its place in ``tree``."""
    leaves, treedef = jax.tree.flatten(ordered(like))
    got = treedef.flatten_up_to(tree)
    return plain(
        jax.tree.unflatten(
            treedef,
            [
                TensorBase._wrap(a) if is_tensor(x) else x
                for a, x in zip(got, leaves, strict=True)
            ],
        )
    )


def out_arrays(tree: Any) -> Any:
    return jax.tree.map(lambda x: x._data if is_tensor(x) else x, ordered(tree))


def out_tensors(tree: Any) -> Any:
    return plain(
        jax.tree.map(
            lambda x: TensorBase._wrap(x) if isinstance(x, jax.Array) else x, tree
        )
    )
