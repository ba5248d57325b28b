"""Blitz 2, "autograd" (function transforms): ``torch.func`` -- ``vmap``, ``grad``,
``jacrev``, ``jacfwd``, ``hessian``, ``vjp``, ``jvp``, ``linearize``,
``functional_call`` and ``stack_module_state``.

A compat tensor is a handle on a JAX array, so each transform is JAX's own: the
function's tensor arguments are taken out as arrays, JAX's transform traces the
function with its tracers wrapped back in tensors (compat's ops run on them
unrecorded, in either mode), and the arrays it returns come back as tensors.
Transforms nest as JAX's do (``vmap(grad(f))``). Non-tensor arguments pass
through unchanged. ``torch.vmap`` is this module's ``vmap``.

Where this differs from torch: a transform's result has no autograd history
(``torch.func`` composes with ``backward()``; here the arguments of a transform
called outside any other must not require grad, or it says so), and random ops
inside ``vmap`` draw the same numbers for every element (torch's
``randomness='same'``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from jaxblitz.compat._func_state import functional_call, stack_module_state
from jaxblitz.compat._not_offered import NotOffered, refused
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]

_INSTEAD = (
    "jaxblitz.compat.functional(model) gives (params, apply_fn) in pure JAX, for "
    "jax's own transforms"
)

debug_unwrap = refused("torch.func.debug_unwrap", _INSTEAD)
functionalize = refused(
    "torch.func.functionalize", "compat's functions are functional already"
)
rearrange = refused("torch.func.rearrange", "einops-style rearrange is not implemented")
replace_all_batch_norm_modules_ = refused(
    "torch.func.replace_all_batch_norm_modules_", _INSTEAD
)


def _is_tensor(x: Any) -> bool:
    return isinstance(x, TensorBase)


def _checked(tree: Any, name: str) -> None:
    """torch.func's result would carry autograd history; compat's cannot."""
    if not is_grad_enabled():
        return
    for leaf in jax.tree.leaves(tree):
        if _is_tensor(leaf) and leaf.requires_grad and not _tracing(leaf):
            raise NotOffered(
                f"torch.func.{name} of tensors that require grad is not supported "
                "by jaxblitz.compat: its result would have no autograd history. "
                "Pass detached tensors (p.detach()), or call it under "
                "torch.no_grad()"
            )


def _tracing(t: TensorBase) -> bool:
    return isinstance(t._value(), jax.core.Tracer)


class _Ordered(dict):
    """A dict as JAX's transforms carry it with its keys in their own order
    (JAX sorts a plain dict's keys; torch's results keep the caller's order)."""


jax.tree_util.register_pytree_node(
    _Ordered,
    lambda d: (list(d.values()), list(d)),
    lambda keys, values: _Ordered(zip(keys, values, strict=True)),
)


def _ordered(tree: Any) -> Any:
    """``tree`` with each plain dict (in lists, tuples, dicts) an :class:`_Ordered`."""
    if type(tree) is dict:
        return _Ordered((k, _ordered(v)) for k, v in tree.items())
    if type(tree) in (list, tuple):
        return type(tree)(_ordered(v) for v in tree)
    return tree


def _plain(tree: Any) -> Any:
    """:func:`_ordered`'s inverse."""
    if type(tree) is _Ordered:
        return {k: _plain(v) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(_plain(v) for v in tree)
    return tree


def _arrays(tree: Any) -> Any:
    """``tree`` with each tensor as its array and every other leaf as None (an
    empty node to JAX, so it is neither mapped nor differentiated)."""
    return jax.tree.map(lambda x: x._data if _is_tensor(x) else None, _ordered(tree))


def _tensors(tree: Any, like: Any) -> Any:
    """:func:`_arrays`'s inverse: ``like``'s leaves, each tensor's replaced by the
    array at its place in ``tree``."""
    leaves, treedef = jax.tree.flatten(_ordered(like))
    got = treedef.flatten_up_to(tree)
    return _plain(
        treedef.unflatten(
            [
                TensorBase._wrap(a) if _is_tensor(x) else x
                for a, x in zip(got, leaves, strict=True)
            ]
        )
    )


def _out_arrays(tree: Any) -> Any:
    return jax.tree.map(lambda x: x._data if _is_tensor(x) else x, _ordered(tree))


def _out_tensors(tree: Any) -> Any:
    return _plain(
        jax.tree.map(
            lambda x: TensorBase._wrap(x) if isinstance(x, jax.Array) else x, tree
        )
    )


def _pure(func: Callable, args: tuple, kwargs: dict) -> Callable:
    """``func`` over the arrays of ``args`` (as :func:`_arrays` takes them out):
    the tensors it sees hold JAX's tracers, its tensors out are arrays."""

    def pure(*arrays: Any) -> Any:
        return _out_arrays(func(*_tensors(arrays, args), **kwargs))

    return pure


def _pure_aux(func: Callable, args: tuple, kwargs: dict) -> Callable:
    """:func:`_pure` for ``has_aux``: the output a pair, both parts as arrays."""

    def pure(*arrays: Any) -> Any:
        out = func(*_tensors(arrays, args), **kwargs)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(
                "grad_and_value(f)(*args): output of function f should be a tuple: "
                "(output, aux) if has_aux is True"
            )
        return _out_arrays(out)

    return pure


def _run(name: str, transform: Callable, args: tuple) -> Any:
    _checked(args, name)
    with x64(True):
        return _out_tensors(transform(*_arrays(args)))


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``torch.func.vmap``: ``func`` over a batch dimension of its inputs;
    keyword arguments are not mapped."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        axes = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        pure = _pure(func, args, kwargs)
        return _run("vmap", jax.vmap(pure, in_axes=axes, out_axes=out_dims), args)

    return wrapped


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``torch.func.grad``: the gradient of a scalar ``func`` with respect to the
    arguments at ``argnums`` (with ``func``'s auxiliary output, if ``has_aux``)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        pure = _scalar(func, args, kwargs, has_aux)
        return _run("grad", jax.grad(pure, argnums, has_aux=has_aux), args)

    return wrapped


def grad_and_value(
    func: Callable, argnums: int | tuple = 0, has_aux: bool = False
) -> Callable:
    """``torch.func.grad_and_value``: ``(grad, value)``, or with ``has_aux``
    ``(grad, (value, aux))``."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        pure = _scalar(func, args, kwargs, has_aux)
        transform = jax.value_and_grad(pure, argnums, has_aux=has_aux)
        value, g = _run("grad_and_value", transform, args)
        return g, value

    return wrapped


def _scalar(func: Callable, args: tuple, kwargs: dict, has_aux: bool) -> Callable:
    """:func:`_pure` (or :func:`_pure_aux`) raising torch's error where the
    output is not a scalar."""
    pure = (_pure_aux if has_aux else _pure)(func, args, kwargs)

    def checked(*arrays: Any) -> Any:
        result = pure(*arrays)
        out = result[0] if has_aux else result
        if not isinstance(out, jax.Array):
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                f"got {type(out)}"
            )
        if out.ndim != 0:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                f"Tensor, got tensor with {out.ndim} dims. Maybe you wanted to use "
                "the vjp or jacrev APIs instead?"
            )
        return result

    return checked


def jacrev(
    func: Callable,
    argnums: int | tuple = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """``torch.func.jacrev``: the Jacobian by reverse mode, shaped
    ``output.shape + input.shape``."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        maker = _pure_aux if has_aux else _pure
        transform = jax.jacrev(maker(func, args, kwargs), argnums, has_aux=has_aux)
        return _run("jacrev", transform, args)

    return wrapped


def jacfwd(
    func: Callable,
    argnums: int | tuple = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """``torch.func.jacfwd``: the Jacobian by forward mode."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        maker = _pure_aux if has_aux else _pure
        transform = jax.jacfwd(maker(func, args, kwargs), argnums, has_aux=has_aux)
        return _run("jacfwd", transform, args)

    return wrapped


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """``torch.func.hessian``: ``jacfwd(jacrev(func))``, as torch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``torch.func.vjp``: ``(output, vjp_fn)`` (and ``aux``); ``vjp_fn(v)`` gives
    one gradient per primal, as a tuple."""
    maker = _pure_aux if has_aux else _pure
    pure = maker(func, primals, {})
    _checked(primals, "vjp")
    with x64(True):
        result = jax.vjp(pure, *_arrays(primals), has_aux=has_aux)
    out, fn = result[0], result[1]

    def vjp_fn(*cotangents: Any) -> tuple:
        tangent = cotangents[0] if len(cotangents) == 1 else cotangents
        with x64(True):
            return _out_tensors(fn(_out_arrays(tangent)))

    found = (_out_tensors(out), vjp_fn)
    return (*found, _out_tensors(result[2])) if has_aux else found


def jvp(
    func: Callable,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """``torch.func.jvp``: ``(output, jvp_out)`` (and ``aux``)."""
    primals, tangents = tuple(primals), tuple(tangents)
    maker = _pure_aux if has_aux else _pure
    pure = maker(func, primals, {})
    _checked(primals, "jvp")
    with x64(True):
        result = jax.jvp(pure, _arrays(primals), _arrays(tangents), has_aux=has_aux)
    return _out_tensors(result)


def linearize(func: Callable, *primals: Any) -> tuple:
    """``torch.func.linearize``: ``(output, jvp_fn)``."""
    pure = _pure(func, primals, {})
    _checked(primals, "linearize")
    with x64(True):
        out, fn = jax.linearize(pure, *_arrays(primals))

    def jvp_fn(*tangents: Any) -> Any:
        with x64(True):
            return _out_tensors(fn(*_arrays(tangents)))

    return _out_tensors(out), jvp_fn
