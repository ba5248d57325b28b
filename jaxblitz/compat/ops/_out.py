"""Blitz 1, "Tensors": torch's ``out=`` argument, for every op that takes one.

The op computes as it would without ``out``; then, in torch's order: the
autograd refusal (an input or ``out`` that requires grad), the dtype rule of
the op (:mod:`._out_rules`), torch's deprecation warning for a non-empty
``out`` of another shape, and the write into ``out``'s storage as an in-place
op writes: ``out`` itself is returned, views of it see the values, a same-shape
``out`` keeps its strides and its version counter moves. A tuple result (``max``
along a dim, ``sort``) takes a tuple of outs and returns torch's ``<name>_out``
named tuple of them.
"""

from __future__ import annotations

import functools
import math
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.ops._out_rules import ALIASES, CAST, RULES, Rule
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase

_RESIZED = (
    "An output with one or more elements was resized since it had shape {had}, "
    "which does not match the required output shape {want}. This behavior is "
    "deprecated, and in a future PyTorch release outputs will not be resized "
    "unless they have zero elements. You can explicitly reuse an out tensor t by "
    "resizing it, inplace, to zero elements with t.resize_(0). (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)"
)
# torch's arange counts elements: an out of as many keeps quiet
_COUNTED = (
    "The number of elements in the out tensor of shape {had} is {n} which does not "
    "match the computed number of elements {m}. Note that this may occur as a "
    "result of rounding error. The out tensor will be resized to a tensor of shape "
    "({m},). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)"
)

# torch's ops with a list of outs return nothing; its torch.lu (a Python
# function) a plain tuple of them
# torch's kernels that refuse an out sharing any element with an input, the same
# tensor included (ATen's assert_no_overlap)
_NO_OVERLAP = {"cat", "concat", "concatenate", "stack", "gather", "index_select"}
_NO_OVERLAP |= {"masked_select", "take"}
_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to "
    "tensor refer to a single memory location. Please clone() the tensor before "
    "performing the operation."
)


def _span(t: TensorBase) -> tuple[int, int]:
    """The storage elements ``t`` can reach: [first, last + 1)."""
    view = t._view
    if view is None:
        return 0, math.prod(t._s.shape)
    if 0 in view.shape:
        return view.offset, view.offset
    last = sum((n - 1) * st for n, st in zip(view.shape, view.stride, strict=True))
    return view.offset, view.offset + last + 1


def _resized_span(o: TensorBase, result: Any) -> tuple[int, int]:
    """:func:`_span` of ``o`` once resized to hold ``result`` (torch resizes an
    out before it looks for overlaps: a resized out is row-major from its
    offset)."""
    if not isinstance(result, TensorBase) or result.numel() == o.numel():
        return _span(o)
    start = 0 if o._view is None else o._view.offset
    return start, start + result.numel()


def _no_overlap(args: tuple, out: Any, result: Any) -> None:
    outs = list(out) if isinstance(out, tuple | list) else [out]
    results = result if isinstance(result, tuple) else (result,) * len(outs)
    given = []
    for a in args:
        given.extend(a if isinstance(a, tuple | list) else (a,))
    for t in given:
        if not isinstance(t, TensorBase):
            continue
        for o, r in zip(outs, results, strict=False):
            if not isinstance(o, TensorBase):
                continue
            overlap = t is o
            if not overlap and t._s is o._s:
                (a0, a1), (b0, b1) = _span(t), _resized_span(o, r)
                overlap = a0 < a1 and b0 < b1 and a0 < b1 and b0 < a1
            if overlap:
                shape = tuple(r.shape)
                if o.numel() and tuple(o.shape) != shape:  # resized first
                    message = _RESIZED.format(had=list(o.shape), want=list(shape))
                    warnings.warn(message, UserWarning, stacklevel=3)
                raise RuntimeError(_OVERLAP)


_RETURN_NONE = {"split_with_sizes_copy", "unbind_copy", "split_copy"}
_RETURN_PLAIN = {"lu"}


def write_out(name: str, result: Any, out: Any, rule: Any = CAST) -> Any:
    """``result`` written into ``out`` as torch's ``name(..., out=out)`` does."""
    several = isinstance(result, tuple)
    if several and name == "nonzero":  # nonzero(as_tuple=True) takes no out
        if not isinstance(out, TensorBase):
            _outs(name, out, 1, False)
        raise RuntimeError(
            "nonzero does not support the out kwarg when as_tuple is True"
        )
    results = tuple(result) if several else (result,)
    outs = _outs(name, out, len(results), several)
    rules = (rule,) * len(results) if isinstance(rule, Rule) else rule
    if not several and not isinstance(rule, Rule):
        rules = (CAST,)  # the overload with one result is the elementwise one
    if is_grad_enabled() and any(t.requires_grad for t in results + outs):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    for r, o, each in zip(results, outs, rules, strict=True):
        _check_dtype(r.dtype, o.dtype, each)
    for r, o in zip(results, outs, strict=True):
        _write(o, r, counted=name == "arange")
    if not several:
        return outs[0]
    if name in _RETURN_NONE:
        return None
    if name in _RETURN_PLAIN:
        return outs
    return tuple.__new__(_out_type(type(result)), outs)


