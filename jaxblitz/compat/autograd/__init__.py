"""Blitz 2, "autograd": ``backward``, ``grad``, ``Function`` and ``gradcheck``.

``from jaxblitz.compat.autograd import Function, gradcheck`` as in torch. The tape
is :mod:`.graph`; a :class:`Function` is the one place a derivative is written by
hand, by the user.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.autograd.function import Function, FunctionCtx
from jaxblitz.compat.autograd.gradcheck import GradcheckError, gradcheck
from jaxblitz.compat.autograd.graph import (
    AccumulateGrad,
    Node,
    enable_grad,
    is_grad_enabled,
    no_grad,
    run_backward,
    set_grad_enabled,
    x64,
)

__all__ = [
    "AccumulateGrad",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]


def _root_grad(output, gradient: Any):
    from jaxblitz.compat.tensor import Tensor

    if gradient is None:
        if output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        with x64(True):
            return jnp.ones(output.shape, output.dtype.np)
    if not isinstance(gradient, Tensor):
        from jaxblitz.compat.creation import tensor

        gradient = tensor(gradient, dtype=output.dtype)
    if tuple(gradient.shape) != tuple(output.shape):
        raise RuntimeError(
            f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape} and "
            f"output[0] has a shape of {output.shape}."
        )
    with x64(True):
        return gradient._data.astype(output.dtype.np)


def _check_root(output) -> None:
    if not output.requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn"
        )


def backward(
    tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None
) -> None:
    """``torch.autograd.backward`` / ``tensor.backward()``."""
    if create_graph:
        raise NotImplementedError(
            "create_graph=True (higher-order gradients) is not supported by "
            "jaxblitz.compat; use jax.grad on the functional core for that"
        )
    _check_root(tensors)
    g = _root_grad(tensors, grad_tensors)
    if inputs is not None:
        inputs = [inputs] if not isinstance(inputs, list | tuple) else inputs
        found = run_backward(tensors._node(), g, bool(retain_graph), inputs)
        for t in inputs:
            got = found.get(id(t._node()))
            if got is not None:
                t._accumulate(got)
        return
    run_backward(tensors._node(), g, bool(retain_graph))


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=False,
):
    """``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs``."""
    from jaxblitz.compat.tensor import Tensor

    if create_graph:
        raise NotImplementedError("create_graph=True is not supported")
    if isinstance(outputs, list | tuple):
        (outputs,) = outputs
    if isinstance(grad_outputs, list | tuple):
        (grad_outputs,) = grad_outputs
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    _check_root(outputs)
    found = run_backward(
        outputs._node(), _root_grad(outputs, grad_outputs), bool(retain_graph), inputs
    )
    result = []
    for i, t in enumerate(inputs):
        g = found.get(id(t._node()))
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) appears to not have "
                "been used in the graph. Set allow_unused=True if this is the "
                "desired behavior."
            )
        result.append(None if g is None else Tensor._wrap(g))
    return tuple(result)
