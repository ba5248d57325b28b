"""Blitz 3, "Neural Networks" (beyond it, as Learn the Basics and the examples
use them): ``F.one_hot`` and ``nn.Unflatten``."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor, _dtype


def _one_hot_fn(x, *, num_classes):
    return (x[..., None] == jnp.arange(num_classes, dtype=x.dtype)).astype(x.dtype)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``torch.nn.functional.one_hot``: int64 classes -> int64 one-hot rows."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            "one_hot(): argument 'input' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError(
            "one_hot is only applicable to index tensor of type LongTensor."
        )
    tensor._needs_value("one_hot (torch checks the class values)")
    values = np.asarray(tensor._data)
    if not values.size and num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if values.size and values.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(values.max()) + 1 if values.size else 0
    elif values.size and values.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return apply("OneHotBackward", _one_hot_fn, tensor, num_classes=int(num_classes))


class Unflatten(Module):
    """``nn.Unflatten(dim, unflattened_size)``: ``input.unflatten(dim, size)``."""

    def __init__(self, dim: int | str, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError(
                "nn.Unflatten with a named dim is not supported by jaxblitz.compat "
                "(named tensors)"
            )
        if not isinstance(unflattened_size, tuple | list) or not all(
            isinstance(n, int) for n in unflattened_size
        ):
            raise TypeError(
                "unflattened_size must be tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
