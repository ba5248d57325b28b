"""Blitz 1, "Tensors": reductions (``sum``, ``mean``, ``max``, ``norm``...)."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._declare import declare, saves
from jaxblitz.compat.ops._funnel import (
    _argmax_fn,
    _default_float,
    _keepdim,
    _logsumexp_fn,
    _mean,
    _no_grad,
    _norm_fn,
    _picked_fn,
    _reduce_fn,
    _require_tensors,
    _scan_fn,
    _to_out,
    _truth_fn,
    _var_fn,
)
from jaxblitz.compat.ops._unary import (
    maximum,
    minimum,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._argparse import (
    invalid_combination,
    must_be,
    refuse_dim,
)
from jaxblitz.compat.tensor._signatures import MAX_OPTIONS, REDUCE_OPTIONS
from jaxblitz.compat.tensor._tensor_base import TensorBase, wrap_dim

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def _dim(dim: Any, ndim: int) -> Any:
    """A reduction's ``dim`` as JAX's ``axis`` (None: every dimension)."""
    if dim is None or (isinstance(dim, list | tuple) and not dim):
        return None  # torch: dim=[] reduces over every dimension
    if ndim == 0:  # torch: a 0-dim tensor takes dim 0 or -1, reducing nothing
        for d in dim if isinstance(dim, list | tuple) else (dim,):
            wrap_dim(d, ndim)
        return None
    if isinstance(dim, list | tuple):
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(
                    f"dim {d} appears multiple times in the list of dims"
                )
        return dims
    return wrap_dim(dim, ndim)


def _axes(dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` as a tuple of axes (None: all of them)."""
    axis = _dim(dim, ndim)
    if axis is None:
        return tuple(range(ndim))
    return axis if isinstance(axis, tuple) else (axis,)


def _refused(name: str, dim: Any, keepdim: Any, dtype: Any) -> Exception:
    """torch's error for ``sum``'s or ``mean``'s ``dim`` of a type it refuses."""
    given = {"keepdim": keepdim, "dtype": dtype}
    kwargs = {k: v for k, v in given.items() if v is not None and v is not False}
    return refuse_dim(name, dim, kwargs, REDUCE_OPTIONS)


def _accumulate_dtype(input: Tensor, dtype: Any) -> str:
    """torch's sum/prod/cumsum dtype: integers and bool accumulate in int64."""
    if dtype is not None:
        return _dtype.to_dtype(dtype).np_name
    return input.dtype.np_name if input.dtype.is_floating_point else "int64"


def _sum(op, names: tuple[str, str]):
    """``sum``/``nansum``: grad_fn ``names[0]`` over everything, ``names[1]``
    over ``dim``."""

    def fn(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):
        if _autocast.on:
            return _autocast.run(op.__name__, fn, input, dim, keepdim, dtype=dtype)
        try:
            axis = _dim(dim, input.dim())
        except TypeError:
            raise _refused(op.__name__, dim, keepdim, dtype) from None
        if type(keepdim) is not bool:
            raise must_be(op.__name__, "keepdim", "bool", keepdim)
        return apply(
            names[dim is not None],
            _reduce_fn,
            input,
            op=op,
            axis=axis,
            keepdims=_keepdim(keepdim),
            dt=_accumulate_dtype(input, dtype),
        )

    fn.__name__ = op.__name__
    return fn


sum = _sum(jnp.sum, ("SumBackward0", "SumBackward1"))  # noqa: A001
declare.alias("sum", sum, method=True)
# torch.nansum: NaNs count as zero, and take a zero gradient
nansum = _sum(jnp.nansum, ("NansumBackward0", "NansumBackward0"))
declare.alias("nansum", nansum, method=True)
saves("NansumBackward0", (0, None))


