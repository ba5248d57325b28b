"""Blitz 1, "Tensors": more ways to make a tensor -- ``scalar_tensor``, the
deprecated ``range`` (its end included), ``randint_like``, ``empty_strided``
(compat's memory is zeros, laid out with the strides asked for), ``asarray``
and ``frombuffer`` (sharing memory where torch shares it: with a compat tensor,
a NumPy array or a writable buffer)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from jaxblitz.compat._warn_always import warn_once
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._fresh_layout import laid_out
from jaxblitz.compat.tensor._tensor_base import (
    TensorBase,
    _as_int,
    _type_name,
    sizes,
)
from jaxblitz.compat.tensor.creation import (
    _check_layout,
    _finish,
    _size,
    empty,
    from_numpy,
    full,
    randint,
    tensor,
)

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _number(name: str, arg: str, position: int, value: Any) -> Any:
    """A torch ``Number`` argument: a Python or NumPy number, or a one-element
    tensor's value."""
    if isinstance(value, TensorBase) and value.numel() == 1:
        return value.item()
    if isinstance(value, bool | int | float | np.number | np.bool_):
        return value.item() if isinstance(value, np.generic) else value
    raise TypeError(
        f"{name}(): argument '{arg}' (position {position}) must be Number, not "
        f"{_type_name(value)}"
    )


@declare
def scalar_tensor(
    s: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.scalar_tensor``: a 0-d tensor of ``s``, in the default float dtype
    unless told (an int or bool too)."""
    _check_layout("scalar_tensor", layout)
    s = _number("scalar_tensor", "s", 1, s)
    return full(
        (),
        s,
        dtype=dtype or _dtype.get_default_dtype(),
        device=device,
        requires_grad=requires_grad,
    )


@declare
def range(  # noqa: A001 -- torch's name
    start: Any,
    end: Any,
    step: Any = 1,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.range`` (deprecated): ``start`` to ``end`` inclusive by ``step``,
    in the default float dtype unless told."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because "
        "its behavior is inconsistent with Python's range builtin. Instead, use "
        "torch.arange, which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    _check_layout("range", layout)
    lo, hi, by = (
        _number("range", arg, i, v)
        for i, (arg, v) in enumerate((("start", start), ("end", end), ("step", step)))
    )
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    if dt is _dtype.bool:
        raise NotImplementedError("\"range_cpu\" not implemented for 'Bool'")
    ints = dt.np.kind in "iu"
    if ints:  # torch counts in int64 for the integer dtypes
        lo, hi, by = int(lo), int(hi), int(by)
    if by == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"unsupported range: {lo} -> {hi}")
    if not ((by > 0 and hi >= lo) or (by < 0 and hi <= lo)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if ints:
        n = (hi - lo) // by  # same signs: floor is C++'s truncation
        points = lo + by * np.arange(n + 1, dtype=np.int64)
    else:  # in torch's accumulate type: double, float for half and bfloat16
        acc = np.float64 if dt.np.itemsize >= 4 else np.float32
        n = int(acc((acc(hi) - acc(lo)) / acc(by)))
        points = acc(lo) + np.arange(n + 1, dtype=acc) * acc(by)
    return _finish(points.astype(dt.np), None, device, requires_grad)


def _bounds_checked(low: int, high: int, dt: _dtype.dtype) -> None:
    """torch's ``random_(from, to)`` checks against the dtype's range."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= "
            f"to={high}"
        )
    if dt.np.kind not in "iub":
        return
    lo, hi = (0, 1) if dt is _dtype.bool else (np.iinfo(dt.np).min, np.iinfo(dt.np).max)
    c_name = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char"}.get(
        dt.np_name, {"int16": "short", "int32": "int", "int64": "long"}.get(dt.np_name)
    )
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {c_name}")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {c_name}")


