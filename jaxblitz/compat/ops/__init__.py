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
kernels and promotion glue of ``_funnel``;
this module gathers them (every name stays importable from here) into
:class:`MathMixin`.
"""

from __future__ import annotations

from functools import partialmethod
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxblitz.compat.autograd.graph import AutogradMixin
from jaxblitz.compat.ops import _special_math
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase, from_host
from jaxblitz.compat.tensor.creation import LEGACY_DTYPES

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

from jaxblitz.compat.ops import shape_ops as _shape_ops
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
from jaxblitz.compat.ops._arith import (
    allclose as allclose,
)
from jaxblitz.compat.ops._arith import (
    divide as divide,
)
from jaxblitz.compat.ops._arith import (
    equal as equal,
)
from jaxblitz.compat.ops._arith import (
    fmod as fmod,
)
from jaxblitz.compat.ops._arith import (
    greater as greater,
)
from jaxblitz.compat.ops._arith import (
    greater_equal as greater_equal,
)
from jaxblitz.compat.ops._arith import (
    isclose as isclose,
)
from jaxblitz.compat.ops._arith import (
    isfinite as isfinite,
)
from jaxblitz.compat.ops._arith import (
    isinf as isinf,
)
from jaxblitz.compat.ops._arith import (
    isnan as isnan,
)
from jaxblitz.compat.ops._arith import (
    isneginf as isneginf,
)
from jaxblitz.compat.ops._arith import (
    isposinf as isposinf,
)
from jaxblitz.compat.ops._arith import (
    less as less,
)
from jaxblitz.compat.ops._arith import (
    less_equal as less_equal,
)
from jaxblitz.compat.ops._arith import (
    logical_and as logical_and,
)
from jaxblitz.compat.ops._arith import (
    logical_not as logical_not,
)
from jaxblitz.compat.ops._arith import (
    logical_or as logical_or,
)
from jaxblitz.compat.ops._arith import (
    logical_xor as logical_xor,
)
from jaxblitz.compat.ops._arith import (
    multiply as multiply,
)
from jaxblitz.compat.ops._arith import (
    not_equal as not_equal,
)
from jaxblitz.compat.ops._arith import (
    square as square,
)
from jaxblitz.compat.ops._arith import (
    subtract as subtract,
)
from jaxblitz.compat.ops._arith import (
    true_divide as true_divide,
)
from jaxblitz.compat.ops._arrange import (
    einsum as einsum,
)
from jaxblitz.compat.ops._arrange import (
    flip as flip,
)
from jaxblitz.compat.ops._arrange import (
    fliplr as fliplr,
)
from jaxblitz.compat.ops._arrange import (
    flipud as flipud,
)
from jaxblitz.compat.ops._arrange import (
    ger as ger,
)
from jaxblitz.compat.ops._arrange import (
    log_softmax as log_softmax,
)
from jaxblitz.compat.ops._arrange import (
    outer as outer,
)
from jaxblitz.compat.ops._arrange import (
    repeat_interleave as repeat_interleave,
)
from jaxblitz.compat.ops._arrange import (
    roll as roll,
)
from jaxblitz.compat.ops._arrange import (
    softmax as softmax,
)
from jaxblitz.compat.ops._arrange import (
    tril as tril,
)
from jaxblitz.compat.ops._arrange import (
    triu as triu,
)
from jaxblitz.compat.ops._decompositions import (
    cholesky as cholesky,
)
from jaxblitz.compat.ops._decompositions import (
    cholesky_inverse as cholesky_inverse,
)
from jaxblitz.compat.ops._decompositions import (
    cholesky_solve as cholesky_solve,
)
from jaxblitz.compat.ops._decompositions import (
    cross as cross,
)
from jaxblitz.compat.ops._decompositions import (
    det as det,
)
from jaxblitz.compat.ops._decompositions import (
    diag_embed as diag_embed,
)
from jaxblitz.compat.ops._decompositions import (
    diagflat as diagflat,
)
from jaxblitz.compat.ops._decompositions import (
    dist as dist,
)
from jaxblitz.compat.ops._decompositions import (
    inner as inner,
)
from jaxblitz.compat.ops._decompositions import (
    inverse as inverse,
)
from jaxblitz.compat.ops._decompositions import (
    kron as kron,
)
from jaxblitz.compat.ops._decompositions import (
    logdet as logdet,
)
from jaxblitz.compat.ops._decompositions import (
    matrix_exp as matrix_exp,
)
from jaxblitz.compat.ops._decompositions import (
    matrix_power as matrix_power,
)
from jaxblitz.compat.ops._decompositions import (
    pinverse as pinverse,
)
from jaxblitz.compat.ops._decompositions import (
    qr as qr,
)
from jaxblitz.compat.ops._decompositions import (
    rot90 as rot90,
)
from jaxblitz.compat.ops._decompositions import (
    slogdet as slogdet,
)
from jaxblitz.compat.ops._decompositions import (
    svd as svd,
)
from jaxblitz.compat.ops._decompositions import (  # linear algebra
    trace as trace,
)
from jaxblitz.compat.ops._decompositions import (
    vdot as vdot,
)
from jaxblitz.compat.ops._funnel import (
    _check_broadcast as _check_broadcast,
)
from jaxblitz.compat.ops._funnel import (
    _is_operand,
)
from jaxblitz.compat.ops._funnel import (
    _to_device_of as _to_device_of,
)
from jaxblitz.compat.ops._funnel import (
    result_type as result_type,
)
from jaxblitz.compat.ops._gather import (
    argwhere as argwhere,
)
from jaxblitz.compat.ops._gather import (
    gather as gather,
)
from jaxblitz.compat.ops._gather import (
    index_select as index_select,
)
from jaxblitz.compat.ops._gather import (
    masked_fill as masked_fill,
)
from jaxblitz.compat.ops._gather import (
    masked_select as masked_select,
)
from jaxblitz.compat.ops._gather import (
    nonzero as nonzero,
)
from jaxblitz.compat.ops._gather import (
    scatter as scatter,
)
from jaxblitz.compat.ops._gather import (
    scatter_add as scatter_add,
)
from jaxblitz.compat.ops._gather import (
    scatter_reduce as scatter_reduce,
)
from jaxblitz.compat.ops._gather import (
    take as take,
)
from jaxblitz.compat.ops._gather import (
    where,
)
from jaxblitz.compat.ops._linalg import (
    addmm as addmm,
)
from jaxblitz.compat.ops._linalg import (
    bmm as bmm,
)
from jaxblitz.compat.ops._linalg import (
    dot as dot,
)
from jaxblitz.compat.ops._linalg import (
    matmul,
)
from jaxblitz.compat.ops._linalg import (
    mm as mm,
)
from jaxblitz.compat.ops._linalg import (
    mv as mv,
)
from jaxblitz.compat.ops._order import (
    bincount as bincount,
)
from jaxblitz.compat.ops._order import (
    count_nonzero as count_nonzero,
)
from jaxblitz.compat.ops._order import (
    histc as histc,
)
from jaxblitz.compat.ops._order import (
    kthvalue as kthvalue,
)
from jaxblitz.compat.ops._order import (
    median as median,
)
from jaxblitz.compat.ops._order import (
    mode as mode,
)
from jaxblitz.compat.ops._order import (
    topk as topk,
)
from jaxblitz.compat.ops._order import (
    unique as unique,
)
from jaxblitz.compat.ops._reduce import (
    all as all,
)
from jaxblitz.compat.ops._reduce import (
    amax as amax,
)
from jaxblitz.compat.ops._reduce import (
    amin as amin,
)
from jaxblitz.compat.ops._reduce import (
    any as any,
)
from jaxblitz.compat.ops._reduce import (
    argmax as argmax,
)
from jaxblitz.compat.ops._reduce import (
    argmin as argmin,
)
from jaxblitz.compat.ops._reduce import (
    argsort as argsort,
)
from jaxblitz.compat.ops._reduce import (
    cumprod as cumprod,
)
from jaxblitz.compat.ops._reduce import (
    cumsum as cumsum,
)
from jaxblitz.compat.ops._reduce import (
    logsumexp as logsumexp,
)
from jaxblitz.compat.ops._reduce import (
    max as max,
)
from jaxblitz.compat.ops._reduce import (
    mean as mean,
)
from jaxblitz.compat.ops._reduce import (
    min as min,
)
from jaxblitz.compat.ops._reduce import (
    nansum as nansum,
)
from jaxblitz.compat.ops._reduce import (
    norm as norm,
)
from jaxblitz.compat.ops._reduce import (
    prod as prod,
)
from jaxblitz.compat.ops._reduce import (
    sort as sort,
)
from jaxblitz.compat.ops._reduce import (
    std as std,
)
from jaxblitz.compat.ops._reduce import (
    std_mean as std_mean,
)
from jaxblitz.compat.ops._reduce import (
    sum as sum,
)
from jaxblitz.compat.ops._reduce import (
    var as var,
)
from jaxblitz.compat.ops._reduce import (
    var_mean as var_mean,
)
from jaxblitz.compat.ops._special_math import (
    acosh as acosh,
)
from jaxblitz.compat.ops._special_math import (
    arccosh as arccosh,
)
from jaxblitz.compat.ops._special_math import (
    arcsinh as arcsinh,
)
from jaxblitz.compat.ops._special_math import (
    arctan2 as arctan2,
)
from jaxblitz.compat.ops._special_math import (
    arctanh as arctanh,
)
from jaxblitz.compat.ops._special_math import (
    asinh as asinh,
)
from jaxblitz.compat.ops._special_math import (
    atan2 as atan2,
)
from jaxblitz.compat.ops._special_math import (
    atanh as atanh,
)
from jaxblitz.compat.ops._special_math import (
    copysign as copysign,
)
from jaxblitz.compat.ops._special_math import (
    deg2rad as deg2rad,
)
from jaxblitz.compat.ops._special_math import (
    digamma as digamma,
)
from jaxblitz.compat.ops._special_math import (
    erfc as erfc,
)
from jaxblitz.compat.ops._special_math import (
    erfinv as erfinv,
)
from jaxblitz.compat.ops._special_math import (
    float_power as float_power,
)
from jaxblitz.compat.ops._special_math import (
    fmax as fmax,
)
from jaxblitz.compat.ops._special_math import (
    fmin as fmin,
)
from jaxblitz.compat.ops._special_math import (
    frexp as frexp,
)
from jaxblitz.compat.ops._special_math import (
    gcd as gcd,
)
from jaxblitz.compat.ops._special_math import (
    heaviside as heaviside,
)
from jaxblitz.compat.ops._special_math import (
    hypot as hypot,
)
from jaxblitz.compat.ops._special_math import (
    i0 as i0,
)
from jaxblitz.compat.ops._special_math import (
    igamma as igamma,
)
from jaxblitz.compat.ops._special_math import (
    igammac as igammac,
)
from jaxblitz.compat.ops._special_math import (
    isreal as isreal,
)
from jaxblitz.compat.ops._special_math import (
    lcm as lcm,
)
from jaxblitz.compat.ops._special_math import (
    ldexp as ldexp,
)
from jaxblitz.compat.ops._special_math import (
    lgamma as lgamma,
)
from jaxblitz.compat.ops._special_math import (
    logaddexp as logaddexp,
)
from jaxblitz.compat.ops._special_math import (
    logaddexp2 as logaddexp2,
)
from jaxblitz.compat.ops._special_math import (
    logit as logit,
)
from jaxblitz.compat.ops._special_math import (
    mvlgamma as mvlgamma,
)
from jaxblitz.compat.ops._special_math import (
    nan_to_num as nan_to_num,
)
from jaxblitz.compat.ops._special_math import (
    nextafter as nextafter,
)
from jaxblitz.compat.ops._special_math import (
    polygamma as polygamma,
)
from jaxblitz.compat.ops._special_math import (
    rad2deg as rad2deg,
)
from jaxblitz.compat.ops._special_math import (
    sgn as sgn,
)
from jaxblitz.compat.ops._special_math import (
    signbit as signbit,
)
from jaxblitz.compat.ops._special_math import (
    sinc as sinc,
)
from jaxblitz.compat.ops._special_math import (
    xlogy as xlogy,
)
from jaxblitz.compat.ops._stats import (  # more reductions and scans
    aminmax as aminmax,
)
from jaxblitz.compat.ops._stats import (
    corrcoef as corrcoef,
)
from jaxblitz.compat.ops._stats import (
    cov as cov,
)
from jaxblitz.compat.ops._stats import (
    cummax as cummax,
)
from jaxblitz.compat.ops._stats import (
    cummin as cummin,
)
from jaxblitz.compat.ops._stats import (
    logcumsumexp as logcumsumexp,
)
from jaxblitz.compat.ops._stats import (
    msort as msort,
)
from jaxblitz.compat.ops._stats import (
    nanmean as nanmean,
)
from jaxblitz.compat.ops._stats import (
    nanmedian as nanmedian,
)
from jaxblitz.compat.ops._stats import (
    nanquantile as nanquantile,
)
from jaxblitz.compat.ops._stats import (
    quantile as quantile,
)
from jaxblitz.compat.ops._unary import (
    _formatted,
    abs,
    neg,
    positive,
    reciprocal,
    to_dtype,
)
from jaxblitz.compat.ops._unary import (
    absolute as absolute,
)
from jaxblitz.compat.ops._unary import (
    acos as acos,
)
from jaxblitz.compat.ops._unary import (
    addcdiv as addcdiv,
)
from jaxblitz.compat.ops._unary import (
    addcmul as addcmul,
)
from jaxblitz.compat.ops._unary import (
    arccos as arccos,
)
from jaxblitz.compat.ops._unary import (
    arcsin as arcsin,
)
from jaxblitz.compat.ops._unary import (
    arctan as arctan,
)
from jaxblitz.compat.ops._unary import (
    asin as asin,
)
from jaxblitz.compat.ops._unary import (
    atan as atan,
)
from jaxblitz.compat.ops._unary import (
    ceil as ceil,
)
from jaxblitz.compat.ops._unary import (
    clamp as clamp,
)
from jaxblitz.compat.ops._unary import (
    clamp_max as clamp_max,
)
from jaxblitz.compat.ops._unary import (
    clamp_min as clamp_min,
)
from jaxblitz.compat.ops._unary import (
    clip as clip,
)
from jaxblitz.compat.ops._unary import (
    cos as cos,
)
from jaxblitz.compat.ops._unary import (
    cosh as cosh,
)
from jaxblitz.compat.ops._unary import (
    erf as erf,
)
from jaxblitz.compat.ops._unary import (
    exp as exp,
)
from jaxblitz.compat.ops._unary import (
    exp2 as exp2,
)
from jaxblitz.compat.ops._unary import (
    expm1 as expm1,
)
from jaxblitz.compat.ops._unary import (
    fix as fix,
)
from jaxblitz.compat.ops._unary import (
    floor as floor,
)
from jaxblitz.compat.ops._unary import (
    frac as frac,
)
from jaxblitz.compat.ops._unary import (
    lerp as lerp,
)
from jaxblitz.compat.ops._unary import (
    log as log,
)
from jaxblitz.compat.ops._unary import (
    log1p as log1p,
)
from jaxblitz.compat.ops._unary import (
    log2 as log2,
)
from jaxblitz.compat.ops._unary import (
    log10 as log10,
)
from jaxblitz.compat.ops._unary import (
    maximum as maximum,
)
from jaxblitz.compat.ops._unary import (
    minimum as minimum,
)
from jaxblitz.compat.ops._unary import (
    negative as negative,
)
from jaxblitz.compat.ops._unary import (
    relu as relu,
)
from jaxblitz.compat.ops._unary import (
    round as round,
)
from jaxblitz.compat.ops._unary import (
    rsqrt as rsqrt,
)
from jaxblitz.compat.ops._unary import (
    sigmoid as sigmoid,
)
from jaxblitz.compat.ops._unary import (
    sign as sign,
)
from jaxblitz.compat.ops._unary import (
    sin as sin,
)
from jaxblitz.compat.ops._unary import (
    sinh as sinh,
)
from jaxblitz.compat.ops._unary import (
    sqrt as sqrt,
)
from jaxblitz.compat.ops._unary import (
    tan as tan,
)
from jaxblitz.compat.ops._unary import (
    tanh as tanh,
)
from jaxblitz.compat.ops._unary import (
    trunc as trunc,
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
    """The functions above as methods (``x.add(y)``; see :data:`_METHODS`) and
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
        copy = kwargs.get("copy", len(flags) > 1 and flags[1])
        out = self if target_dtype is None else to_dtype(self, target_dtype)
        if target_device is not None:
            dev = _moved_to(_dtype.device(target_device))
            here = _dtype.tensor_device(self)  # None while traced: stays put
            if here is not None and dev != here:
                target = _dtype.placement(dev)
                if target is None:  # to the CPU: uncommitted, as CPU tensors are
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
        return self.to(getattr(dtype, "dtype", dtype))

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


