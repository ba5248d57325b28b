"""Blitz 1, "Tensors": attach torch's method names and operators to :class:`Tensor`.

The functions live in :mod:`.ops`, :mod:`.shape_ops` and :mod:`.creation`; this
module only wires them up (``x.add(y)``, ``x + y``, ``x.add_(y)``, ``x.view(...)``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat import _dtype, creation, ops, shape_ops
from jaxblitz.compat.autograd.graph import no_grad, x64
from jaxblitz.compat.tensor import Tensor, sizes

# -- out-of-place methods -----------------------------------------------------
for _name in [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "matmul",
    "mm",
    "neg",
    "exp",
    "log",
    "sqrt",
    "abs",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "clamp",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "norm",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "equal",
    "allclose",
]:
    setattr(Tensor, _name, getattr(ops, _name))
for _name in [
    "view",
    "reshape",
    "flatten",
    "permute",
    "t",
    "transpose",
    "expand",
    "repeat",
    "squeeze",
    "unsqueeze",
    "clone",
    "contiguous",
]:
    setattr(Tensor, _name, getattr(shape_ops, _name))
Tensor.T = property(shape_ops.T)
Tensor.mT = property(lambda self: self.transpose(-2, -1))
Tensor.multiply, Tensor.divide, Tensor.subtract = ops.mul, ops.div, ops.sub
Tensor.dot = Tensor.mv = ops.matmul
Tensor.clip = ops.clamp
Tensor.__getitem__ = shape_ops.getitem
Tensor.__setitem__ = shape_ops.setitem

# -- operators ------------------------------------------------------------------
Tensor.__add__ = Tensor.__radd__ = lambda a, b: ops.add(a, b)
Tensor.__sub__ = lambda a, b: ops.sub(a, b)
Tensor.__rsub__ = lambda a, b: ops.rsub(a, b)
Tensor.__mul__ = Tensor.__rmul__ = lambda a, b: ops.mul(a, b)
Tensor.__truediv__ = lambda a, b: ops.div(a, b)
Tensor.__rtruediv__ = lambda a, b: ops.mul(ops.pow(a, -1), b)
Tensor.__pow__ = lambda a, b: ops.pow(a, b)
Tensor.__rpow__ = lambda a, b: ops.pow(creation.tensor(b, dtype=a.dtype), a)
Tensor.__matmul__ = lambda a, b: ops.matmul(a, b)
Tensor.__rmatmul__ = lambda a, b: ops.matmul(creation.tensor(b), a)
Tensor.__neg__ = ops.neg
Tensor.__abs__ = ops.abs
Tensor.__pos__ = lambda a: a
Tensor.__eq__, Tensor.__ne__ = ops.eq, ops.ne
Tensor.__lt__, Tensor.__le__, Tensor.__gt__, Tensor.__ge__ = (
    ops.lt,
    ops.le,
    ops.gt,
    ops.ge,
)
Tensor.__floordiv__ = lambda a, b: ops._binary("DivBackward2", jnp.floor_divide, a, b)
Tensor.__mod__ = lambda a, b: ops._binary("RemainderBackward0", jnp.remainder, a, b)
Tensor.__and__ = lambda a, b: ops._compare(
    jnp.logical_and if a.dtype is _dtype.bool else jnp.bitwise_and, a, b
)
Tensor.__or__ = lambda a, b: ops._compare(
    jnp.logical_or if a.dtype is _dtype.bool else jnp.bitwise_or, a, b
)
Tensor.__invert__ = lambda a: Tensor._wrap(jnp.invert(a._data))


# -- in-place ---------------------------------------------------------------------
def _inplace(fn):
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        self._check_inplace()
        return self._inplace(fn(self, *args, **kwargs))

    method.__name__ = fn.__name__ + "_"
    return method


for _name in [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "clamp",
    "neg",
    "exp",
    "sqrt",
    "abs",
    "relu",
    "sigmoid",
    "tanh",
]:
    setattr(Tensor, _name + "_", _inplace(getattr(ops, _name)))
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_


def _fill(self: Tensor, value: Any) -> Tensor:
    self._check_inplace()
    with no_grad():
        filled = creation.full(self.shape, value, dtype=self.dtype)
    if self._grad_fn is not None:  # keeps the graph valid: d(fill)/d(self) = 0
        filled = ops.add(ops.mul(self, 0), filled)
    return self._inplace(filled)


Tensor.fill_ = _fill
Tensor.zero_ = lambda self: _fill(self, 0)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    self._check_inplace()
    src = src if isinstance(src, Tensor) else creation.tensor(src)
    result = (
        ops.add(ops.mul(self, 0), src.to(self.dtype))
        if src.requires_grad
        else (Tensor._wrap(jnp.broadcast_to(src.to(self.dtype)._data, self.shape)))
    )
    return self._inplace(result)


Tensor.copy_ = copy_


def _random_(draw):
    def method(
        self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None
    ) -> Tensor:
        self._check_inplace()
        key = (generator or creation.default_generator).next_key()
        with x64(True):
            array = draw(key, self.shape, self.dtype.np, a, b)
        self._set_data(array)
        return self

    return method


Tensor.uniform_ = _random_(
    lambda key, shape, dt, a, b: jax.random.uniform(key, shape, dt, a, b)
)
Tensor.normal_ = _random_(
    lambda key, shape, dt, a, b: a + b * jax.random.normal(key, shape, dt)
)


def t_(self: Tensor) -> Tensor:
    self._check_inplace()
    result = self.t()
    self._set_data(result._data)
    if result._grad_fn is not None:
        self._grad_fn = result._grad_fn
    return self


Tensor.t_ = t_


# -- dtype / device ----------------------------------------------------------------
def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.to(device)``, ``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(other)``."""
    target_dtype, target_device = kwargs.get("dtype"), kwargs.get("device")
    for arg in args:
        if isinstance(arg, _dtype.dtype):
            target_dtype = arg
        elif isinstance(arg, Tensor):
            target_dtype, target_device = arg.dtype, arg.device
        elif isinstance(arg, str | _dtype.device):
            target_device = arg
    out = self if target_dtype is None else ops.to_dtype(self, target_dtype)
    if target_device is not None:
        dev = _dtype.device(target_device)
        if dev != self.device:
            jdev = _dtype.jax_device(dev)
            moved = Tensor._wrap(
                jax.device_put(out._data, jdev), out.requires_grad, out._grad_fn
            )
            out = moved
    return out


