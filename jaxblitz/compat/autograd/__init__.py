"""Blitz 2, "autograd": ``backward``, ``grad``, ``Function`` and ``gradcheck``.

``from jaxblitz.compat.autograd import Function, gradcheck`` as in torch. The tape
is :mod:`.graph`; a :class:`Function` is the one place a derivative is written by
hand, by the user.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat._dtype import x64
from jaxblitz.compat._tensor_base import TensorBase
from jaxblitz.compat.autograd.function import Function, FunctionCtx
from jaxblitz.compat.autograd.grad_mode import (
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from jaxblitz.compat.autograd.graph import AccumulateGrad, Node, run_backward
from jaxblitz.compat.creation import tensor
from jaxblitz.grad import (
    GradcheckError,
    check_jacobians,
    numerical_jacobian,
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
    if gradient is None:
        if output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        with x64(True):
            return jnp.ones(output.shape, output.dtype.np)
    if not isinstance(gradient, TensorBase):
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
    if create_graph:
        raise NotImplementedError("create_graph=True is not supported")
    if isinstance(outputs, list | tuple):
        (outputs,) = outputs
    if isinstance(grad_outputs, list | tuple):
        (grad_outputs,) = grad_outputs
    single = isinstance(inputs, TensorBase)
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
        result.append(None if g is None else TensorBase._wrap(g))
    return tuple(result)


def gradcheck(
    func,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """``torch.autograd.gradcheck``: the Jacobian ``backward`` computes (through the
    tape, including user ``Function``s) against central finite differences.

    torch's defaults; use float64 inputs, as with torch. The finite differences and
    the verdict are the core's (:func:`jaxblitz.grad.check_jacobians`), and so is
    the :class:`GradcheckError` a mismatch raises.
    """
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    diff = [
        i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad
    ]
    for i in diff:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point. The check will likely fail if all the inputs are not of "
                "double precision floating point. ",
                stacklevel=2,
            )
    outputs = _outputs(func, inputs)
    checked = [  # torch checks the floating-point tensor outputs
        o
        for o, out in enumerate(outputs)
        if isinstance(out, TensorBase) and out.dtype.is_floating_point
    ]
    xs = [np.asarray(inputs[i].detach()) for i in diff]

    def f(*arrays):  # the differentiated inputs -> the checked outputs, as arrays
        args = list(inputs)
        for i, a in zip(diff, arrays, strict=True):
            args[i] = TensorBase._wrap(a)
        with no_grad():
            outs = _outputs(func, args)
        return tuple(np.asarray(outs[o]._data, np.float64) for o in checked)

    with x64(True):
        numerical = numerical_jacobian(f, xs, f(*xs), eps)
    analytical = [[_tape_jacobian(func, inputs, o, i) for i in diff] for o in checked]
    return check_jacobians(
        analytical,
        numerical,
        [tuple(outputs[o].shape) for o in checked],
        [x.shape for x in xs],
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )


def _outputs(func, args) -> tuple:
    out = func(*args)
    return out if isinstance(out, tuple) else (out,)


def _tape_jacobian(func, inputs: tuple, o: int, i: int) -> np.ndarray:
    """d(output o)/d(input i) by ``backward``, one row per output element."""
    out = _outputs(func, inputs)[o]
    jacobian = np.zeros((out.numel(), inputs[i].numel()))
    for j in range(out.numel()):
        onehot = np.zeros(out.numel(), out.dtype.np)
        onehot[j] = 1
        (g,) = grad(
            out,
            inputs[i],
            onehot.reshape(out.shape),
            retain_graph=True,
            allow_unused=True,
        )
        if g is not None:
            jacobian[j] = np.asarray(g._data, np.float64).reshape(-1)
    return jacobian
