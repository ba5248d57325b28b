"""Blitz 1, "Tensors": ``torch.Tensor`` as a thin handle over a ``jax.Array``.

A :class:`Tensor` holds a storage box (a JAX array, or a NumPy array once shared
with NumPy), ``requires_grad``, ``.grad`` and ``grad_fn``. Math lives in
:mod:`jaxblitz.compat.ops`, which attaches its functions as methods; every one of
them goes through the funnel :func:`jaxblitz.compat.autograd.graph.apply`.

In-place ops (``add_``, ``x[i] = v``, ``copy_``) compute a new array and write it
into the tensor's storage, so every handle on that storage sees it: the tensor
itself, its ``.data`` and ``detach()`` (shared, as in torch) and the NumPy array
from ``.numpy()`` / ``from_numpy``. Where this differs from torch: ``view``,
``reshape``, indexing and slicing return copies, not views, so writing to a view
does not change its base (write to the base with ``x[idx] = v`` instead).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _dtype
from jaxblitz.compat._dtype import device, dtype
from jaxblitz.compat.autograd import graph

_CPU = device("cpu")


def _type_name(value: Any) -> str:
    # torch's wording names Python types bare (float) and others by module
    # (numpy.float64).
    kind = type(value)
    if kind.__module__ == "builtins" or isinstance(value, Tensor):
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _as_int(value: Any) -> int | None:
    """``value`` as an int if torch takes it as one (not bool, float, str ...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, Tensor) and value.dim() == 0:
        try:
            return value.__index__()
        except TypeError:
            return None
    return None


def wrap_dim(dim: Any, ndim: int) -> int:
    """torch's dimension wrapping: ``dim`` in ``[-ndim, ndim)`` -> ``[0, ndim)``."""
    index = _as_int(dim)
    if index is None:
        raise TypeError(f"argument 'dim' must be int, not {_type_name(dim)}")
    n = max(ndim, 1)  # a 0-d tensor takes dim 0 or -1, as in torch
    if not -n <= index < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {index})"
        )
    return index % n


def sizes(name: str, args: tuple, arg: str = "size") -> tuple[int, ...]:
    """The ints of a torch size argument, given as ``*args`` or as one sequence.

    Like torch's argument parser, refuses anything that is not an int (a float
    such as ``3.7`` or even ``3.0``, a string, None, a bool) with a TypeError;
    ``name`` and ``arg`` are the function and argument named in the message.
    """
    one = len(args) == 1
    if one and isinstance(args[0], tuple | list):
        args = tuple(args[0])
    elif one and _as_int(args[0]) is None:
        raise TypeError(
            f"{name}(): argument '{arg}' (position 1) must be tuple of ints, "
            f"not {_type_name(args[0])}"
        )
    out = tuple(_as_int(a) for a in args)
    if None in out:
        pos = out.index(None)
        raise TypeError(
            f"{name}(): argument '{arg}' (position 1) must be tuple of ints, but "
            f"found element of type {_type_name(args[pos])} at pos {pos}"
        )
    return out


