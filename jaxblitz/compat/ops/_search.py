"""Blitz 1, "Tensors": searching sorted values and testing membership --
``torch.searchsorted``, ``torch.bucketize`` and ``torch.isin``.

Their results are indices and masks (int64, int32 with ``out_int32``, bool):
nothing to differentiate, so nothing is recorded. The search is torch's own
binary search (``cus_lower_bound``/``cus_upper_bound`` in ATen's Bucketization),
step for step, so that a NaN or an unsorted sequence gives torch's index, not
merely some valid one. Operands meet in torch's promoted dtype, a Python number
as a wrapped number (``searchsorted(int8_seq, 1000)`` wraps 1000 into int8).
"""

from __future__ import annotations

import builtins
import numbers
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import run
from jaxblitz.compat.ops._arith import eq, ne
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import (
    _cast,
    _not_implemented,
    _promote,
    _to_out,
    _value,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._checks import check_range, error
from jaxblitz.compat.tensor._tensor_base import TensorBase, _type_name

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Pure JAX functions
# ---------------------------------------------------------------------------


def bisect(at, start, end, v, *, right: bool, steps: int):
    """torch's binary search, vectorised: the first index in ``[start, end)``
    where ``at(index) >= v`` (``> v`` when ``right``) if the values are sorted,
    and exactly torch's (and ``std::upper_bound``'s) answer if they are not.
    ``steps`` is ``bit_length`` of the widest range: each step halves it."""
    for _ in range(steps):
        active = start < end
        mid = start + ((end - start) >> 1)
        found = at(jnp.where(active, mid, 0))
        go_right = ~(found > v) if right else ~(found >= v)
        start = jnp.where(active & go_right, mid + 1, start)
        end = jnp.where(active & ~go_right, mid, end)
    return start


def _searchsorted_fn(seq, values, sorter=None, *, dt, right, out_dt):
    seq, values = _cast(seq, dt), _cast(values, dt)
    n = seq.shape[-1]
    if seq.ndim > 1:  # one row of seq per row of values

        def row(a, i):
            return jnp.take_along_axis(a, i, axis=-1)
    else:

        def row(a, i):
            return a[i]

    def at(i):
        return row(seq, i if sorter is None else row(sorter, i))

    start = jnp.zeros(values.shape, jnp.int64)
    end = jnp.full(values.shape, n, jnp.int64)
    return bisect(at, start, end, values, right=right, steps=n.bit_length()).astype(
        out_dt
    )


def _isin_fn(elements, test, *, dt, invert, by_sorting):
    e, t = _cast(elements, dt), _cast(test, dt).reshape(-1)
    flat = e.reshape(-1)
    if by_sorting:  # torch's isin_sorting with assume_unique: adjacent equals
        both = jnp.concatenate([flat, t])
        order = jnp.argsort(both, stable=True)
        ordered = both[order]
        same = ordered[1:] != ordered[:-1] if invert else ordered[1:] == ordered[:-1]
        same = jnp.concatenate([same, jnp.full((1,), invert)])
        mask = jnp.zeros(both.shape, bool).at[order].set(same)
        return mask[: flat.size].reshape(e.shape)
    if not t.size:
        return jnp.full(e.shape, invert)
    ordered = jnp.sort(t)  # NaN last, -0.0 equal to 0.0
    i = jnp.minimum(jnp.searchsorted(ordered, flat), t.size - 1)
    found = ordered[i] == flat  # a NaN is in nothing
    return (found != invert).reshape(e.shape)


# ---------------------------------------------------------------------------
# searchsorted, bucketize
# ---------------------------------------------------------------------------


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Number | np.number | np.bool_)


def _invalid(name: str, args: tuple, *overloads: str) -> TypeError:
    got = ", ".join(_type_name(a) for a in args)
    listed = "".join(f" * ({o})\n" for o in overloads)
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but "
        f"expected one of:\n{listed}"
    )


def _numel(v: Any) -> int:
    return v.numel() if isinstance(v, TensorBase) else 1


def _sizes(t: Tensor) -> str:
    return str(list(t.shape))


def _check_sorter(sorted_sequence: Tensor, sorter: Tensor) -> None:
    if tuple(sorter.shape) != tuple(sorted_sequence.shape):
        raise RuntimeError(
            "torch.searchsorted(): boundary and sorter must have the same size, but "
            f"got boundary tensor {_sizes(sorted_sequence)}and got sorter tensor "
            f"{_sizes(sorter)}"
        )
    if sorter.dtype is not _dtype.int64:
        raise RuntimeError(
            "torch.searchsorted(): sorter must be a tensor of long dtype but got "
            f"dtype {sorter.dtype.scalar_type}"
        )
    # torch reads the sorter's extremes to check them; lazily, at the sync point
    check_range(
        sorter,
        0,
        sorted_sequence.shape[-1],
        error("torch.searchsorted(): sorter index out of range"),
        traced="searchsorted(sorter=...) (torch checks its range)",
    )


