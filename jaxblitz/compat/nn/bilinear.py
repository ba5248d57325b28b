"""Blitz 3, "Neural Networks": ``nn.Bilinear`` and ``F.bilinear``,
``y = x1^T A x2 + b`` for each output feature, with torch's checks, names and
initialisation."""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn import init
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import empty

__all__ = ["Bilinear", "bilinear"]


def _bilinear_fn(x1, x2, weight, bias):
    # (..., i), (..., j), (o, i, j) -> (..., o)
    y = jnp.einsum("...i,oij,...j->...o", x1, weight, x2, precision="highest")
    return y if bias is None else y + bias


def bilinear(
    input1: TensorBase,
    input2: TensorBase,
    weight: TensorBase,
    bias: TensorBase | None = None,
) -> TensorBase:
    if _autocast.on:
        return _autocast.run("bilinear", bilinear, input1, input2, weight, bias)
    s1, s2, sw = tuple(input1.shape), tuple(input2.shape), tuple(weight.shape)
    if len(s1) != len(s2):
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {len(s1)} and {len(s2)}"
        )
    for a, b in zip(s1[:-1], s2[:-1], strict=True):
        if a != b:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match: got {a} and {b}"
            )
    if s1[-1] != sw[1]:
        raise RuntimeError(
            "bilinear(): input1 size does not match weight size: got "
            f"{s1[-1]} but expected {sw[1]}"
        )
    if s2[-1] != sw[2]:
        raise RuntimeError(
            "bilinear(): input2 size does not match weight size: got "
            f"{s2[-1]} but expected {sw[2]}"
        )
    if bias is not None and bias.shape[0] != sw[0]:
        raise RuntimeError(
            "bilinear(): bias size does not match weight size: got "
            f"{bias.shape[0]} but expected {sw[0]}"
        )
    dts = {t.dtype for t in (input1, input2, weight, bias) if t is not None}
    if len(dts) > 1:
        dt, other = input1.dtype, next(d for d in dts if d is not input1.dtype)
        raise RuntimeError(
            f"expected scalar type {dt.scalar_type} but found {other.scalar_type}"
        )
    name = "ViewBackward0" if bias is None else "AddBackward0"
    return apply(name, _bilinear_fn, input1, input2, weight, bias)


class Bilinear(Module):
    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: TensorBase, input2: TensorBase) -> TensorBase:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
