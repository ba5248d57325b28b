"""Blitz 2 (extending autograd) under ``torch.func``: ``Function.apply`` on
tensors that hold the tracers of a transform (``grad``, ``vjp``, ``jacrev``,
``vmap``...).

As in torch, only a Function with a ``setup_context`` staticmethod may be
transformed, and its own ``backward`` gives the gradient: the call is a
``jax.custom_vjp`` whose forward rule runs ``forward`` and ``setup_context`` and
whose backward rule runs ``backward`` on the saved tensors. ``forward`` sees the
values JAX has at that level, so one that leaves torch ops (``x.numpy()``) runs
under ``grad`` as the outermost transform, as in torch.

Forward mode (``jvp``, ``jacfwd``) is refused: JAX's rule for the call is
the backward, and a ``jvp`` staticmethod cannot be added to it.

Under ``vmap`` compat batches ``forward`` itself, for a Function with
``generate_vmap_rule = True`` and for one with a ``vmap`` staticmethod alike
(the staticmethod is not called: JAX traces the batched function before any
batching rule could run, so a ``forward`` that leaves torch ops cannot be
batched, and compat says so)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat._not_offered import NotOffered
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.tensor import creation
from jaxblitz.compat.tensor._tensor_base import TensorBase

# autograd.Function, set by its module when it loads (it calls this one: no
# import circle)
FUNCTION: list = []
_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def transformed(args: tuple) -> bool:
    """Whether an argument holds a tracer of a ``torch.func`` transform (the
    stored value as it stands: pending lazy work is not run for this)."""
    return any(
        isinstance(a, TensorBase) and isinstance(a._s.pending, jax.core.Tracer)
        for a in args
    )


class TransformCtx:
    """The ``ctx`` that ``setup_context`` and ``backward`` see under a transform:
    what they save, mark and set, and any attribute."""

    def __init__(self, needs_input_grad: tuple) -> None:
        self.needs_input_grad = needs_input_grad
        self.to_save: tuple = ()
        self.non_differentiable: tuple = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self.saved_for_forward = tensors

    def mark_non_differentiable(self, *args: Any) -> None:
        self.non_differentiable = args

    def mark_dirty(self, *args: Any) -> None:
        raise NotOffered(
            "ctx.mark_dirty under a torch.func transform is not supported by "
            "jaxblitz.compat: a transform's values cannot be written in place"
        )

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    @property
    def saved_tensors(self) -> tuple:
        return self.to_save


def apply(cls: type, args: tuple) -> Any:
    """``cls.apply(*args)`` where an argument holds a transform's tracer."""
    Function = FUNCTION[0]  # noqa: N806 -- a class

    if cls.setup_context is Function.setup_context:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, "
            "grad, jvp, jacrev, ...), it must override the setup_context "
            f"staticmethod. {_DOCS}"
        )
    vmapped = bool(creation.vmap_randomness)
    if vmapped and not (cls.generate_vmap_rule or "vmap" in _own(cls)):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap "
            "support. Please override and implement the vmap staticmethod or set "
            f"generate_vmap_rule=True. {_DOCS}"
        )
    places = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
    box: dict[str, Any] = {}

    def forward(xs: tuple) -> tuple[list, Any, list]:
        full = list(args)
        for i, x in zip(places, xs, strict=True):
            full[i] = TensorBase._wrap(x)
        with no_grad():
            try:
                out = cls.forward(*full)
            except (jax.errors.TracerArrayConversionError,
                    jax.errors.ConcretizationTypeError) as e:  # fmt: skip
                raise _unbatchable(cls, vmapped) from e
        outs = list(out) if isinstance(out, tuple) else [out]
        box["single"] = not isinstance(out, tuple)
        box["outs"] = outs
        return full, out, [o._data for o in outs if isinstance(o, TensorBase)]

    @jax.custom_vjp
    def call(*xs: Any) -> list:
        return forward(xs)[2]

    def call_fwd(*xs: Any) -> tuple:
        full, out, arrays = forward(xs)
        needs = tuple(
            isinstance(a, TensorBase) and a.dtype.is_floating_point for a in full
        )
        ctx = TransformCtx(needs)
        cls.setup_context(ctx, tuple(full), out)
        # the tensors backward reads travel as residuals (JAX's values for the
        # backward pass); everything else stays on ctx
        names = [k for k, v in vars(ctx).items() if isinstance(v, TensorBase)]
        saved = [t._data if isinstance(t, TensorBase) else None for t in ctx.to_save]
        attrs = [getattr(ctx, k)._data for k in names]
        off = [
            i
            for i, o in enumerate(o for o in box["outs"] if isinstance(o, TensorBase))
            if any(o is t for t in ctx.non_differentiable)
        ]
        box.update(ctx=ctx, names=names, off=off)
        return arrays, (saved, attrs, list(xs))

    def call_bwd(residuals: tuple, cotangents: list) -> tuple:
        saved, attrs, xs = residuals
        ctx = box["ctx"]
        ctx.to_save = tuple(None if s is None else TensorBase._wrap(s) for s in saved)
        for name, value in zip(box["names"], attrs, strict=True):
            setattr(ctx, name, TensorBase._wrap(value))
        grads_out = [_cotangent(g) for g in cotangents]
        with no_grad():
            grads = cls.backward(ctx, *[TensorBase._wrap(g) for g in grads_out])
        grads = grads if isinstance(grads, tuple) else (grads,)
        result = []
        for i, x in zip(places, xs, strict=True):
            g = grads[i] if i < len(grads) else None
            result.append(_input_cotangent(g, x))
        return tuple(result)

    call.defvjp(call_fwd, call_bwd)
    try:
        arrays = call(*(args[i]._data for i in places))
    except TypeError as e:
        if "forward-mode autodiff" not in str(e):
            raise
        raise _forward_mode(cls) from None
    outs, made = list(box["outs"]), iter(arrays)
    for k, o in enumerate(outs):
        if isinstance(o, TensorBase):
            outs[k] = TensorBase._wrap(next(made))
    return outs[0] if box["single"] else tuple(outs)


