"""Blitz 1, "Tensors": ``torch.Tensor`` as a thin handle over a ``jax.Array``.

:class:`Tensor` is the handle (:class:`~jaxblitz.compat._tensor_base.TensorBase`:
storage, shape, dtype, conversions) plus one mixin per kind of method, each in the
module that owns it:

- :class:`~jaxblitz.compat.autograd.graph.AutogradMixin`: ``requires_grad``,
  ``grad_fn``, ``retain_grad``, ``.data``, ``detach``;
- :class:`~jaxblitz.compat.ops.MathMixin`: math, comparisons and operators,
  ``to``/``float``/``cuda``;
- :class:`~jaxblitz.compat.shape_ops.ShapeMixin`: ``view``, ``permute``, ...,
  ``x[idx]`` and ``x[idx] = v``;
- :class:`~jaxblitz.compat.inplace.InplaceMixin`: ``add_``, ``+=``, ``fill_``,
  ``copy_``, ``uniform_``;
- :class:`~jaxblitz.compat.creation.CreationMixin`: ``new_ones``, ``new_tensor``.

Every math op goes through the funnel :func:`jaxblitz.compat.autograd.graph.apply`.
Imports run one way: ``_dtype`` -> ``_tensor_base`` -> ``autograd.graph`` ->
``creation`` -> ``ops`` -> ``shape_ops``/``inplace`` -> this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxblitz.compat import _dtype, _tensor_base, creation
from jaxblitz.compat._scatter import ScatterMixin
from jaxblitz.compat._tensor_base import Size, _as_int, _type_name, sizes
from jaxblitz.compat.autograd import backward as _backward
from jaxblitz.compat.creation import CreationMixin
from jaxblitz.compat.inplace import InplaceMixin
from jaxblitz.compat.ops import MathMixin
from jaxblitz.compat.shape_ops import ShapeMixin

__all__ = ["Size", "Tensor"]


class Tensor(InplaceMixin, MathMixin, ShapeMixin, ScatterMixin, CreationMixin):
    """``torch.Tensor``. Build with ``torch.tensor``/``zeros``/...; see module doc."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any):
        # torch.Tensor(2, 3) (uninitialised float) or torch.Tensor([1, 2]) (data).
        if cls is Tensor and (args or kwargs):
            if len(args) == 1 and _as_int(args[0]) is None:
                data = args[0]
                if not isinstance(data, list | tuple | np.ndarray | Tensor):
                    raise TypeError(
                        f"new(): data must be a sequence (got {_type_name(data)})"
                    )
                return creation.tensor(data, dtype=_dtype.get_default_dtype())
            return creation.empty(sizes("new", args), **kwargs)
        return super().__new__(cls)

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) . gradient into every leaf's ``.grad``."""
        _backward(self, gradient, retain_graph, create_graph, inputs)


_tensor_base.use_tensor_class(Tensor)
