"""``torch.autograd.Variable``: the pre-0.4 wrapper, kept for old tutorials.

Since PyTorch 0.4 a Variable *is* a Tensor: ``Variable(t, requires_grad=True)``
returns a tensor sharing ``t``'s storage with the flag set, and every tensor is an
instance of ``Variable``.
"""

from __future__ import annotations

from typing import Any


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        from jaxblitz.compat.tensor._tensor_base import TensorBase

        return isinstance(other, TensorBase)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` detached, sharing its
    storage, with ``requires_grad`` set (``volatile`` is gone, as in torch)."""

    def __new__(
        cls, data: Any = None, requires_grad: bool = False, volatile: Any = None
    ):
        from jaxblitz.compat.tensor._tensor_base import TensorBase
        from jaxblitz.compat.tensor.creation import tensor

        if volatile is not None:
            raise NotImplementedError(
                "Variable(volatile=...) was removed in PyTorch 0.4; use "
                "`with torch.no_grad():` instead"
            )
        if data is None:
            return tensor([])
        if not isinstance(data, TensorBase):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(data).__name__}"
            )
        out = data.detach()
        out.requires_grad_(requires_grad)
        return out
