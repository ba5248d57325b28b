"""Blitz 2, "autograd" (higher-level API): the argument checks and bookkeeping of
``torch.autograd.functional``, ported from torch's own module with its messages:
tuple/non-tuple inputs and outputs, the preprocessing that gives the user's
function inputs that require grad, ``strict``'s errors, and the zeros put where
an output does not depend on an input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import zeros_like


def as_tuple(inp: Any, arg_name: str | None = None, fn_name: str | None = None) -> Any:
    """torch's ``_as_tuple``: ``(is_tuple, tensors)``, every one checked to be a
    Tensor; with neither name, only the tuple."""
    if arg_name is None and fn_name is None:
        if isinstance(inp, tuple):
            return inp
        return tuple(inp) if isinstance(inp, list) else (inp,)
    is_inp_tuple = isinstance(inp, tuple)
    if not is_inp_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, TensorBase):
            where = (
                f"the value at index {i} has type {type(el)}"
                if is_inp_tuple
                else f"the given {arg_name} has type {type(el)}"
            )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                f"tuple of Tensors but {where}."
            )
    return is_inp_tuple, inp


def tuple_postprocess(res: Any, to_unpack: Any) -> Any:
    """torch's ``_tuple_postprocess``: unpack what the user did not pass as a
    tuple (one flag, or (outputs, inputs) for nested results)."""
    if isinstance(to_unpack, tuple):
        if len(to_unpack) != 2:
            raise AssertionError("Expected to_unpack tuple to have exactly 2 elements")
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """torch's ``_grad_preprocess``: with ``create_graph``, a view of an input
    that requires grad (its history kept); otherwise a detached copy."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp) if not inp.is_sparse else inp.clone())
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    """torch's ``_grad_postprocess``: detach the results unless ``create_graph``."""
    if isinstance(inputs[0], TensorBase):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(grad_postprocess(inp, create_graph) for inp in inputs)


def validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got "
                f"{len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got "
                f"{el_v.size()}."
            )


_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} "
    "is independent of the input. This is not allowed in strict mode. You should "
    "ensure that your function is thrice differentiable and that the hessian "
    "depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the "
    "user-provided function with respect to input {i} is independent of the input. "
    "This is not allowed in strict mode. You should ensure that your function is "
    "twice differentiable and that the jacobian depends on the inputs (this would "
    "be violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the "
    "inputs of the user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require "
    "gradients. The outputs must be computed in a differentiable manner from the "
    "input when running in strict mode.",
}


def check_requires_grad(inputs: tuple, input_type: str, strict: bool) -> None:
    """torch's ``_check_requires_grad``: ``strict``'s errors for results that do
    not depend on the inputs."""
    if not strict:
        return
    if input_type not in _INDEPENDENT:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input "
                f"{i}. This is not allowed in strict mode."
            )
        if not inp.requires_grad:
            raise RuntimeError(_INDEPENDENT[input_type].format(i=i))


# torch.autograd.grad: set by the package when it has defined it (the package
# imports this module, so this module cannot import the package)
GRAD: list[Callable[..., Any]] = []


def autograd_grad(
    outputs: tuple,
    inputs: tuple,
    grad_outputs: Any = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple:
    """torch's ``_autograd_grad``: ``autograd.grad`` of the outputs that require
    grad, unused inputs allowed (None); all None when no output requires grad."""
    grad = GRAD[0]
    if not isinstance(outputs, tuple):
        raise AssertionError("Expected outputs to be a tuple")
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    if not isinstance(grad_outputs, tuple):
        raise AssertionError("Expected grad_outputs to be a tuple")
    if len(outputs) != len(grad_outputs):
        raise AssertionError(
            "Expected outputs and grad_outputs to have the same length, but got "
            f"{len(outputs)} and {len(grad_outputs)}"
        )
    kept = [
        (out, g)
        for out, g in zip(outputs, grad_outputs, strict=True)
        if out is not None and out.requires_grad
    ]
    if not kept:
        return (None,) * len(inputs)
    return grad(
        tuple(out for out, _ in kept),
        inputs,
        tuple(g for _, g in kept),
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
    )


_FILL_STRICT = {
    "back": "The output of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry "
    "{i} in the grad_outputs when using the double backward trick to compute "
    "forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of "
    "input {i}. This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent "
    "of entry {i} in the grad_jacobian. This is not allowed in strict mode as it "
    "prevents from using the double backward trick to replace forward mode AD.",
}


def fill_in_zeros(
    grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str
) -> tuple:
    """torch's ``_fill_in_zeros``: zeros like ``refs[i]`` where no gradient
    reached (an error under ``strict``)."""
    if stage not in _FILL_STRICT:
        raise RuntimeError(f"Invalid stage argument '{stage}' to _fill_in_zeros")
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_FILL_STRICT[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input "
                f"{i}. This is not allowed in strict mode when create_graph=True."
            )
        res.append(grads_i)
    return tuple(res)