def _outs(name: str, out: Any, n: int, several: bool) -> tuple:
    if not several:
        if not isinstance(out, TensorBase):
            raise TypeError(
                f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}"
            )
        return (out,)
    if not isinstance(out, tuple | list) or not all(
        isinstance(o, TensorBase) for o in out
    ):
        raise TypeError(
            f"{name}(): argument 'out' must be tuple of Tensors, not "
            f"{type(out).__name__}"
        )
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    return tuple(out)


def _check_dtype(want: _dtype.dtype, got: _dtype.dtype, rule: Rule) -> None:
    ok = want is got if rule.exact else _dtype.can_cast(want, got)
    if not ok:
        raise rule.error(
            rule.message.format(
                want=want.scalar_type,
                got=got.scalar_type,
                want_cpp=_dtype._CPP.get(want.np_name, want.np_name),
                got_cpp=_dtype._CPP.get(got.np_name, got.np_name),
            )
        )


def _write(out: Any, result: Any, counted: bool = False) -> None:
    shape, n = tuple(result.shape), out.numel()
    if tuple(out.shape) != shape:
        if counted and n not in (0, result.numel()):
            message = _COUNTED.format(had=list(out.shape), n=n, m=result.numel())
            warnings.warn(message, UserWarning, stacklevel=4)
        elif n and not counted:
            message = _RESIZED.format(had=list(out.shape), want=list(shape))
            warnings.warn(message, UserWarning, stacklevel=4)
        resize_output(out, shape)
    out._set_data(result.to(out.dtype)._value())


def resize_output(out: Any, shape: tuple) -> None:
    """torch's ``resize_output``: over the storage it has where that is room
    enough, else over a new one."""
    room = math.prod(out._s.shape) - out.storage_offset()
    if math.prod(shape) <= room and out._as is None:
        out.resize_(shape)
    else:
        from jaxblitz.compat.tensor.creation import empty

        out._share(empty(shape, dtype=out.dtype))


@functools.cache
def _out_type(kind: Any) -> type:
    """torch's ``torch.return_types.<name>_out``: the result's named tuple."""
    name = getattr(kind, "name", None) or kind.__name__
    return type(f"{name}_out", (kind,), {"name": f"{name}_out"})


# the wrappers made: an op is given out= once (functools.wraps copies a
# function's attributes, so a marker attribute would spread to its wrappers)
_GIVEN: weakref.WeakSet = weakref.WeakSet()


def takes_out(name: str, fn: Callable[..., Any], rule: Any = CAST) -> Any:
    """``fn`` with torch's keyword ``out=``; ``name`` is torch's for it in the
    autograd refusal (its ATen name: ``div`` for ``true_divide``)."""

    @functools.wraps(fn)
    def op(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        own = rule(*args) if callable(rule) else rule  # a rule per overload
        first = own if isinstance(own, Rule) else own[0]
        if (
            first.takes_dtype
            and kwargs.get("dtype") is None
            and isinstance(out, TensorBase)
        ):
            kwargs["dtype"] = out.dtype
        # torch's out= variants are not autocast
        result = (
            _autocast.off(fn, *args, **kwargs) if _autocast.on else fn(*args, **kwargs)
        )
        if name in _NO_OVERLAP:  # (out as resized for the result, as torch)
            _no_overlap(args, out, result)
        return write_out(name, result, out, own)

    _GIVEN.add(op)
    return op


def give_out(namespace: dict, prefix: str = "") -> None:
    """Give ``out=`` to every op of ``namespace`` (a module's globals) that
    takes it in torch (``prefix``: the op table's, ``"linalg."``)."""
    for key in (*RULES, *ALIASES):
        name = key[len(prefix) :]
        if not key.startswith(prefix) or "." in name:
            continue
        fn = namespace.get(name)
        if fn is None or not callable(fn) or fn in _GIVEN:
            continue
        own = ALIASES.get(key, key)
        aten = own.removeprefix("nn.functional.").replace(".", "_")
        namespace[name] = takes_out(aten, fn, RULES[own])