def _check_shapes(sorted_sequence: Tensor, values: Any) -> None:
    dims, numel = len(values.shape), _numel(values)
    if not (dims > 0 or (numel == 1 and sorted_sequence.dim() == 1)):
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries "
            f"tensor dimension is 1, but we got boundaries tensor dim("
            f"{sorted_sequence.dim()}) and input value's dim({dims}) numel({numel})"
        )
    if sorted_sequence.dim() == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, "
            "but got 0 dimension"
        )
    seq_shape, shape = tuple(sorted_sequence.shape), tuple(values.shape)
    if len(seq_shape) > 1 and (
        len(seq_shape) != len(shape) or seq_shape[:-1] != shape[:-1]
    ):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the "
            "first N-1 dimensions of boundaries tensor and input value tensor must "
            f"match, but we got boundaries tensor {_sizes(sorted_sequence)} and input "
            f"value tensor {_sizes(values)}"
        )


@declare
def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``torch.searchsorted``: where each value would go in the sorted last
    dimension of ``sorted_sequence`` (its row per row of ``input``), the first
    such place, or the last with ``right=True`` / ``side="right"``."""
    if not isinstance(sorted_sequence, TensorBase) or not (
        isinstance(input, TensorBase) or _is_number(input)
    ):
        raise _invalid(
            "searchsorted",
            (sorted_sequence, input),
            "Tensor sorted_sequence, Tensor input, ...",
            "Tensor sorted_sequence, Number self, ...",
        )
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                "torch.searchsorted(): side can only be 'left' or 'right' but got "
                f"{side}"
            )
        if right and side != "right":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got "
                f"side of {side} while right was True"
            )
    if sorter is not None:
        _check_sorter(sorted_sequence, sorter)
    values = input if isinstance(input, TensorBase) else np.asarray(input)
    _check_shapes(sorted_sequence, values)
    out_dt = _dtype.int32 if out_int32 else _dtype.int64
    if out is not None and out.dtype is not out_dt:
        raise RuntimeError(
            "torch.searchsorted(): output tensor's dtype is wrong, it can only be "
            "Int(int32) or Long(int64) depending on whether out_int32 flag is True, "
            f"but we got output tensor's dtype {out.dtype.scalar_type} and out_int32 "
            f"flag is {bool(out_int32)}"
        )
    dt = _promote(sorted_sequence, input)
    if _numel(values) and dt is _dtype.bool:
        raise _not_implemented("searchsorted_out_cpu", dt)
    arrays = [sorted_sequence._value(), _array(input)]
    if sorter is not None:
        arrays.append(sorter._value())
    result = TensorBase._wrap(
        run(
            _searchsorted_fn,
            *arrays,
            dt=dt.np_name,
            right=bool(right) or side == "right",
            out_dt=out_dt.np_name,
        )
    )
    return _to_out(result, out)


def _array(v: Any) -> Any:
    return v._value() if isinstance(v, TensorBase) else _value(v)


@declare
def bucketize(
    input: Any,
    boundaries: Tensor,
    *,
    out_int32: bool = False,
    right: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """``torch.bucketize``: the bucket of each value among the 1-D
    ``boundaries``, ``searchsorted(boundaries, input)``."""
    if not isinstance(boundaries, TensorBase) or not (
        isinstance(input, TensorBase) or _is_number(input)
    ):
        raise _invalid(
            "bucketize",
            (input, boundaries),
            "Tensor input, Tensor boundaries, ...",
            "Number self, Tensor boundaries, ...",
        )
    if boundaries.dim() != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# ---------------------------------------------------------------------------
# isin
# ---------------------------------------------------------------------------


def _check_isin_dtype(dt: _dtype.dtype) -> None:
    if dt is _dtype.bool:
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")


@declare
def isin(
    elements: Any,
    test_elements: Any,
    *,
    assume_unique: bool = False,
    invert: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """``torch.isin``: whether each of ``elements`` is in ``test_elements`` (either
    may be a number), compared in their promoted dtype."""
    tensors = [isinstance(v, TensorBase) for v in (elements, test_elements)]
    if not builtins.any(tensors) or not builtins.all(
        isinstance(v, TensorBase) or _is_number(v) for v in (elements, test_elements)
    ):
        raise _invalid(
            "isin",
            (elements, test_elements),
            "Tensor elements, Tensor test_elements, ...",
            "Tensor elements, Number test_element, ...",
            "Number element, Tensor test_elements, ...",
        )
    for v in (elements, test_elements):
        _check_isin_dtype(_promote(v))
    if not tensors[1]:  # torch: eq / ne against the number
        result = (ne if invert else eq)(elements, test_elements)
        return _to_out(result, out)
    dt = _promote(elements, test_elements)
    n = elements.numel() if tensors[0] else 1
    # torch's choice (NumPy's heuristic): compare with each test element, or sort;
    # only sorting under assume_unique can tell duplicates apart.
    by_sorting = bool(assume_unique) and test_elements.numel() >= builtins.int(
        10.0 * builtins.float(n) ** 0.145
    )
    result = TensorBase._wrap(
        run(
            _isin_fn,
            _array(elements),
            test_elements._value(),
            dt=dt.np_name,
            invert=bool(invert),
            by_sorting=by_sorting and n > 0,
        )
    )
    return _to_out(result, out)
