"""``torch.nn.functional.linear``: ``input @ weight.T + bias`` as one recorded op,
the core's :func:`jaxblitz.models.linear`; the weight's transpose is read inside
that op's program, not written out by one of its own."""

from __future__ import annotations

import jax.numpy as jnp

from jaxblitz import models
from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.ops._funnel import _check_arguments, _tensor
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import _CPP


def _addmm_fn(bias, x, weight_t, *, precision):
    with _precision.scope(precision):
        return models.linear({"weight": weight_t.T, "bias": bias}, x)


def _mm_fn(x, weight_t, *, precision):
    return jnp.matmul(x, weight_t, precision=precision)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    if _autocast.on:
        return _autocast.run("linear", linear, input, weight, bias)
    _tensor("linear", input)
    if not isinstance(weight, Tensor):
        raise TypeError(
            "linear(): argument 'weight' (position 2) must be Tensor, not "
            f"{type(weight).__name__}"
        )
    shape, wshape = input._shape(), weight._shape()  # read once: a hot path
    if not shape or not wshape:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{len(shape)}D and {len(wshape)}D"
        )
    if len(wshape) != 2:  # torch's: input.matmul(weight.t()), or addmm's refusal
        weight_t = weight.t()  # (its error for more than 2 dimensions)
        if bias is None:
            return input.matmul(weight_t)
        raise RuntimeError(f"mat2 must be a matrix, got {len(wshape)}-D tensor")
    if shape[-1] != wshape[1]:
        rows = input.numel() // shape[-1] if shape[-1] else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{shape[-1]} "
            f"and {wshape[1]}x{wshape[0]})"
        )
    check_dtypes(input, weight, bias)
    if len(shape) != 2:
        return _linear_nd(input, weight, bias, shape)
    weight_t = weight.t()  # torch records TBackward0 here too (next_functions)
    precision = _precision.of("matmul", input, weight)
    if bias is None:
        _check_arguments("mm", self=input, mat2=weight)
        return apply("MmBackward0", _mm_fn, input, weight_t, precision=precision)
    _check_arguments("addmm", self=bias, mat1=input, mat2=weight)
    return apply(
        "AddmmBackward0", _addmm_fn, bias, input, weight_t, precision=precision
    )


def check_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """torch's refusals of linear's mixed dtypes: mm's without a bias, addmm's
    with one."""
    dt, wdt = input.dtype, weight.dtype
    if dt != wdt and bias is None:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_CPP[dt.name]} != {_CPP[wdt.name]}"
        )
    if dt != wdt:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{dt.scalar_type} and {wdt.scalar_type}"
        )
    if bias is not None and (bdt := bias.dtype) != wdt:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got "
            f"{bdt.scalar_type} and {wdt.scalar_type}"
        )


def _linear_nd(input: Tensor, weight: Tensor, bias: Tensor | None, shape) -> Tensor:
    """torch's linear on an input that is not a matrix, node for node: with a
    bias, a contiguous input is flattened to rows for addmm and viewed back
    (ViewBackward0), another one goes through matmul and adds the bias
    (AddBackward0); without one, matmul (its own nodes)."""
    if bias is None:
        return input.matmul(weight.t())
    if not input.is_contiguous():
        return input.matmul(weight.t()) + bias
    rows = 1
    for size in shape[:-1]:  # not -1: a 0 in the shape makes it ambiguous
        rows *= size
    out = linear(input.reshape(rows, shape[-1]), weight, bias)
    return out.view(*shape[:-1], out.shape[-1])