Tensor.to = to
Tensor.cuda = lambda self, device=None, non_blocking=False: to(self, "cuda")
Tensor.cpu = lambda self: to(self, "cpu")
Tensor.type = lambda self, dtype=None: (
    f"torch.{_TYPE_PREFIX}{_type_name(self)}Tensor"
    if dtype is None
    else to(self, dtype)
)
_TYPE_PREFIX = ""


def _type_name(t: Tensor) -> str:
    from jaxblitz.compat.tensor import _TYPE_NAMES

    return _TYPE_NAMES[t.dtype.name]


for _name, _dt in (
    ("float", _dtype.float32),
    ("double", _dtype.float64),
    ("half", _dtype.float16),
    ("long", _dtype.int64),
    ("int", _dtype.int32),
    ("bool", _dtype.bool),
):
    setattr(Tensor, _name, lambda self, _dt=_dt: ops.to_dtype(self, _dt))


# -- new_* -------------------------------------------------------------------------
def _new(fn):
    def method(
        self: Tensor,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        size = sizes(method.__name__, size)
        return fn(
            size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad
        )

    method.__name__ = "new_" + fn.__name__
    return method


Tensor.new_ones, Tensor.new_zeros = _new(creation.ones), _new(creation.zeros)
Tensor.new_empty = _new(creation.empty)
Tensor.new_tensor = lambda self, data, dtype=None, **kw: creation.tensor(
    data, dtype=dtype or self.dtype, **kw
)
Tensor.new_full = lambda self, size, fill_value, dtype=None, **kw: creation.full(
    size, fill_value, dtype=dtype or self.dtype, **kw
)
