"""Blitz 3, "Neural Networks" (beyond it, as Learn the Basics and the examples
use them): ``F.one_hot`` and ``nn.Unflatten``."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor._checks import check_range, error


def _one_hot_fn(x, *, num_classes):
    return (x[..., None] == jnp.arange(num_classes, dtype=x.dtype)).astype(x.dtype)


_NEGATIVE = error("Class values must be non-negative.")
_TOO_LARGE = error("Class values must be smaller than num_classes.")


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
    what = "one_hot (torch checks the class values)"
    if num_classes == -1:  # the classes' count decides the shape: read now
        tensor._needs_value(what)
        values = np.asarray(tensor._data)
        if not values.size:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor."
            )
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        num_classes = int(values.max()) + 1
    else:  # torch checks the low end first
        big = 1 << 62
        check_range(tensor, 0, big, _NEGATIVE, traced=what)
        check_range(tensor, -big, num_classes, _TOO_LARGE, traced=what)
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