@declare(method=True)
def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):
    if _autocast.on:
        return _autocast.run("prod", prod, input, dim, keepdim, dtype=dtype)
    name = "ProdBackward0" if dim is None else "ProdBackward1"
    axis = None if dim is None else _dim(wrap_dim(dim, input.dim()), input.dim())
    return apply(
        name,
        _reduce_fn,
        input,
        op=jnp.prod,
        axis=axis,
        keepdims=_keepdim(keepdim),
        dt=_accumulate_dtype(input, dtype),
    )


saves("ProdBackward0", (0, None), ("result", None))


def _scan(name: str, op):
    def fn(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        if _autocast.on:
            return _autocast.run(op.__name__, fn, input, dim, dtype=dtype)
        axis = wrap_dim(dim, input.dim())
        dt = _accumulate_dtype(input, dtype)
        return apply(name, _scan_fn, input, op=op, axis=axis, dt=dt)

    fn.__name__ = op.__name__
    return fn


cumsum = _scan("CumsumBackward0", jnp.cumsum)
declare.alias("cumsum", cumsum, method=True, inplace=True)
cumprod = _scan("CumprodBackward0", jnp.cumprod)
declare.alias("cumprod", cumprod, method=True, inplace=True)
saves("CumprodBackward0", (0, None), ("result", None))


@declare(method=True)
def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype=None):
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a "
            f"floating point or complex dtype. Got: {input.dtype.scalar_type}"
        )
    dtype = None if dtype is None else _dtype.to_dtype(dtype)
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a "
            f"floating point or complex dtype. Got: {dtype.scalar_type}"
        )
    dt = None if dtype is None else dtype.np_name
    name = "MeanBackward0" if dim is None else "MeanBackward1"
    try:
        axis = _dim(dim, input.dim())
    except TypeError:
        raise _refused("mean", dim, keepdim, dtype) from None
    if type(keepdim) is not bool:
        raise must_be("mean", "keepdim", "bool", keepdim)
    return apply(
        name,
        _reduce_fn,
        input,
        op=_mean,
        axis=axis,
        keepdims=_keepdim(keepdim),
        dt=dt,
    )