def _own(cls: type) -> set[str]:
    """The names a Function subclass defines (not inherited from Function)."""
    Function = FUNCTION[0]  # noqa: N806 -- a class

    found: set[str] = set()
    for base in cls.__mro__:
        if base is Function:
            break
        found.update(vars(base))
    return found


def _cotangent(g: Any) -> Any:
    """A gradient for ``backward``: an integer output's (JAX's float0) as zeros
    of the output's dtype, as torch materialises an undefined gradient."""
    if g.dtype == jax.dtypes.float0:
        return jnp.zeros(g.shape, jnp.int64)
    return g


def _input_cotangent(g: Any, x: Any) -> Any:
    """What JAX takes back for input ``x``: ``backward``'s gradient (zeros for
    None), and float0 zeros for an integer input."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return np.zeros(x.shape, jax.dtypes.float0)
    if g is None:
        return jnp.zeros_like(x)
    value = g._data if isinstance(g, TensorBase) else jnp.asarray(g)
    return jnp.broadcast_to(value, x.shape).astype(x.dtype)


def _forward_mode(cls: type) -> Exception:
    if "jvp" not in _own(cls):
        return NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to "
            "use it with forward mode AD."
        )
    return NotOffered(
        f"forward-mode AD (torch.func.jvp, jacfwd, hessian) through {cls.__name__} "
        "is not supported by jaxblitz.compat: its jvp staticmethod is not called "
        "(JAX takes a Function's backward or its jvp, not both); use reverse mode "
        "(torch.func.grad, vjp, jacrev)"
    )


def _unbatchable(cls: type, vmapped: bool) -> Exception:
    if not vmapped:  # an enclosing transform's tracer: as in plain compat code
        return RuntimeError(
            f"{cls.__name__}.forward reads the values of its inputs (NumPy, "
            ".item(), .tolist()), which compat's torch.func transforms give as "
            "tracers below the outermost grad"
        )
    return NotOffered(
        f"torch.vmap over {cls.__name__} is not supported by jaxblitz.compat: its "
        "forward reads the values of its inputs (NumPy, .item(), .tolist()), and "
        "compat batches forward itself (the vmap staticmethod is not called); "
        "write forward with torch operations"
    )
