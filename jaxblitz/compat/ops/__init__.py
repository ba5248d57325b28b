"""Blitz 1, "Tensors": torch's math -- arithmetic, unary ops, reductions, matmul,
comparisons and dtype/device moves -- as ``torch.*`` functions and, through
:class:`MathMixin`, as the methods and operators of ``Tensor``.

Each op is a module-level pure JAX function (so the funnel's jit cache keys on it)
passed to :func:`graph.apply` with the grad_fn name torch gives it. The result
dtype is torch's, chosen here before the call (:func:`._dtype.result_type` over the
operands: tensors with dims, 0-dim tensors, Python and NumPy numbers) and passed
as ``dt``; the function casts its inputs to it, as torch's TensorIterator does, so
JAX's own promotion never decides a dtype. Ops without a derivative (comparisons,
logic, ``isnan``) go through :func:`graph.run` and record nothing.

Integer division (``//``, ``%``, ``fmod``, rounded ``div``) reads the divisor, as
torch's CPU kernels do, to raise ``RuntimeError: ZeroDivisionError``; inside
``torch.compile`` an integer tensor divisor is therefore a value the step needs
(a ``CompileError``). Complex numbers are refused with ``NotImplementedError``:
compat has no complex dtypes.

The ops live by job in ``_arith`` (arithmetic, logic, comparisons), ``_unary``,
``_reduce``, ``_linalg``, ``_gather`` (index and mask ops), ``_order`` (topk,
median, unique...) and ``_arrange`` (flip, roll, tril, einsum, softmax), over the
kernels and promotion glue of ``_funnel``. Each op is declared once, beside its
definition (:mod:`._declare`: its torch name, method and in-place variants, what
torch saves for its backward); this module gathers the declared ops (every name
stays importable from here) into :class:`MathMixin`.
"""

from __future__ import annotations

from functools import partialmethod
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxblitz.compat.autograd.graph import AutogradMixin
from jaxblitz.compat.ops import _special_math
from jaxblitz.compat.tensor import _dtype, _meta
from jaxblitz.compat.tensor._argparse import invalid_combination
from jaxblitz.compat.tensor._signatures import TO_OPTIONS
from jaxblitz.compat.tensor._tensor_base import TensorBase, from_host
from jaxblitz.compat.tensor.creation import LEGACY_DTYPES

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# Every op module, so that each op's declaration (ops/_declare.py) is made.
from jaxblitz.compat.ops import (  # noqa: F401 -- loaded for their declarations
    _arith,
    _arrange,
    _combinatorics,
    _copies,
    _decompositions,
    _factories,
    _gather,
    _histogram,
    _householder,
    _joining,
    _legacy_linalg,
    _linalg,
    _numeric,
    _order,
    _real_parts,
    _reduce,
    _search,
    _stats,
    _unary,
    _windows,
    shape_ops,
)
from jaxblitz.compat.ops._arith import (
    add,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    div,
    eq,
    floor_divide,
    ge,
    gt,
    le,
    lt,
    mul,
    ne,
    pow,
    remainder,
    rsub,
    sub,
)
from jaxblitz.compat.ops._arrange import flip
from jaxblitz.compat.ops._declare import declared
from jaxblitz.compat.ops._funnel import (
    _check_broadcast as _check_broadcast,
)
from jaxblitz.compat.ops._funnel import (
    _is_operand,
)
from jaxblitz.compat.ops._funnel import (
    _to_device_of as _to_device_of,
)
from jaxblitz.compat.ops._gather import where
from jaxblitz.compat.ops._linalg import matmul
from jaxblitz.compat.ops._unary import (
    _formatted,
    abs,
    neg,
    positive,
    reciprocal,
    to_dtype,
)

# ---------------------------------------------------------------------------
# As Tensor methods and operators
# ---------------------------------------------------------------------------