@declare
def randint_like(
    input: Tensor,
    low: Any = None,
    high: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``torch.randint_like(input, high)`` or ``(input, low, high)``: integers
    drawn uniformly from ``[low, high)`` in ``input``'s shape and dtype."""
    _check_layout("randint_like", layout)
    given = ", ".join(_type_name(v) for v in (input, low, high) if v is not None)
    if high is None:
        low, high = 0, low
    if low is None:  # randint_like(x, high=5)
        low = 0
    if high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    if isinstance(high, TensorBase):
        high = high.item()
    if _as_int(low) is None or _as_int(high) is None:
        raise TypeError(
            f"randint_like() received an invalid combination of arguments - got "
            f"({given}), but expected one of:\n * (Tensor input, int low, int high)"
            "\n * (Tensor input, int high)"
        )
    low, high = _as_int(low), _as_int(high)
    dt = _dtype.to_dtype(dtype or input.dtype)
    _bounds_checked(low, high, dt)
    out = randint(
        low,
        high,
        tuple(input.shape),
        generator=generator,
        dtype=dt,
        device=device or _dtype.tensor_device(input),
    )
    out = laid_out(out, memory_format, input)
    if requires_grad:
        out.requires_grad_(True)
    return out


@declare
def empty_strided(
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.empty_strided``: a tensor of ``size`` laid out with ``stride`` in
    a storage just large enough; its values (torch's are whatever the memory
    held) are zeros."""
    _check_layout("empty_strided", layout)
    shape = _size("empty_strided", (size,))
    strides = sizes("empty_strided", (stride,), "stride")
    if len(strides) != len(shape):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of "
            f"strides ({len(strides)})"
        )
    if any(s < 0 for s in strides):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and "
            f"strides={list(strides)}"
        )
    dt = dtype or _dtype.get_default_dtype()
    span = (
        0
        if 0 in shape
        else 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    )
    with no_grad():
        out = empty(span, dtype=dt, device=device).as_strided(shape, strides)
    out._base = None  # a fresh tensor, not a view
    return out.requires_grad_(requires_grad)


def _is_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return not isinstance(obj, np.ndarray | np.generic)


@declare
def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool | None = None,
) -> Tensor:
    """``torch.asarray``: ``obj`` as a tensor, sharing its memory where it can
    (a compat tensor of the dtype and device asked, a NumPy array, an object
    with the buffer protocol), copied where ``copy=True`` or it cannot.
    ``copy=False`` refuses to copy, as torch's does."""
    if isinstance(obj, TensorBase):
        return _from_tensor(obj, dtype, device, copy, requires_grad)
    grad = bool(requires_grad)
    if isinstance(obj, np.ndarray | np.generic):
        array = np.asarray(obj)
        same = dtype is None or _dtype.to_dtype(dtype).np == array.dtype
        cpu = _dtype.factory_device(device).type == "cpu"
        if copy is False and not (same and cpu):
            have = _dtype.to_dtype(array.dtype).scalar_type
            want = _dtype.to_dtype(dtype).scalar_type
            raise ValueError(
                f"can't alias tensor with dtype '{have}' into dtype '{want}'."
            )
        if copy or not same or not cpu or isinstance(obj, np.generic):
            out = tensor(array, dtype=dtype, device=device)
        else:
            out = from_numpy(array)
        return out.requires_grad_(True) if grad else out
    if _is_buffer(obj):
        out = frombuffer(obj, dtype=dtype or _dtype.get_default_dtype())
        if copy:
            out = out.clone()
        return out.requires_grad_(True) if grad else out
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    if isinstance(obj, str | bytes):
        raise TypeError(f"new(): invalid data type '{_type_name(obj)}'")
    return tensor(obj, dtype=dtype, device=device, requires_grad=grad)


def _from_tensor(obj: Tensor, dtype, device, copy, requires_grad) -> Tensor:
    dt = obj.dtype if dtype is None else _dtype.to_dtype(dtype)
    here = _dtype.tensor_device(obj)
    there = here if device is None else _dtype.device(device)
    same = dt is obj.dtype and (here is None or there == here)
    if copy is False and not same:
        raise ValueError(
            f"can't alias tensor with dtype '{obj.dtype.scalar_type}' into dtype "
            f"'{dt.scalar_type}'."
        )
    if requires_grad is None and obj.requires_grad:
        warn_once(
            "asarray",
            "torch.asarray: unspecified requires_grad now defaults to "
            "obj.requires_grad instead of False. Pass requires_grad=False "
            "explicitly to get the old behavior and silence this warning.",
        )
    if copy:
        out = obj.to(there, dt).clone().detach()
        return out.requires_grad_(True) if requires_grad else out
    if same:
        return obj.requires_grad_(True) if requires_grad else obj
    out = obj.detach().to(there, dt)
    return out.requires_grad_(True) if requires_grad else out


@declare
def frombuffer(
    buffer: Any,
    *,
    dtype: Any,
    count: int = -1,
    offset: int = 0,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.frombuffer``: a 1-D tensor over the bytes of an object with the
    buffer protocol, sharing them (a write to either shows in the other)."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    dt = _dtype.to_dtype(dtype)
    length, item = view.nbytes, dt.np.itemsize
    count, offset = _as_int(count), _as_int(offset)
    if length <= 0 or count == 0:
        raise ValueError(
            f"both buffer length ({length}) and count ({count}) must not be 0"
        )
    if not 0 <= offset < length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than "
            f"buffer length ({length} bytes) minus 1"
        )
    if count < 0:
        if (length - offset) % item:
            raise ValueError(
                f"buffer length ({length - offset} bytes) after offset ({offset} "
                f"bytes) must be a multiple of element size ({item})"
            )
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(
            f"requested buffer length ({count} * {item} bytes) after offset "
            f"({offset} bytes) must not be greater than actual buffer length "
            f"({length} bytes)"
        )
    if view.readonly:
        warn_once(
            "frombuffer",
            "The given buffer is not writable, and PyTorch does not support "
            "non-writable tensors. This means you can write to the underlying "
            "(supposedly non-writable) buffer using the tensor. You may want to copy "
            "the buffer to protect its data or make it writable before converting "
            "it to a tensor. This type of warning will be suppressed for the rest "
            "of this program.",
        )
    array = np.frombuffer(view.cast("B"), dtype=dt.np, count=count, offset=offset)
    if view.readonly:  # torch would write into the immutable object: compat copies
        array = array.copy()
    out = from_numpy(array)
    if requires_grad:
        out.requires_grad_(True)
    return out
