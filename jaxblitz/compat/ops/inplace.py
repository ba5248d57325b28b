"""Blitz 1, "Tensors": in-place ops (``x.add_(y)``, ``x += y``, ``fill_``,
``copy_``, ``uniform_``) as the methods of :class:`InplaceMixin`.

Each computes its result out of place (:mod:`.ops`, :mod:`.creation`) and writes
it into the tensor's storage, so every handle on that storage sees it; the
result's grad_fn becomes the tensor's (see :meth:`AutogradMixin._inplace`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

from jaxblitz.compat import _autocast, ops
from jaxblitz.compat.autograd.graph import AutogradMixin, apply
from jaxblitz.compat.ops._declare import declared
from jaxblitz.compat.ops._numeric import _fill_fn, filled
from jaxblitz.compat.tensor import _meta
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase
from jaxblitz.compat.tensor.creation import (
    default_generator,
    draw,
    tensor,
)

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _in_place(fn: Callable[..., Tensor], name: str = "") -> Callable[..., Tensor]:
    """``x.fn_(...)``: ``fn(x, ...)`` written into ``x``."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        self._check_inplace()
        if _autocast.on:  # torch: in-place variants are not autocast
            return self._inplace(_autocast.off(fn, self, *args, **kwargs))
        return self._inplace(fn(self, *args, **kwargs))

    method.__name__ = (name or fn.__name__) + "_"
    return method


def _uniform(key, shape, dt, a, b):
    return jax.random.uniform(key, shape, dt, a, b)


def _normal(key, shape, dt, a, b):
    return a + b * draw(jax.random.normal, key, shape, dt)


def _random_fill(fill: Callable) -> Callable[..., Tensor]:
    """``x.uniform_(a, b)`` / ``x.normal_(mean, std)`` from compat's generator."""

    def method(
        self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None
    ) -> Tensor:
        self._check_inplace()
        if fill is _normal and b < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {b:g}")
        if _meta.is_meta(self):  # torch's meta kernels draw nothing
            return self
        key = (generator or default_generator).next_key()
        with x64(True):
            array = fill(key, self.shape, self.dtype.np, a, b)
        self._set_data(array)
        return self

    return method


class InplaceMixin(AutogradMixin):
    """``add_`` ... ``tanh_``, ``+=`` and friends, ``fill_``, ``zero_``, ``copy_``,
    ``uniform_`` and ``normal_``."""

    __slots__ = ()

    def fill_(self, value: Any) -> Tensor:
        self._check_inplace()
        return self._inplace(filled(self, value, ("FillBackward3", "FillBackward2")))

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def copy_(self, src: Any, non_blocking: bool = False) -> Tensor:
        self._check_inplace()
        src = src if isinstance(src, TensorBase) else tensor(src)
        src = ops._to_device_of(self, src)  # torch copies across devices
        ops._check_broadcast(self, src)
        shape = tuple(jnp.broadcast_shapes(tuple(src.shape), tuple(self.shape)))
        if shape != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast "
                f"shape {list(shape)}"
            )
        return self._inplace(
            apply("CopyBackwards", _fill_fn, self, src, dt=self.dtype.np_name)
        )

    uniform_ = _random_fill(
        lambda key, shape, dt, a, b: draw(_uniform, key, shape, dt, a, b)
    )
    normal_ = _random_fill(_normal)


# The `name_` method of every op declared with inplace=True (the result is cast
# back to the tensor's dtype where torch allows it, see ``_inplace``), and its
# augmented operator (torch: x += y is x.add_(y), x //= y is x.floor_divide_(y)).
for _name, _op in declared().items():
    if _op.inplace:
        setattr(InplaceMixin, f"{_name}_", _in_place(_op.fn, _name))
    if _op.augmented is not None:
        setattr(
            InplaceMixin, f"__{_op.augmented}__", getattr(InplaceMixin, f"{_name}_")
        )
# The elementwise ones among them (the index ops' `name_` take other arguments).
ELEMENTWISE = [
    name
    for name, op in declared().items()
    if op.inplace
    and name
    not in ("scatter", "scatter_add", "scatter_reduce", "masked_fill", "tril", "triu")
]
# x.polygamma_(n) is torch.polygamma(n, x) written into x; x.float_power_(y) needs
# a float64 x (torch refuses to cast its double result back).
InplaceMixin.polygamma_ = _in_place(ops._special_math.polygamma_method, "polygamma")
InplaceMixin.float_power_ = _in_place(ops._special_math.float_power_base, "float_power")

from jaxblitz.compat.ops._out import resize_output  # noqa: E402

_addbmm_ = InplaceMixin.addbmm_


def _addbmm_resizing(self: Tensor, batch1: Any, batch2: Any, **kwargs: Any) -> Tensor:
    """torch's ``addbmm_``, the one in-place product whose ``self`` need only
    broadcast to the result: ATen resizes ``self`` to it (``addmm_``,
    ``baddbmm_`` and ``addmv_`` refuse), then writes the out-of-place result."""
    shape = None
    tensors = isinstance(batch1, TensorBase) and isinstance(batch2, TensorBase)
    if tensors and batch1.dim() == 3 and batch2.dim() == 3:
        shape = (batch1.shape[1], batch2.shape[2])
    if shape is None or tuple(self.shape) == shape:
        return _addbmm_(self, batch1, batch2, **kwargs)
    self._check_inplace()
    result = ops.addbmm(self, batch1, batch2, **kwargs)  # (refuses what torch does)
    resize_output(self, shape)
    return self.copy_(result)


InplaceMixin.addbmm_ = _addbmm_resizing
