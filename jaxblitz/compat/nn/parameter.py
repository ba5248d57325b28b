"""Blitz 3 (define the network): ``torch.nn.parameter`` -- where torch defines
``Parameter`` and the lazy modules' uninitialized tensors
(``from torch.nn.parameter import Parameter``)."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.nn.lazy_modules import (
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
    is_lazy,
)
from jaxblitz.compat.nn.module import Parameter

__all__ = [
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
]

__getattr__ = _not_offered.refuser(
    __name__,
    "torch.nn.parameter",
    {"Buffer": "not implemented: Module.register_buffer(name, tensor) registers one"},
)