def _moment(name: str, root: bool, with_mean: bool = False):
    def fn(
        input: Tensor,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        if isinstance(dim, bool):  # x.var(False): the old unbiased argument
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise RuntimeError(
                f"{fn.__name__}: can't pass both unbiased and correction; use "
                "correction"
            )
        if correction is None:
            correction = 1 if unbiased is None else builtins.int(unbiased)
        if not input.dtype.is_floating_point:
            raise RuntimeError(
                "std and var only support floating point and complex dtypes"
            )
        axis = _axes(dim, input.dim())
        n = math.prod(input.shape[a] for a in axis)
        if n - correction <= 0 and input.numel():
            warnings.warn(
                f"{fn.__name__}(): degrees of freedom is <= 0. Correction should be "
                "strictly less than the reduction factor (input numel divided by "
                "output numel).",
                UserWarning,
                stacklevel=2,
            )
        moment = apply(
            name,
            _var_fn,
            input,
            axis=axis,
            correction=correction,
            keepdims=_keepdim(keepdim),
            root=root,
        )
        if not with_mean:
            return moment
        static = dict(op=jnp.mean, axis=axis, keepdims=_keepdim(keepdim), dt=None)
        return moment, apply(name, _reduce_fn, input, **static)

    fn.__name__ = ("std" if root else "var") + ("_mean" if with_mean else "")
    return fn


std = _moment("StdBackward0", root=True)
declare.alias("std", std, method=True)
saves("StdBackward0", (0, None), ("result", None))
var = _moment("VarBackward0", root=False)
declare.alias("var", var, method=True)
saves("VarBackward0", (0, None))
# torch.std_mean / var_mean: a plain tuple (moment, mean), one grad_fn name
std_mean = _moment("StdMeanBackward0", root=True, with_mean=True)
declare.alias("std_mean", std_mean)
var_mean = _moment("VarMeanBackward0", root=False, with_mean=True)
declare.alias("var_mean", var_mean)
saves("VarMeanBackward0", (0, None))


@declare(method=True)
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))`` without overflow; integers give floats."""
    if _autocast.on:
        return _autocast.run("logsumexp", logsumexp, input, dim, keepdim)
    dt = _default_float(input.dtype).np_name
    axis = _dim(dim, input.dim())
    return apply(
        "LogsumexpBackward0",
        _logsumexp_fn,
        input,
        axis=axis,
        keepdims=_keepdim(keepdim),
        dt=dt,
    )


saves("LogsumexpBackward0", (0, None), ("result", None))


def _truth(op):
    def fn(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        dt = "uint8" if input.dtype is _dtype.uint8 else "bool"  # torch keeps uint8
        axis = _dim(dim, input.dim())
        return _no_grad(
            _truth_fn, input, op=op, axis=axis, keepdims=_keepdim(keepdim), dt=dt
        )

    fn.__name__ = op.__name__
    return fn


all = _truth(jnp.all)  # noqa: A001
declare.alias("all", all, method=True)
any = _truth(jnp.any)  # noqa: A001
declare.alias("any", any, method=True)


class _ReturnType(tuple):
    """``torch.return_types.max(values=..., indices=...)``."""

    name = ""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self) -> str:
        return (
            f"torch.return_types.{self.name}(\nvalues={self[0]!r},\n"
            f"indices={self[1]!r})"
        )


def _check_reducible(what: str, input: Tensor, axis: Any) -> None:
    """max/argmax-like reductions have no value over nothing: torch's errors."""
    if input.numel():
        return
    if axis is None:
        raise RuntimeError(
            f"{what}(): Expected reduction dim to be specified for input.numel() == "
            "0. Specify the reduction dim with the 'dim' argument."
        )
    for a in axis if isinstance(axis, tuple) else (axis,):
        if input.shape[a] == 0:
            raise IndexError(
                f"{what}(): Expected reduction dim {a} to have non-zero size."
            )


def _extreme(name: str, op, arg_op):
    result_type = type(name, (_ReturnType,), {"name": name})

    def reduce(input: Tensor, dim: Any = None, keepdim: bool = False):
        _require_tensors(name, input)
        if isinstance(dim, TensorBase):  # torch.max(a, b): elementwise
            return (maximum if name == "max" else minimum)(input, dim)
        if type(keepdim) is not bool:
            raise must_be(name, "keepdim", "bool", keepdim)
        try:
            axis = (
                None if dim is None else _dim(wrap_dim(dim, input.dim()), input.dim())
            )
        except TypeError:
            specific = must_be(name, "dim", "int", dim, 1)
            kwargs = {"keepdim": keepdim} if keepdim else {}
            args = (dim,)
            raise invalid_combination(
                name, args, kwargs, MAX_OPTIONS, specific
            ) from None
        _check_reducible(name, input, axis)
        grad_fn = f"{name.title()}Backward{1 if dim is None else 0}"
        keepdim = _keepdim(keepdim) and dim is not None
        if axis is None:  # every element, or a 0-dim tensor's one
            static = dict(op=op, axis=axis, keepdims=_keepdim(keepdim), dt=None)
            values = apply(grad_fn, _reduce_fn, input, **static)
            if dim is None:
                return values
        else:  # torch's gradient goes to the returned index alone
            static = dict(axis=axis, keepdims=_keepdim(keepdim), op=arg_op)
            values = apply(grad_fn, _picked_fn, input, **static)
        indices = _no_grad(
            _argmax_fn, input, axis=axis, keepdims=_keepdim(keepdim), op=arg_op
        )
        return result_type(values, indices)

    reduce.__name__ = name
    return reduce


max = _extreme("max", jnp.max, jnp.argmax)  # noqa: A001
declare.alias("max", max, method=True)
min = _extreme("min", jnp.min, jnp.argmin)  # noqa: A001
declare.alias("min", min, method=True)