class Size(tuple):
    """``torch.Size``: a tuple that prints like torch."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)


class _Storage:
    """What tensors sharing memory share: a JAX array, or a NumPy array."""

    __slots__ = ("array", "numpy")

    def __init__(self, array=None, numpy=None):
        self.array, self.numpy = array, numpy


def _from_numpy_copy(n: np.ndarray) -> jax.Array:
    # A private, finished copy: later writes to `n` must never reach the array.
    with graph.x64(True):
        return jnp.asarray(np.array(n, copy=True))


class Tensor:
    """``torch.Tensor``. Build with ``torch.tensor``/``zeros``/...; see module doc."""

    __slots__ = (
        "_s",
        "requires_grad_flag",
        "grad",
        "_grad_fn",
        "_acc",
        "_retain",
        "_hooks",
        "__weakref__",
        "__dict__",
    )
    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __new__(cls, *args: Any, **kwargs: Any):
        # torch.Tensor(2, 3) (uninitialised float) or torch.Tensor([1, 2]) (data).
        if cls is Tensor and (args or kwargs):
            from jaxblitz.compat import creation

            if len(args) == 1 and _as_int(args[0]) is None:
                data = args[0]
                if not isinstance(data, list | tuple | np.ndarray | Tensor):
                    raise TypeError(
                        f"new(): data must be a sequence (got {_type_name(data)})"
                    )
                return creation.tensor(data, dtype=_dtype.get_default_dtype())
            return creation.empty(sizes("new", args), **kwargs)
        return super().__new__(cls)

    @classmethod
    def _wrap(
        cls,
        array: jax.Array,
        requires_grad: bool = False,
        grad_fn: graph.Node | None = None,
    ) -> Tensor:
        t = object.__new__(cls)
        t._s = _Storage(array)
        t.requires_grad_flag = requires_grad
        t.grad = None
        t._grad_fn = grad_fn
        t._acc = None
        t._retain = False
        t._hooks = None
        return t

    # -- storage ---------------------------------------------------------------
    @property
    def _data(self) -> jax.Array:
        s = self._s
        return s.array if s.numpy is None else _from_numpy_copy(s.numpy)

    def _set_data(self, array: jax.Array) -> None:
        s = self._s
        if (
            s.numpy is not None
            and tuple(array.shape) == s.numpy.shape
            and array.dtype == s.numpy.dtype
        ):
            s.numpy[...] = np.asarray(array)  # shared with NumPy: write through
        else:
            s.array, s.numpy = array, None

    # -- metadata ----------------------------------------------------------------
    @property
    def shape(self) -> Size:
        s = self._s
        return Size((s.array if s.numpy is None else s.numpy).shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return self.shape
        dim = wrap_dim(dim, self.dim())
        if not self.dim():
            raise IndexError(
                f"Dimension specified as {dim} but tensor has no dimensions"
            )
        return self.shape[dim]

    @property
    def dtype(self) -> dtype:
        s = self._s
        return _dtype.to_dtype((s.array if s.numpy is None else s.numpy).dtype)

    @property
    def device(self) -> device:
        array = self._s.array
        if array is None or not isinstance(array, jax.Array):
            return _CPU
        platform = next(iter(array.devices())).platform
        return device("cuda:0") if platform == "gpu" else _CPU

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return self.shape.numel()

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- autograd state --------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self.requires_grad_flag

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        if not flag and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you "
                "want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
        self.requires_grad_flag = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> graph.Node | None:
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    def _node(self) -> graph.Node:
        if self._grad_fn is not None:
            return self._grad_fn
        if self._acc is None:
            self._acc = graph.AccumulateGrad(self)
        return self._acc

    def _accumulate(self, g: jax.Array) -> None:
        if self._hooks:
            for hook in self._hooks:
                out = hook(Tensor._wrap(g))
                g = g if out is None else out._data
        if self.grad is None:
            self.grad = Tensor._wrap(g)
        else:
            with graph.x64(True):
                self.grad = Tensor._wrap(self.grad._data + g)

    def retain_grad(self) -> None:
        if self._grad_fn is not None:
            self._grad_fn.retained = self

    def register_hook(self, hook) -> None:
        self._hooks = [*(self._hooks or []), hook]

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) . gradient into every leaf's ``.grad``."""
        from jaxblitz.compat.autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs)

    @property
    def data(self) -> Tensor:
        # torch: shares storage, not tracked by autograd.
        t = Tensor._wrap(None)
        t._s = self._s
        return t

    @data.setter
    def data(self, other: Tensor) -> None:
        self._s = _Storage(other._data)

    def detach(self) -> Tensor:
        return self.data

    def detach_(self) -> Tensor:
        self._grad_fn, self.requires_grad_flag = None, False
        return self

    # -- in-place writes ---------------------------------------------------------
    def _check_inplace(self) -> None:
        if self.requires_grad and self._grad_fn is None and graph.is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )

    def _inplace(self, result: Tensor) -> Tensor:
        """Make ``result`` (computed from ``self``) this tensor's value and history."""
        if result.dtype is not self.dtype:
            if result.dtype.is_floating_point and not self.dtype.is_floating_point:
                raise RuntimeError(
                    f"result type {_TYPE_NAMES[result.dtype.name]} can't be cast to "
                    f"the desired output type {_TYPE_NAMES[self.dtype.name]}"
                )
            result = result.to(self.dtype)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast "
                f"shape {list(result.shape)}"
            )
        self._set_data(result._data)
        if result._grad_fn is not None:
            self._grad_fn, self.requires_grad_flag = result._grad_fn, True
        return self

    # -- conversion ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """Shares memory: later in-place ops on this tensor show in the array."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        s = self._s
        if s.numpy is None:
            s.numpy, s.array = np.array(s.array), None  # a writeable host copy
        return s.numpy

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(self._data)
        return array if dtype is None else array.astype(dtype)

    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return np.asarray(self._data).reshape(()).item()

    def tolist(self) -> Any:
        return np.asarray(self._data).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
            )
        return bool(self.item())

    # Identity hashing, as torch's (dict keys such as optimizer.state[p]), in C:
    # a Python __hash__ added ~0.1 us to each of a compiled call's ~40 lookups.
    __hash__ = object.__hash__

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        from jaxblitz.compat._format import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self.dim() == 0 and spec:
            return self.item().__format__(spec)
        return repr(self)

    def __reduce__(self):
        raise TypeError(
            "jaxblitz.compat tensors are not pickled; save them with torch.save "
            "(safetensors) instead"
        )


_TYPE_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}