def _operator(fn, *, reflected: bool = False, numbers: bool = True):
    """``x + y`` is ``add(x, y)``, ``2 + x`` is ``x.__radd__(2)``; an operand that
    is not a number (``numbers=False``: not an array) gives NotImplemented, so
    Python raises its TypeError (and ``x == None`` is False), as torch."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(self, TensorBase):  # Tensor.__radd__(2, x), unbound
            raise TypeError(
                f"descriptor for 'Tensor' objects doesn't apply to a "
                f"'{type(self).__name__}' object"
            )
        if not _is_operand(other) or not (numbers or hasattr(other, "shape")):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return method


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    return mul(reciprocal(self), other)  # torch's __rdiv__ is exactly this


def _invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type "
            "tensors"
        )
    return bitwise_not(self)


class MathMixin(AutogradMixin):
    """The declared ops as methods (``x.add(y)``; see :mod:`._declare`) and
    operators (``x + y``)."""

    __slots__ = ()

    def where(self, condition: Tensor, other: Any) -> Tensor:
        """``x.where(condition, y)`` is ``torch.where(condition, x, y)``."""
        return where(condition, self, other)

    __add__ = __radd__ = _operator(add)
    __sub__, __rsub__ = _operator(sub), _operator(rsub)
    __mul__ = __rmul__ = _operator(mul)
    __truediv__, __rtruediv__ = _operator(div), _operator(_rtruediv)
    __floordiv__ = _operator(floor_divide)
    __rfloordiv__ = _operator(floor_divide, reflected=True)
    __mod__, __rmod__ = _operator(remainder), _operator(remainder, reflected=True)
    __pow__, __rpow__ = _operator(pow), _operator(pow, reflected=True)
    __matmul__ = _operator(matmul, numbers=False)
    __rmatmul__ = _operator(matmul, reflected=True, numbers=False)
    __and__ = __rand__ = _operator(bitwise_and)
    __or__ = __ror__ = _operator(bitwise_or)
    __xor__ = __rxor__ = _operator(bitwise_xor)
    __lshift__ = _operator(bitwise_left_shift)
    __rlshift__ = _operator(bitwise_left_shift, reflected=True)
    __rshift__ = _operator(bitwise_right_shift)
    __rrshift__ = _operator(bitwise_right_shift, reflected=True)
    __eq__, __ne__ = _operator(eq), _operator(ne)
    __lt__, __le__, __gt__, __ge__ = map(_operator, (lt, le, gt, ge))
    __neg__, __pos__, __abs__, __invert__ = neg, positive, abs, _invert
    # Identity hashing in C, as torch's (optimizer.state[p]); __eq__ above unset it.
    __hash__ = object.__hash__

    # -- dtype and device ----------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``x.to(device)``, ``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(t)``,
        then ``non_blocking`` and ``copy`` (a new tensor even where nothing
        changes), as torch's overloads take them, and ``memory_format``."""
        target_dtype, target_device = kwargs.get("dtype"), kwargs.get("device")
        flags = []  # non_blocking, copy
        for arg in args:
            if isinstance(arg, _dtype.dtype):
                target_dtype = arg
            elif isinstance(arg, TensorBase):
                target_dtype, target_device = arg.dtype, _dtype.tensor_device(arg)
            elif isinstance(arg, str | _dtype.device):
                target_device = arg
            elif isinstance(arg, bool):
                flags.append(arg)
            elif type(arg) is int:  # a device index, as torch.device(arg)
                target_device = arg
            elif arg in _PY_DTYPES:  # x.to(float): a dtype by Python type
                target_dtype = _dtype.to_dtype(arg)
            elif type(arg) in _NOT_TO:
                raise invalid_combination("to", args, kwargs, TO_OPTIONS)
        if target_dtype in _PY_DTYPES:  # x.to(dtype=float)
            target_dtype = _dtype.to_dtype(target_dtype)
        copy = kwargs.get("copy", len(flags) > 1 and flags[1])
        out = self if target_dtype is None else to_dtype(self, target_dtype)
        if target_device is not None:
            dev = _moved_to(_dtype.device(target_device))
            here = _dtype.tensor_device(self)  # None while traced: stays put
            if here is not None and dev != here:
                target = _dtype.placement(dev)
                if dev.type == "meta":  # its shape and dtype; the values dropped
                    moved = _meta.like(out._value())
                elif here.type == "meta":
                    raise NotImplementedError(_meta.NO_DATA)
                elif target is None:  # to the CPU: uncommitted, as CPU tensors are
                    moved = from_host(np.asarray(out._data))
                else:  # committed: the work on it runs there (an int64 or
                    with _dtype.x64(True):  # float64 crosses as itself)
                        moved = jax.device_put(out._data, target)
                out = TensorBase._wrap(moved, out.requires_grad, out._grad_fn)
        formatted = _formatted(out, kwargs.get("memory_format"))
        if copy and formatted is self:
            return self.clone(memory_format=kwargs.get("memory_format"))
        return formatted

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        if device is None or isinstance(device, int):
            return self.to(_dtype.device("cuda", device))
        return self.to(device)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """``x.type()``: 'torch.FloatTensor'; ``x.type(torch.LongTensor)``,
        ``x.type('torch.LongTensor')`` or ``x.type(torch.long)``: a cast."""
        if dtype is None:
            return _type_string(self)
        if isinstance(dtype, str):
            if dtype not in LEGACY_DTYPES:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = LEGACY_DTYPES[dtype]
        if dtype in _PY_DTYPES:  # torch: a Python type is no tensor type here
            raise ValueError(f"invalid type: '{dtype.__name__}'")
        target = getattr(dtype, "dtype", dtype)
        if not isinstance(target, _dtype.dtype):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self.to(target)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other)  # torch: other's type, its device included

    # x.float() is to_dtype(x, torch.float), and so on.
    float = partialmethod(to_dtype, _dtype.float)
    double = partialmethod(to_dtype, _dtype.double)
    half = partialmethod(to_dtype, _dtype.half)
    long = partialmethod(to_dtype, _dtype.long)
    int = partialmethod(to_dtype, _dtype.int)
    bool = partialmethod(to_dtype, _dtype.bool)
    byte = partialmethod(to_dtype, _dtype.uint8)
    char = partialmethod(to_dtype, _dtype.int8)
    short = partialmethod(to_dtype, _dtype.int16)
    bfloat16 = partialmethod(to_dtype, _dtype.bfloat16)


