"""Blitz 2, "autograd" (higher-level API): ``torch.autograd.functional`` --
``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp`` -- as torch has them.

torch's module is plain Python over ``torch.autograd.grad``, and so is this port:
the same argument checks and messages (:mod:`._functional_checks`), ``strict``'s
errors for results that do not depend on the inputs, ``create_graph`` (results
that keep their history), and the double-backward trick ``jvp`` and ``hvp`` use to
get forward-mode products out of reverse mode, all on compat's tape.

torch computes ``vectorize=True`` with batched gradients (vmap over the backward)
and ``strategy="forward-mode"`` with dual tensors; compat has neither, so both run
on its ``torch.func`` instead (``jacrev`` and ``jacfwd`` over the function, in
:mod:`._functional_jacobian`: the same Jacobian, in one program). There a result
that keeps its history joins the tape as one node, which ``create_graph=True``
cannot differentiate again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxblitz.compat.autograd import _functional_jacobian
from jaxblitz.compat.autograd._functional_checks import (
    as_tuple,
    autograd_grad,
    check_requires_grad,
    fill_in_zeros,
    grad_postprocess,
    grad_preprocess,
    tuple_postprocess,
    validate_v,
)
from jaxblitz.compat.autograd.grad_mode import (
    enable_grad,
    is_grad_enabled,
    set_grad_enabled,
)
from jaxblitz.compat.tensor.creation import zeros_like

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _prepared(inputs: Any, v: Any, create_graph: bool, fn_name: str) -> tuple:
    """The inputs and ``v`` of ``jvp``, ``vhp`` and ``hvp``, checked as torch's:
    ``(is_inputs_tuple, inputs, v)``."""
    is_inputs_tuple, inputs = as_tuple(inputs, "inputs", fn_name)
    inputs = grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = as_tuple(v, "v", fn_name)
        v = grad_preprocess(v, create_graph=create_graph, need_graph=False)
        validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided "
            "function is a single Tensor with a single element."
        )
    return is_inputs_tuple, inputs, v


def vjp(
    func: Callable,
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """``torch.autograd.functional.vjp``: ``(func(inputs), v^T J)``."""
    with enable_grad():
        is_inputs_tuple, inputs = as_tuple(inputs, "inputs", "vjp")
        inputs = grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = as_tuple(v, "v", "vjp")
            v = grad_preprocess(v, create_graph=create_graph, need_graph=False)
            validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function "
                "returns a single Tensor with a single element."
            )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = autograd_grad(outputs, inputs, v, create_graph=create_graph)
        products = fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return (
        tuple_postprocess(grad_postprocess(outputs, create_graph), is_outputs_tuple),
        tuple_postprocess(grad_postprocess(products, create_graph), is_inputs_tuple),
    )


def jvp(
    func: Callable,
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """``torch.autograd.functional.jvp``: ``(func(inputs), J v)``, by torch's
    double-backward trick: the gradient of ``u^T J`` with respect to ``u``."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepared(inputs, v, create_graph, "jvp")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = autograd_grad(
            grad_inputs, grad_outputs, v, create_graph=create_graph
        )
        products = fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return (
        tuple_postprocess(grad_postprocess(outputs, create_graph), is_outputs_tuple),
        tuple_postprocess(grad_postprocess(products, create_graph), is_outputs_tuple),
    )


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """``torch.autograd.functional.jacobian``: each output's Jacobian with respect
    to each input, shaped ``output.shape + input.shape``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: '
            'If your function has more outputs than inputs, "forward-mode" tends to '
            'be more performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please '
                'either set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _functional_jacobian.jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
        inputs = grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if vectorize and not strict:
            return _functional_jacobian.jacrev(
                func, inputs, create_graph, is_inputs_tuple
            )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                "`vectorized=True` are not supported together. Please either set "
                "`strict=False` or `vectorize=False`."
            )
        jac = tuple(
            _functional_jacobian.rows(i, out, inputs, create_graph, strict)
            for i, out in enumerate(outputs)
        )
        jac = grad_postprocess(jac, create_graph)
        return tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """``torch.autograd.functional.hessian``: the Jacobian of the Jacobian of a
    function with a single-element output."""
    is_inputs_tuple, inputs = as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode".'
        )

    def ensure_single_output_function(*inp: Any) -> Any:
        out = func(*inp)
        is_out_tuple, t_out = as_tuple(
            out, "outputs of the user-provided function", "hessian"
        )
        check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple:  # as_tuple has checked it is a Tensor
            raise RuntimeError(
                "The function given to hessian should return a single Tensor"
            )
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain "
                "a single element"
            )
        return out.squeeze()

    def jac_func(*inp: Any) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_output(outputs: Any, fn_name: str, strict: bool) -> tuple:
    """``vhp``'s and ``hvp``'s checks of the function's output."""
    is_outputs_tuple, outputs = as_tuple(
        outputs, "outputs of the user-provided function", fn_name
    )
    check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple:  # as_tuple has checked it is a Tensor
        raise RuntimeError(
            f"The function given to {fn_name} should return a single Tensor"
        )
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain "
            "a single element"
        )
    return is_outputs_tuple, outputs


def vhp(
    func: Callable,
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """``torch.autograd.functional.vhp``: ``(func(inputs), v^T H)``."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepared(inputs, v, create_graph, "vhp")
        is_outputs_tuple, outputs = _single_output(func(*inputs), "vhp", strict)
        jac = autograd_grad(outputs, inputs, create_graph=True)
        check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = autograd_grad(jac, inputs, v, create_graph=create_graph)
        products = fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return (
        tuple_postprocess(grad_postprocess(outputs, create_graph), is_outputs_tuple),
        tuple_postprocess(grad_postprocess(products, create_graph), is_inputs_tuple),
    )


def hvp(
    func: Callable,
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """``torch.autograd.functional.hvp``: ``(func(inputs), H v)``, by the
    double-backward trick over ``vhp``'s gradient."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepared(inputs, v, create_graph, "hvp")
        is_outputs_tuple, outputs = _single_output(func(*inputs), "hvp", strict)
        jac = autograd_grad(outputs, inputs, create_graph=True)
        check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = autograd_grad(jac, inputs, grad_jac, create_graph=True)
        check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        products = fill_in_zeros(
            grad_res, inputs, strict, create_graph, "double_back_trick"
        )
    return (
        tuple_postprocess(grad_postprocess(outputs, create_graph), is_outputs_tuple),
        tuple_postprocess(grad_postprocess(products, create_graph), is_inputs_tuple),
    )
