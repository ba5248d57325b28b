"""torch's checks of values (an index in range, a class target, a probability in
[0, 1]), made where the values are: at once where they are known, and, where
lazy mode has them pending, recorded with the work and raised at the next sync
point (:func:`jaxblitz.compat.lazy.check`), so that a check never runs the
pending work early -- a loop with a computed index or target still runs as one
program a step.

A check is a module-level function of the arrays (NumPy's or JAX's, the same
code for both: operators and ``astype``) returning a boolean array marking the
wrong elements and the values to name (its shape, or broadcast to it); the error
is made from the first marked value and its position in the flattened marks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat.tensor._meta import MetaArray

if TYPE_CHECKING:
    from jaxblitz.compat.tensor._tensor_base import TensorBase

# Up to this many values, a range check runs on Python ints: cheaper than masks.
_SMALL = 64


def check_values(
    tensors: Sequence[TensorBase],
    find: Callable,
    error: Callable[[Any, int], Exception],
    *,
    traced: str | None = None,
    **static: Any,
) -> None:
    """Raise ``error(value, position)`` for the first element ``find(*arrays,
    **static)`` marks. Inside a trace (``torch.compile``) there are no values:
    with ``traced`` (what needs them) a :class:`TracedValueError` says so, as
    for any value read; without it the check is left out."""
    arrays = [t._value() for t in tensors]
    if any(lazy.pending(a) for a in arrays):
        lazy.check(find, arrays, error, **static)
        return
    if any(isinstance(a, jax.core.Tracer) for a in arrays):
        if traced is not None:
            for t in tensors:
                t._needs_value(traced)
        return
    if any(type(a) is MetaArray for a in arrays):  # torch's meta kernels check
        return  # no values
    marked, values = find(*[t._host() for t in tensors], **static)
    marked = np.asarray(marked)
    if marked.any():
        first = int(np.argmax(marked.reshape(-1)))
        values = np.broadcast_to(values, marked.shape).reshape(-1)
        raise error(values[first].item(), first)


def error(
    message: str, kind: type[Exception] = RuntimeError
) -> Callable[..., Exception]:
    """An error factory for a check whose message names no value."""

    def make(*_: Any) -> Exception:
        return kind(message)

    return make


def outside_unit(x: Any) -> tuple:
    """The elements not in [0, 1] (NaN among them): a probability's check."""
    return ~((x >= 0) & (x <= 1)), x


def _outside(values: Any, *, low: int, high: int, skip: int | None) -> tuple:
    """The values outside ``[low, high)`` (``skip`` aside)."""
    values = values.astype("int64")  # (a uint8 class target compared with -100)
    bad = (values < low) | (values >= high)
    if skip is not None:
        bad = bad & (values != skip)
    return bad, values


def check_range(
    t: TensorBase,
    low: int,
    high: int,
    error: Callable[[Any, int], Exception],
    *,
    skip: int | None = None,
    traced: str | None = None,
) -> None:
    """:func:`check_values` for integer values in ``[low, high)`` (``skip``, an
    ignored value, aside): an index, a class."""
    if not t.numel() or type(t._s.pending) is MetaArray:  # (as check_values)
        return
    pending = t._value()
    if (
        t.numel() <= _SMALL
        and not lazy.pending(pending)
        and not isinstance(pending, jax.core.Tracer)
    ):
        listed = t._host().reshape(-1).tolist()
        if min(listed) >= low and max(listed) < high:
            return
    check_values([t], _outside, error, traced=traced, low=low, high=high, skip=skip)


def check_array_range(
    array: Any, low: int, high: int, error: Callable[[Any, int], Exception]
) -> None:
    """:func:`check_range` for an index already read out of its tensor (an
    array, pending or not); inside a trace, nothing to check."""
    if lazy.pending(array):
        lazy.check(_outside, [array], error, low=low, high=high, skip=None)
    elif (
        not isinstance(array, jax.core.Tracer)
        and type(array) is not MetaArray  # (as check_values)
        and np.size(array)
    ):
        marked, values = _outside(np.asarray(array), low=low, high=high, skip=None)
        if marked.any():
            first = int(np.argmax(marked.reshape(-1)))
            raise error(values.reshape(-1)[first].item(), first)
