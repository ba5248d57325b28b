"""Blitz 2, "A Gentle Introduction to torch.autograd" (checking it): ``torch.testing``.

``assert_close`` compares tensors, numbers and nested sequences/mappings of them
with PyTorch's rules and words: each dtype's default ``rtol``/``atol``, the
``check_*`` options, ``equal_nan``, ``msg``, and the same ``AssertionError``
message ("Tensor-likes are not close!", the mismatched element count, the
greatest absolute and relative differences and where they are). ``make_tensor``
draws its values from compat's generator, so a seed gives other values than it
gives torch (the ranges, dtypes and options are torch's).
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor.creation import as_tensor, empty, randint, tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# torch's default (rtol, atol) per dtype; any other dtype compares exactly.
_PRECISIONS = {
    _dtype.float16: (0.001, 1e-5),
    _dtype.bfloat16: (0.016, 1e-5),
    _dtype.float32: (1.3e-6, 1e-5),
    _dtype.float64: (1e-7, 1e-7),
}
# assert_allclose's (rtol, atol), from before assert_close
_OLDER_PRECISIONS = {
    _dtype.float16: (1e-3, 1e-3),
    _dtype.float32: (1e-4, 1e-5),
    _dtype.float64: (1e-5, 1e-8),
}
# assert_close's number pairs take their tolerances from these dtypes.
_NUMBER_DTYPES = {int: _dtype.int64, float: _dtype.float64, complex: _dtype.float64}

Message = str | Callable[[str], str] | None


class _Mismatch(Exception):
    """A failed comparison: the error to raise and where in the inputs it was."""

    def __init__(self, kind: type[Exception], msg: str, where: tuple = ()) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.where = kind, msg, where

    def error(self, msg: Message = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.where:
            text += "\n\nThe failure occurred for item " + "".join(
                str([item]) for item in self.where
            )
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """These inputs are not this kind of pair."""


def _tolerances(dtypes, rtol, atol, where, table=_PRECISIONS) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _Mismatch(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}.",
            where,
        )
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*(table.get(d, (0.0, 0.0)) for d in dtypes), strict=True)
    return max(rtols), max(atols)


def _mismatch_text(
    what: str, rtol: float, atol: float, extra: str, abs_diff, rel_diff
) -> str:
    """torch's message: ``abs_diff``/``rel_diff`` are (value, index or None)."""
    equality = rtol == 0 and atol == 0
    lines = [f"{what} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, (diff, index), tol in (
        ("absolute", abs_diff, atol),
        ("relative", rel_diff, rtol),
    ):
        line = (
            f"{kind.title()} difference: {diff}"
            if index is None
            else f"Greatest {kind} difference: {diff} at index {index}"
        )
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_text(actual, expected, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_text(
        "Scalars", rtol, atol, extra, (abs_diff, None), (rel_diff, None)
    )


def _compare_numbers(
    actual, expected, where, *, rtol, atol, equal_nan, check_dtype, **_: Any
) -> None:
    number = (int, float, complex, np.number)
    if not (isinstance(actual, number) and isinstance(expected, number)):
        raise _Unsupported
    actual, expected = (
        x.item() if isinstance(x, np.number) else x for x in (actual, expected)
    )
    rtol, atol = _tolerances(
        [_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, where
    )
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(
            AssertionError,
            f"The (d)types do not match: {type(actual)} != {type(expected)}.",
            where,
        )
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_text(actual, expected, rtol, atol), where)


def _floating(dtype: np.dtype) -> bool:
    return bool(jnp.issubdtype(dtype, jnp.floating))


def _isclose(a: np.ndarray, b: np.ndarray, rtol, atol, equal_nan) -> np.ndarray:
    """torch.isclose, computed in the inputs' dtype."""
    close = a == b
    if not _floating(a.dtype):  # bool and integers
        if rtol == 0 and atol == 0:
            return close
        a, b = a.astype(np.float64), b.astype(np.float64)
    if equal_nan:
        close |= np.isnan(a) & np.isnan(b)
    if rtol == 0 and atol == 0:
        return close
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(a - b)
        return close | (np.isfinite(error) & (error <= atol + np.abs(rtol * b)))


def _tensor_text(a: np.ndarray, b: np.ndarray, matches, rtol, atol) -> str:
    count = matches.size - int(matches.sum())
    extra = (
        f"Mismatched elements: {count} / {matches.size} ({count / matches.size:.1%})"
    )
    a, b, hit = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if not _floating(a.dtype):
        # torch: integers compare as int64; their ratio is the default float
        a, b = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        abs_diff = np.abs(a - b)
        abs_diff[hit] = 0
        rel_diff = abs_diff / np.abs(b)
    if rel_diff.dtype == np.float64 and a.dtype == np.int64:
        rel_diff = rel_diff.astype(np.float32)
    rel_diff[hit] = 0
    shown = []
    for diff in (abs_diff, rel_diff):
        at = int(np.argmax(diff))  # the first greatest, or the first NaN, as torch.max
        index = tuple(int(i) for i in np.unravel_index(at, matches.shape))
        shown.append((diff[at].item(), index))
    return _mismatch_text("Tensor-likes", rtol, atol, extra, *shown)


def _compare_tensors(
    actual,
    expected,
    where,
    *,
    allow_subclasses,
    rtol,
    atol,
    equal_nan,
    check_device,
    check_dtype,
    check_layout,
    check_stride,
    **_: Any,
) -> None:
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = (
            x if isinstance(x, Tensor) else as_tensor(x) for x in (actual, expected)
        )
    except Exception:  # noqa: BLE001 -- not tensor-like: no pair handles it
        raise _Unsupported from None
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, where)

    def differ(name: str, mine: Any, theirs: Any) -> None:
        raise _Mismatch(
            AssertionError,
            f"The values for attribute '{name}' do not match: {mine} != {theirs}.",
            where,
        )

    if actual.shape != expected.shape:
        differ("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        differ("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        differ("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        differ("dtype", actual.dtype, expected.dtype)
    a, b = (x.detach().cpu().numpy() for x in (actual, expected))
    if actual.dtype != expected.dtype:
        common = _dtype.promote_types(actual.dtype, expected.dtype).np
        a, b = a.astype(common), b.astype(common)
    matches = _isclose(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        text = _scalar_text(a.item(), b.item(), rtol, atol)
    else:
        text = _tensor_text(a, b, matches, rtol, atol)
    raise _Mismatch(AssertionError, text, where)


def _compare(actual, expected, where: tuple, options: dict) -> list[_Mismatch]:
    """The mismatches of every pair in (possibly nested) ``actual``/``expected``."""
    sequence = collections.abc.Sequence
    if (
        isinstance(actual, sequence)
        and isinstance(expected, sequence)
        and not isinstance(actual, str)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                "The length of the sequences mismatch: "
                f"{len(actual)} != {len(expected)}",
                where,
            )
        items = [(i, actual[i], expected[i]) for i in range(len(actual))]
    elif isinstance(actual, collections.abc.Mapping) and isinstance(
        expected, collections.abc.Mapping
    ):
        keys, theirs = set(actual.keys()), set(expected.keys())
        if keys != theirs:
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(theirs - keys)}\n"
                f"Additional keys in the actual mapping: {sorted(keys - theirs)}",
                where,
            )
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        items = [(k, actual[k], expected[k]) for k in keys]
    else:
        return _compare_leaf(actual, expected, where, options)
    found = []
    for key, mine, theirs in items:
        found += _compare(mine, theirs, (*where, key), options)
    return found


def _compare_leaf(actual, expected, where, options) -> list[_Mismatch]:
    if actual is None or expected is None:
        if actual is expected:
            return []
        text = f"None mismatch: {actual} is not {expected}"
        return [_Mismatch(AssertionError, text, where)]
    if isinstance(actual, bool | np.bool_) and isinstance(expected, bool | np.bool_):
        if bool(actual) is bool(expected):
            return []
        text = f"Booleans mismatch: {bool(actual)} is not {bool(expected)}"
        return [_Mismatch(AssertionError, text, where)]
    for compare in (_compare_numbers, _compare_tensors):
        try:
            compare(actual, expected, where, **options)
        except _Unsupported:
            continue
        except _Mismatch as mismatch:
            if mismatch.kind is ValueError:  # bad options are raised at once
                raise
            return [mismatch]
        return []
    raise _Mismatch(
        TypeError,
        "No comparison pair was able to handle inputs of type "
        f"{type(actual)} and {type(expected)}.",
        where,
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: Message = None,
) -> None:
    """Raises ``AssertionError`` unless ``actual`` and ``expected`` are close, as
    torch's ``assert_close``: ``|actual - expected| <= atol + rtol * |expected|``
    with the dtype's default tolerances when neither is given."""
    __tracebackhide__ = True
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        found = _compare(actual, expected, (), options)
    except _Mismatch as mismatch:
        raise mismatch.error() from None
    if found:
        raise found[0].error(msg)


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """torch's deprecated ``assert_allclose``: ``assert_close`` with its older
    tolerances, NaNs equal and dtypes promoted."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
        "removed in a future release. Please use `torch.testing.assert_close()` "
        "instead. You can find detailed upgrade instructions in "
        "https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        dtypes = [actual.dtype, expected.dtype]
        rtol, atol = _tolerances(dtypes, None, None, (), _OLDER_PRECISIONS)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )


def _bounds(dtype: _dtype.dtype, low, high) -> tuple[float, float]:
    """torch's make_tensor range for ``dtype``: defaults, checks, clamping."""
    if dtype == _dtype.bool:
        lowest, highest, default = 0, 2, (0, 2)
    elif not dtype.is_floating_point:
        info = jnp.iinfo(dtype.np)
        # torch.randint cannot draw int64's maximum, so that bound stays exclusive
        lowest, highest = info.min, info.max + (dtype != _dtype.int64)
        default = (-9, 10)
    else:
        info = jnp.finfo(dtype.np)
        lowest, highest, default = float(info.min), float(info.max), (-9, 9)
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype.is_floating_point:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or "
            "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
            "`torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype.is_floating_point:
        return low, high
    return math.ceil(low), math.ceil(high)


def make_tensor(
    *shape: Any,
    dtype: _dtype.dtype,
    device: Any,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``, as
    torch's ``make_tensor`` (the defaults are ``[-9, 9)`` for floats, ``[-9, 10)``
    for integers, ``[0, 10)`` for uint8); drawn with compat's generator, so a seed
    gives other values than in torch."""
    if memory_format is not None:
        raise NotImplementedError(
            "make_tensor: memory_format is not supported by jaxblitz.compat "
            "(compat's tensors are contiguous or views)"
        )
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # every other element of a doubled last dimension
        shape = (*shape[:-1], 2 * shape[-1])
    low, high = _bounds(dtype, low, high)
    if dtype.is_floating_point:
        result = empty(shape, dtype=dtype, device=device)
        if high - low >= float(jnp.finfo(dtype.np).max):
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        result = randint(low, high, shape, dtype=dtype, device=device)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        tiny = float(jnp.finfo(dtype.np).tiny) if dtype.is_floating_point else 1
        result[result == 0] = tiny
    if dtype.is_floating_point:
        result.requires_grad = requires_grad
    return result
