"""Blitz 4, "Training a classifier": ``torch.nn.utils.parameters_to_vector`` and
``vector_to_parameters`` -- a model's parameters as one flat vector and back
(what second-order methods and weight averaging work on)."""

from __future__ import annotations

from collections.abc import Iterable

from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old: str | None) -> str:
    """torch's check that every parameter is on one device."""
    device = str(param.device)
    if old is not None and device != old:
        raise TypeError(
            "Found two parameters on different devices, this is currently not "
            "supported."
        )
    return device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated, in order (autograd flows
    through, as in torch)."""
    device, vec = None, []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into the parameters' ``.data``, in order."""
    if not isinstance(vec, TensorBase):
        kind = type(vec)
        name = kind.__name__ if kind.__module__ == "builtins" else kind.__qualname__
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n
