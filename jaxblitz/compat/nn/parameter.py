"""Blitz 3 (define the network): ``torch.nn.parameter`` -- where torch defines
``Parameter``, ``Buffer`` and the lazy modules' uninitialized tensors
(``from torch.nn.parameter import Parameter``)."""

from jaxblitz.compat.nn.lazy_modules import (
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
    is_lazy,
)
from jaxblitz.compat.nn.module import Buffer, Parameter

__all__ = [
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
]
