"""Blitz 2, "autograd" (higher-level API): how ``torch.autograd.functional.jacobian``
computes: torch's loop of one backward pass per output element, and, for
``vectorize=True`` and ``strategy="forward-mode"`` (batched gradients and dual
tensors in torch, which compat lacks), ``torch.func``'s ``jacrev`` and ``jacfwd``
over the function: the same Jacobian, in one program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxblitz.compat.autograd._functional_checks import (
    as_tuple,
    autograd_grad,
    tuple_postprocess,
)
from jaxblitz.compat.tensor.creation import zeros_like

# torch.func's jacrev and jacfwd, which vectorize=True and forward mode run on:
# set by jaxblitz.compat.func when it is imported (it imports autograd, so
# autograd cannot import it)
TRANSFORMS: dict[str, Callable[..., Any]] = {}


def _transformed(transform: Callable, func: Callable, inputs: tuple, name: Any) -> Any:
    """The Jacobian of ``func`` by ``torch.func``'s ``transform`` (jacrev or
    jacfwd), nested (outputs, inputs) as torch's; and whether ``func`` returned
    a tuple."""
    seen: list[bool] = []

    def flat(*xs: Any) -> tuple:
        is_outputs_tuple, outputs = as_tuple(func(*xs), *name)
        seen.append(is_outputs_tuple)
        return outputs

    jac = transform(flat, argnums=tuple(range(len(inputs))))(*inputs)
    return jac, seen[0]


def jacfwd(func: Callable, inputs: Any, strict: bool, vectorize: bool) -> Any:
    """torch's forward-mode ``jacobian``, by ``torch.func.jacfwd``."""

    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please '
            'either set `strict=False` or `strategy="reverse-mode"`.'
        )
    is_inputs_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    jac, is_outputs_tuple = _transformed(
        TRANSFORMS["jacfwd"], func, inputs, ("outputs",)
    )
    jac = [list(row) for row in jac]  # torch's forward mode nests lists, not tuples
    return tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def rows(i: int, out: Any, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """Output ``i``'s Jacobian with respect to each input, one backward pass per
    element of ``out``, as torch's loop."""
    from jaxblitz.compat.ops.shape_ops import stack

    jac_i: tuple[list, ...] = tuple([] for _ in inputs)
    for j in range(out.nelement()):
        vj = autograd_grad(
            (out.reshape(-1)[j],), inputs, retain_graph=True, create_graph=create_graph
        )
        for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(
            zip(jac_i, vj, inputs, strict=True)
        ):
            if vj_el is not None:
                if strict and create_graph and not vj_el.requires_grad:
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode when "
                        "create_graph=True."
                    )
                jac_i_el.append(vj_el)
            else:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of "
                        f"input {el_idx}. This is not allowed in strict mode."
                    )
                jac_i_el.append(zeros_like(inp_el))
    return tuple(
        stack(jac_i_el, dim=0).view(out.size() + inputs[el_idx].size())
        for el_idx, jac_i_el in enumerate(jac_i)
    )


def jacrev(
    func: Callable, inputs: tuple, create_graph: bool, is_inputs_tuple: bool
) -> Any:
    """torch's ``vectorize=True`` reverse mode, by ``torch.func.jacrev``: with
    ``create_graph`` the result is one node on the tape over the inputs."""

    if not create_graph:  # torch detaches the result: nothing to record
        inputs = tuple(inp.detach() for inp in inputs)
    name = ("outputs of the user-provided function", "jacobian")
    jac, is_outputs_tuple = _transformed(TRANSFORMS["jacrev"], func, inputs, name)
    return tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