# what no overload of torch's Tensor.to takes (others pass, as before)
_NOT_TO = frozenset((list, tuple, dict, set, object))
_PY_DTYPES = (float, int, bool, complex)  # torch's dtypes by Python type


def _moved_to(d: _dtype.device) -> _dtype.device:
    """The device ``.to(d)`` gives: an accelerator's index filled in (``"cuda"``
    is ``cuda:0``), the CPU's dropped (torch has one CPU device)."""
    if d.type == "cpu":
        return _dtype.device("cpu")
    return d if d.index is not None else _dtype.device(d.type, 0)


def _type_string(t: Any) -> str:
    """``x.type()``: 'torch.FloatTensor', 'torch.cuda.FloatTensor' on a GPU."""
    where = _dtype.tensor_device(t)
    cuda = "cuda." if where is not None and where.type == "cuda" else ""
    return f"torch.{cuda}{t.dtype.scalar_type}Tensor"


# Every declared op (ops/_declare.py) stays importable from here, and x.add(y) is
# add(x, y): those declared with method=True, as Tensor methods of the same name.
globals().update({name: op.fn for name, op in declared().items()})
for _name, _op in declared().items():
    if _op.method:
        setattr(MathMixin, _name, _op.fn)


def _flip_method(self: Any, *dims: Any, **kwargs: Any) -> Any:
    """``x.flip(0)``, ``x.flip(0, 1)``, ``x.flip((0, 1))``: the method takes its
    dims as ints too (``torch.flip`` itself wants a sequence)."""
    if "dims" in kwargs and not dims:  # by keyword: a sequence, as torch's
        return flip(self, kwargs.pop("dims"), **kwargs)
    if kwargs:
        raise TypeError(
            f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'"
        )
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = dims[0]
    return flip(self, dims)


MathMixin.flip = _flip_method
MathMixin.polygamma = _special_math.polygamma_method  # x.polygamma(n): n first