def _amax(name: str, op):
    def fn(
        input: Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None
    ) -> Tensor:
        axis = _dim(dim, input.dim())
        _check_reducible(fn.__name__, input, axis)
        if out is not None and out.dtype is not input.dtype:
            raise RuntimeError(
                "Expected the dtype for input and out to match, but got "
                f"{input.dtype.scalar_type} for input's dtype and "
                f"{out.dtype.scalar_type} for out's dtype."
            )
        result = apply(
            name,
            _reduce_fn,
            input,
            op=op,
            axis=axis,
            keepdims=_keepdim(keepdim),
            dt=None,
        )
        return _to_out(result, out)

    fn.__name__ = name.removesuffix("Backward0").lower()  # AmaxBackward0: amax
    return fn


amax = _amax("AmaxBackward0", jnp.max)
declare.alias("amax", amax, method=True)
saves("AmaxBackward0", (0, None), ("result", None))
amin = _amax("AminBackward0", jnp.min)
declare.alias("amin", amin, method=True)
saves("AminBackward0", (0, None), ("result", None))


def _arg(op):
    def fn(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        if input.dtype is _dtype.bool:
            raise RuntimeError(f"{op.__name__}(): does not support bool input")
        axis = None if dim is None else _dim(wrap_dim(dim, input.dim()), input.dim())
        _check_reducible(op.__name__, input, axis)
        return _no_grad(_argmax_fn, input, axis=axis, keepdims=_keepdim(keepdim), op=op)

    fn.__name__ = op.__name__
    return fn


argmax = _arg(jnp.argmax)
declare.alias("argmax", argmax, method=True)


def _order_fn(x, *, axis, descending):
    # stable either way; torch puts NaN last ascending, first descending
    return jnp.argsort(x, axis=axis, stable=True, descending=descending)


def _sorted_fn(x, *, axis, descending):
    order = _order_fn(x, axis=axis, descending=descending)
    return jnp.take_along_axis(x, order, axis=axis)


_SortType = type("sort", (_ReturnType,), {"name": "sort"})


@declare(method=True)
def sort(
    input: Tensor,
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
):
    """``torch.sort``: ``(values, indices)`` along ``dim`` (ties keep their order,
    which torch promises only with ``stable=True``)."""
    _require_tensors("sort", input)
    axis = 0 if not input.dim() else wrap_dim(dim, input.dim())
    static = dict(axis=axis if input.dim() else None, descending=bool(descending))
    if not input.dim():
        values = apply("SortBackward0", _identity_sort_fn, input)
        return _SortType(values, _no_grad(_zero_index_fn, input))
    values = apply("SortBackward0", _sorted_fn, input, **static)
    return _SortType(values, _no_grad(_order_fn, input, **static))


def _identity_sort_fn(x):
    return x + jnp.zeros((), x.dtype)


def _zero_index_fn(x):
    return jnp.zeros((), jnp.int64)


@declare(method=True)
def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
) -> Tensor:
    return sort(input, dim, descending, stable)[1]


argmin = _arg(jnp.argmin)
declare.alias("argmin", argmin, method=True)


@declare(method=True)
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False):
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {input.dtype.scalar_type}"
        )
    p = 2 if p in ("fro", None) else p
    if p == "nuc":
        dim = (0, 1) if dim is None else dim
        if input.dim() < 2 or len(tuple(dim)) != 2:
            raise RuntimeError(
                f"linalg.matrix_norm: The input tensor A must have at least 2 "
                f"dimensions, and dim must have 2 entries, got {dim}"
            )
    elif isinstance(p, str):
        raise NotImplementedError(f"compat norm: p={p!r} is not supported")
    return apply(
        "LinalgVectorNormBackward0",
        _norm_fn,
        input,
        p=p,
        axis=_dim(dim, input.dim()),
        keepdims=_keepdim(keepdim),
    )


saves("LinalgVectorNormBackward0", (0, None), ("result", None))