# x.add(y) is add(x, y): the functions above, as Tensor methods of the same name.
_METHODS = """
    add sub mul div true_divide floor_divide remainder fmod pow square
    multiply divide subtract matmul mm mv dot bmm addmm addcmul addcdiv lerp
    neg negative abs absolute sign positive floor ceil round trunc fix frac
    exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal erf sigmoid relu
    sin cos tan asin acos atan arcsin arccos arctan sinh cosh tanh
    clamp clip clamp_min clamp_max maximum minimum
    sum nansum mean prod cumsum cumprod std var logsumexp max min amax amin norm
    argmax argmin all any sort argsort
    gather scatter scatter_add scatter_reduce index_select masked_fill
    masked_select take nonzero argwhere
    topk kthvalue median mode count_nonzero unique bincount histc
    flip fliplr flipud roll tril triu repeat_interleave outer ger
    softmax log_softmax
    eq ne lt le gt ge greater greater_equal less less_equal not_equal
    equal allclose isclose isnan isinf isfinite isposinf isneginf
    logical_and logical_or logical_xor logical_not
    bitwise_and bitwise_or bitwise_xor bitwise_not
    bitwise_left_shift bitwise_right_shift
    acosh arccosh asinh arcsinh atanh arctanh atan2 arctan2 copysign deg2rad rad2deg
    erfc erfinv digamma lgamma mvlgamma i0 igamma igammac hypot logaddexp logaddexp2
    logit nextafter sinc sgn signbit xlogy float_power fmax fmin gcd lcm heaviside
    ldexp frexp nan_to_num isreal
    aminmax nanmean nanmedian quantile nanquantile logcumsumexp cummax cummin msort
    corrcoef cov
    trace kron inner vdot cross dist diag_embed diagflat rot90
    matrix_power matrix_exp
    det logdet slogdet inverse pinverse cholesky cholesky_solve cholesky_inverse qr svd
""".split()  # noqa: SIM905 -- a word per method reads better than 120 quoted names
for _name in _METHODS:
    setattr(MathMixin, _name, globals()[_name])
MathMixin.diag = _shape_ops.diag  # x.diag(k): torch.diag (compat/ops/shape_ops.py)


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
MathMixin.polygamma = _special_math.polygamma_method  # x.polygamma(n)
