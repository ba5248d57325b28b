"""Blitz 1, "Tensors": rearranging copies and a few products -- ``flip``,
``roll``, ``tril``/``triu``, ``repeat_interleave``, ``outer``, ``einsum`` -- and
``torch.softmax``/``Tensor.softmax`` (the op of ``nn.functional.softmax``)."""

from __future__ import annotations

import builtins
import string
import warnings
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _check_cast,
    _check_devices,
    _promote,
    _require_tensors,
    _tensor,
    _to_out,
)
from jaxblitz.compat.ops._reduce import _dim
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._argparse import must_be
from jaxblitz.compat.tensor._tensor_base import (
    TensorBase,
    _as_int,
    _type_name,
    wrap_dim,
)
from jaxblitz.compat.tensor.creation import arange

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor


def _flip_fn(x, *, axis):
    return jnp.flip(x, axis) if axis else x + jnp.zeros((), x.dtype)


def _roll_fn(x, *, shift, axis):
    if axis is None:
        return jnp.roll(x.reshape(-1), shift).reshape(x.shape)
    return jnp.roll(x, shift, axis)


def _tri_fn(x, *, k, lower):
    return jnp.tril(x, k) if lower else jnp.triu(x, k)


def _outer_fn(x, y, *, dt):
    return jnp.outer(x.astype(dt), y.astype(dt))


def _repeat_interleave_fn(x, *, repeats, axis, total):
    return jnp.repeat(x, np.asarray(repeats), axis=axis, total_repeat_length=total)


def _einsum_fn(*xs, equation, dt, precision):
    return jnp.einsum(equation, *(x.astype(dt) for x in xs), precision=precision)


# ---------------------------------------------------------------------------
# flip, roll, tril, triu
# ---------------------------------------------------------------------------


def _dims_tuple(name: str, dims: Any) -> tuple:
    if isinstance(dims, builtins.int):
        raise TypeError(
            f"{name}(): argument 'dims' (position 2) must be tuple of ints, not int"
        )
    return tuple(dims)


@declare
def flip(input: Tensor, dims: Any) -> Tensor:
    """``torch.flip``: a copy with the order of ``dims`` reversed."""
    _require_tensors("flip", input)
    dims = _dims_tuple("flip", dims)  # an int is refused, as torch's (not 0 dims)
    axis = _dim(dims, input.dim()) if dims else ()
    axis = () if axis is None else axis
    return apply("FlipBackward0", _flip_fn, input, axis=axis)


