"""Blitz 2, "autograd" (function transforms): ``torch.func`` -- ``vmap``, ``grad``,
``jacrev``, ``jacfwd``, ``hessian``, ``vjp``, ``jvp``, ``linearize``,
``functional_call`` and ``stack_module_state``.

A compat tensor is a handle on a JAX array, so each transform is JAX's own: the
function's tensor arguments are taken out as arrays, JAX's transform traces the
function with its tracers wrapped back in tensors (compat's ops run on them
unrecorded, in either mode), and the arrays it returns come back as tensors.
Transforms nest as JAX's do (``vmap(grad(f))``). Non-tensor arguments pass
through unchanged. ``torch.vmap`` is this module's ``vmap``.

Where this differs from torch: a transform of tensors that require grad joins
the tape as one node (``FuncTransformBackward``, :mod:`._func_tape`), which
``create_graph=True`` cannot differentiate again; ``vjp``, ``jvp`` and
``linearize`` of such tensors are refused. ``vmap``'s
``randomness='different'`` is refused (one key serves the whole batch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax

from jaxblitz.compat._func_state import functional_call, stack_module_state
from jaxblitz.compat._func_tape import recorded
from jaxblitz.compat._func_trees import (
    arrays,
    is_tensor,
    out_arrays,
    out_tensors,
    tensors,
)
from jaxblitz.compat._not_offered import NotOffered, refused
from jaxblitz.compat.autograd import _dual, _functional_jacobian
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.tensor import _dtype, creation
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


def _checked(tree: Any, name: str) -> None:
    """torch.func's result would carry autograd history; compat's cannot."""
    if not is_grad_enabled():
        return
    for leaf in jax.tree.leaves(tree):
        if is_tensor(leaf) and leaf.requires_grad and not _tracing(leaf):
            raise NotOffered(
                f"torch.func.{name} of tensors that require grad is not supported "
                "by jaxblitz.compat: its result would have no autograd history. "
                "Pass detached tensors (p.detach()), or call it under "
                "torch.no_grad()"
            )


def _recording(tree: Any) -> bool:
    """Whether a transform's result joins the tape: an input requires grad (one
    that is not a tracer of an enclosing transform) in grad mode."""
    if not is_grad_enabled():
        return False
    return any(
        is_tensor(leaf) and leaf.requires_grad and not _tracing(leaf)
        for leaf in jax.tree.leaves(tree)
    )


def _tracing(t: TensorBase) -> bool:
    return isinstance(t._value(), jax.core.Tracer)


def _pure(func: Callable, args: tuple, kwargs: dict) -> Callable:
    """``func`` over the arrays of ``args`` (as :func:`arrays` takes them out):
    the tensors it sees hold JAX's tracers, its tensors out are arrays."""

    def pure(*xs: Any) -> Any:
        return out_arrays(func(*tensors(xs, args), **kwargs))

    return pure


def _pure_aux(func: Callable, args: tuple, kwargs: dict) -> Callable:
    """:func:`_pure` for ``has_aux``: the output a pair, both parts as arrays."""

    def pure(*xs: Any) -> Any:
        out = func(*tensors(xs, args), **kwargs)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(
                "grad_and_value(f)(*args): output of function f should be a tuple: "
                "(output, aux) if has_aux is True"
            )
        return out_arrays(out)

    return pure


@contextlib.contextmanager
def _traced_on(args: Any) -> Iterator[None]:
    """A transform of ``args`` running: its tracers' ``.device`` is that of its
    first tensor argument (torch's wrapped tensors keep their device)."""
    first = next((x for x in jax.tree.leaves(args) if is_tensor(x)), None)
    where = first.device if first is not None else _dtype.device("cpu")
    _dtype.transform_devices.append(where)
    try:
        yield
    finally:
        _dtype.transform_devices.pop()


def _run(name: str, transform: Callable, args: tuple) -> Any:
    with _traced_on(args):
        if _recording(args):  # one node on the tape: backward() reaches the inputs
            return recorded(transform, args)
        with x64(True):
            return out_tensors(transform(*arrays(args)))


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

    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or "
            f"'same'. Got {randomness}"
        )
    if randomness == "different":
        raise NotOffered(
            "torch.func.vmap(randomness='different') is not supported by "
            "jaxblitz.compat: its random ops draw one key for the whole batch; "
            "randomness='same' draws the same numbers for every element"
        )

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        axes = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        pure = _pure(func, args, kwargs)

        def flagged(*xs: Any) -> Any:
            creation.vmap_randomness.append(randomness)
            try:
                return pure(*xs)
            finally:
                creation.vmap_randomness.pop()

        return _run("vmap", jax.vmap(flagged, in_axes=axes, out_axes=out_dims), args)

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

    def checked(*xs: Any) -> Any:
        result = pure(*xs)
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
        _dual.not_nested()
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
    with x64(True), _traced_on(primals):
        result = jax.vjp(pure, *arrays(primals), has_aux=has_aux)
    out, fn = result[0], result[1]

    def vjp_fn(*cotangents: Any) -> tuple:
        tangent = cotangents[0] if len(cotangents) == 1 else cotangents
        with x64(True), _traced_on(primals):
            return out_tensors(fn(out_arrays(tangent)))

    found = (out_tensors(out), vjp_fn)
    return (*found, out_tensors(result[2])) if has_aux else found


def jvp(
    func: Callable,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """``torch.func.jvp``: ``(output, jvp_out)`` (and ``aux``)."""
    _dual.not_nested()
    primals, tangents = tuple(primals), tuple(tangents)
    maker = _pure_aux if has_aux else _pure
    pure = maker(func, primals, {})
    _checked(primals, "jvp")
    with x64(True), _traced_on(primals):
        result = jax.jvp(pure, arrays(primals), arrays(tangents), has_aux=has_aux)
    return out_tensors(result)


def linearize(func: Callable, *primals: Any) -> tuple:
    """``torch.func.linearize``: ``(output, jvp_fn)``."""
    _dual.not_nested()
    pure = _pure(func, primals, {})
    _checked(primals, "linearize")
    with x64(True), _traced_on(primals):
        out, fn = jax.linearize(pure, *arrays(primals))

    def jvp_fn(*tangents: Any) -> Any:
        with x64(True), _traced_on(primals):
            return out_tensors(fn(*arrays(tangents)))

    return out_tensors(out), jvp_fn


# torch.autograd.functional's vectorized and forward-mode Jacobians run on these
_functional_jacobian.TRANSFORMS.update(jacrev=jacrev, jacfwd=jacfwd)