@declare(method=True)
def fliplr(input: Tensor) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@declare(method=True)
def flipud(input: Tensor) -> Tensor:
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@declare(method=True)
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """``torch.roll``: elements shifted along ``dims`` (the flattened tensor if
    none), wrapping round."""
    _require_tensors("roll", input)
    shifts = (shifts,) if isinstance(shifts, builtins.int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0"
            )
        return apply("RollBackward0", _roll_fn, input, shift=shifts[0], axis=None)
    dims = (dims,) if isinstance(dims, builtins.int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if not input.dim():
        raise IndexError(
            f"Dimension specified as {dims[0]} but tensor has no dimensions"
        )
    axis = tuple(wrap_dim(d, input.dim()) for d in dims)
    return apply("RollBackward0", _roll_fn, input, shift=shifts, axis=axis)


def _tri(name: str, lower: bool):
    def fn(input: Tensor, diagonal: int = 0) -> Tensor:
        _require_tensors(name, input)
        if input.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        grad_fn = "TrilBackward0" if lower else "TriuBackward0"
        return apply(grad_fn, _tri_fn, input, k=diagonal, lower=lower)

    fn.__name__ = name
    return fn


tril = _tri("tril", lower=True)
declare.alias("tril", tril, method=True, inplace=True)
triu = _tri("triu", lower=False)
declare.alias("triu", triu, method=True, inplace=True)

# ---------------------------------------------------------------------------
# repeat_interleave, outer, einsum
# ---------------------------------------------------------------------------


@declare(method=True)
def repeat_interleave(
    input: Tensor,
    repeats: Any = None,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """``torch.repeat_interleave``: each element (slice along ``dim``) repeated;
    ``repeat_interleave(counts)`` gives ``arange`` repeated by ``counts``."""
    _require_tensors("repeat_interleave", input)
    if repeats is None:  # torch.repeat_interleave(repeats)
        counts = input
        if counts.dim() > 1 or counts.dtype not in (_dtype.int64, _dtype.int32):
            raise RuntimeError("repeats has to be Long or Int tensor")
        return repeat_interleave(arange(counts.numel()), counts, 0)
    if isinstance(repeats, TensorBase):
        repeats._needs_value("repeat_interleave (its size depends on repeats)")
        counts = np.asarray(repeats._data).reshape(-1)
    else:
        counts = np.asarray([repeats])
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    x = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None else wrap_dim(dim, input.dim())
    size = x.shape[axis] if x.dim() else 1
    if counts.size not in (1, size):
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {counts.size} and input.size({axis}) = {size}"
        )
    counts = tuple(builtins.int(c) for c in np.broadcast_to(counts, (size,)))
    return apply(
        "RepeatInterleaveBackward0",
        _repeat_interleave_fn,
        x if x.dim() else x.reshape(1),
        repeats=counts,
        axis=axis,
        total=builtins.sum(counts),
    )


@declare(method=True)
def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``torch.outer`` (``ger``): ``input[i] * vec2[j]``; torch records a mul."""
    _require_tensors("outer", input, vec2)
    for name, v in (("self", input), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(
                f"outer: Expected 1-D argument {name}, but got {v.dim()}-D"
            )
    dt = _promote(input, vec2)
    _check_cast(dt, out)
    return _to_out(apply("MulBackward0", _outer_fn, input, vec2, dt=dt.np_name), out)


ger = outer
declare.alias("ger", ger, method=True)


@declare
def einsum(equation: Any, *operands: Any) -> Tensor:
    """``torch.einsum``: operands given one by one or as one list, or in the
    sublist format ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (``...`` as
    ``Ellipsis``)."""
    if _autocast.on:
        return _autocast.run("einsum", einsum, equation, *operands)
    if isinstance(equation, TensorBase):  # the sublist format
        equation, operands = _sublists(equation, *operands)
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(
            "einsum(): argument 'equation' (position 1) must be str, not "
            f"{_type_name(equation)}"
        )
    equation = "".join(equation.split())  # torch ignores whitespace
    for k, term in enumerate(equation.split("->")[0].split(",")):
        if "." in term.replace("...", "", 1):
            raise RuntimeError(
                f"einsum(): found '.' for operand {k} that is not part of any ellipsis"
            )
    _require_tensors("einsum", *operands[:1])
    dt = _einsum_dtype(equation, operands)
    _check_devices(*operands)
    return apply(
        "EinsumBackward",
        _einsum_fn,
        *operands,
        equation=equation,
        dt=dt.np_name,
        precision=_precision.of("matmul", *operands),
    )


def _sums_out(equation: str) -> bool:
    """Whether ``equation`` sums over any label (a contraction or a reduction)."""
    lhs, arrow, out = equation.partition("->")
    terms = lhs.split(",")
    if not arrow:  # implicit output: the labels seen once, with any ellipsis
        labels = "".join(t.replace("...", "") for t in terms)
        return any(labels.count(c) > 1 for c in labels)
    kept = set(out.replace("...", ""))
    dropped_ellipsis = "..." not in out and any("..." in t for t in terms)
    return dropped_ellipsis or any(c not in kept for t in terms for c in t if c != ".")


def _einsum_dtype(equation: str, operands: tuple) -> _dtype.dtype:
    # torch: one operand is reduced with sum() (bool and ints give int64); a
    # product with nothing summed is mul() (promoting); a contraction is bmm(),
    # which takes one dtype only and no bool
    first = operands[0].dtype
    if not _sums_out(equation):
        return _promote(*operands) if len(operands) > 1 else first
    if len(operands) == 1:
        return first if first.is_floating_point else _dtype.int64
    if first is _dtype.bool:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    for t in operands[1:]:
        if t.dtype is not first:
            raise RuntimeError(
                f"expected scalar type {first.scalar_type} "
                f"but found {t.dtype.scalar_type}"
            )
    return first


_LETTERS = string.ascii_letters  # torch: sublist labels 0-25 'a'-'z', 26-51 'A'-'Z'


def _sublist(labels: Any) -> str:
    out = []
    for label in labels:
        if label is Ellipsis:
            out.append("...")
        elif not 0 <= label < len(_LETTERS):
            raise ValueError(
                "einsum(): subscript in subscript list is not within the valid "
                "range [0, 52)"
            )
        else:
            out.append(_LETTERS[label])
    return "".join(out)


def _sublists(first: Any, *rest: Any) -> tuple[str, tuple]:
    """``(a, [0, 1], b, [1, 2], [0, 2])`` -> ``("ab,bc->ac", (a, b))``."""
    args = (first, *rest)
    operands, terms = args[0:-1:2] if len(args) % 2 else args[0::2], []
    pairs = args[: 2 * len(operands)]
    for k in range(len(operands)):
        terms.append(_sublist(pairs[2 * k + 1]))
    equation = ",".join(terms)
    if len(args) % 2:  # an output sublist last
        equation += "->" + _sublist(args[-1])
    return equation, tuple(operands)


# ---------------------------------------------------------------------------
# torch.softmax, torch.log_softmax (dim is required here, unlike in F.softmax)
# ---------------------------------------------------------------------------


_NO_DIM = object()  # torch.softmax's dim is required, unlike F.softmax's


def _refuse_dim(name: str, dim: Any) -> None:
    """torch's error for torch.softmax's missing dim or one not an int."""
    if dim is _NO_DIM:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if _as_int(dim) is None:  # (torch.softmax(x, 1.5) says position 2)
        raise must_be(name, "dim", "int", dim, 1)


@declare(method=True)
def softmax(input: Tensor, dim: Any = _NO_DIM, dtype: Any = None) -> Tensor:
    if type(dim) is not int:
        _refuse_dim("softmax", dim)
    if _autocast.on:
        return _autocast.run("softmax", softmax, input, dim, dtype)
    return _softmax("softmax", input, dim, dtype, log=False)


@declare(method=True)
def log_softmax(input: Tensor, dim: Any = _NO_DIM, dtype: Any = None) -> Tensor:
    if type(dim) is not int:
        _refuse_dim("log_softmax", dim)
    if _autocast.on:
        return _autocast.run("log_softmax", log_softmax, input, dim, dtype)
    return _softmax("log_softmax", input, dim, dtype, log=True)


def _softmax_fn(x, *, axis, log):
    flat = x.reshape(1) if x.ndim == 0 else x  # torch: a 0-d tensor is one entry
    y = jax.nn.log_softmax(flat, axis) if log else jax.nn.softmax(flat, axis)
    return y.reshape(x.shape)


def _implicit_dim(name: str, ndim: int) -> int:
    """torch's legacy implicit softmax dim (deprecated there, with a warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the "
        "call to include dim=X as an argument.",
        UserWarning,
        stacklevel=4,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(name: str, input: Tensor, dim: Any, dtype: Any, log: bool) -> Tensor:
    _tensor(name, input)
    if dim is None:
        dim = _implicit_dim(name, input.dim())
    dim = wrap_dim(dim, input.dim())
    if dtype is not None:  # torch casts the input first
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"{name}_lastdim_kernel_impl" not implemented for '
            f"'{input.dtype.scalar_type}'"
        )
    grad_fn = "LogSoftmaxBackward0" if log else "SoftmaxBackward0"
    return apply(grad_fn, _softmax_fn, input, axis=dim, log=log)


saves("SoftmaxBackward0", ("result", None))
saves("LogSoftmaxBackward0", ("result", None))
