"""Blitz 1, "Tensors": the handle under ``torch.Tensor`` -- storage, layout, shape,
dtype, device and the conversions to Python and NumPy.

:class:`TensorBase` holds a storage box (a JAX array, or a NumPy array once shared
with NumPy) and a layout over it (:mod:`._layout`: shape, strides, offset; None
for the storage's own row-major layout). Views (``view``, slicing, ``transpose``,
``expand``, ``.data``, ``detach()`` ...) share the storage, so an in-place op
through any handle -- the tensor, a view of it, its ``.data``, the NumPy array
from ``.numpy()`` / ``from_numpy`` -- is seen by all of them, as in torch; copies
(``clone``, ``contiguous`` of a non-contiguous tensor, advanced indexing) get a
storage of their own. A version counter, shared by a tensor and its views,
counts in-place writes (autograd checks it, see :mod:`.autograd.graph`).

:class:`jaxblitz.compat.tensor.Tensor` is this base plus the mixins of the modules
that own each kind of method (``ops``: math, ``shape_ops``: views and indexing,
``creation``: ``new_*`` and random fills, ``autograd.graph``: ``requires_grad``,
``.grad`` and ``grad_fn``).
"""

from __future__ import annotations

import copy
import linecache
import math
import operator
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat.autograd import grad_mode
from jaxblitz.compat.lazy import LazyArray
from jaxblitz.compat.tensor import (
    _argparse,
    _dtype,
    _info,
    _layout,
    _meta,
    _transfer,
)
from jaxblitz.compat.tensor._argparse import type_name as _type_name
from jaxblitz.compat.tensor._dtype import device, dtype, x64
from jaxblitz.compat.tensor._format import tensor_repr
from jaxblitz.compat.tensor._info import TorchName
from jaxblitz.compat.tensor._meta import MetaArray

if TYPE_CHECKING:
    from jaxblitz.compat.autograd.graph import Node
    from jaxblitz.compat.tensor import Tensor

_CPU = device("cpu")


def _as_int(value: Any) -> int | None:
    """``value`` as an int if torch takes it as one (not bool, float, str ...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, TensorBase) and value.dim() == 0:
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


def sizes(
    name: str, args: tuple, arg: str = "size", options: tuple = ()
) -> tuple[int, ...]:
    """The ints of a torch size argument, given as ``*args`` or as one sequence.

    Like torch's argument parser, refuses anything that is not an int (a float
    such as ``3.7`` or even ``3.0``, a string, None) with a TypeError; ``name``
    and ``arg`` are the function and argument named in the message, ``options``
    the signatures of an overloaded function (``view``), listed when the first
    element is not an int.
    """
    one = len(args) == 1
    listed = args[0] if one and isinstance(args[0], tuple | list) else args
    out = tuple(_as_int(a) for a in listed)
    if None in out:
        return _sizes_refused(name, args, arg, options)
    return out


def _sizes_refused(name: str, args: tuple, arg: str, options: tuple) -> tuple:
    """torch's parse of a size whose elements are not all ints: the first must
    be one (else the argument does not match), a later one may be a bool."""
    one = len(args) == 1
    listed = args[0] if one and isinstance(args[0], tuple | list) else args
    if not listed or _as_int(listed[0]) is None:
        if options:
            raise _argparse.invalid_combination(name, args, {}, options)
        if not one:
            raise _argparse.too_many(name, 1, len(args))
        if listed is args:
            raise _argparse.must_be(name, arg, "tuple of ints", args[0], 1)
        raise TypeError(
            f"{name}(): argument '{arg}' (position 1) must be tuple of ints, but "
            f"found element of type {_type_name(listed[0])} at pos 0"
        )
    out = []
    for pos, v in enumerate(listed, 1):
        index = int(v) if type(v) is bool else _as_int(v)
        if index is None:
            raise _argparse.unpack_failed(name, arg, pos, v)
        out.append(index)
    return tuple(out)


class Size(tuple):
    """``torch.Size``: a tuple that prints like torch."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)

    # torch's slices, sums and repeats of a Size are Sizes (x.shape[2:] prints
    # as torch.Size([...])); an index is an int.
    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        return Size(item) if type(index) is slice else item

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            raise TypeError(
                f"can only concatenate tuple (not {type(other).__name__}) to torch.Size"
            )
        return _sized(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Size:
        return _sized(tuple.__add__(other, self))

    def __mul__(self, n: Any) -> Size:
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


def _sized(items: tuple) -> Size:
    """A Size of ``items`` (each an int or taken as one by ``__index__``, as
    torch.Size() takes them), refused as torch.Size() refuses a float."""
    out = []
    for i, v in enumerate(items):
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(
                "torch.Size() takes an iterable of 'int' (item "
                f"{i} is '{type(v).__name__}')"
            ) from None
    return Size(out)


# JAX's concrete array type, learnt from the first one met: its ``shape`` and
# ``dtype`` are Python properties over the ``aval`` it holds, read here directly
# (every op asks its operands' shapes and dtypes).
_IMPL: list = [None]


def _learnt(a: Any) -> Any:
    if (
        _IMPL[0] is None
        and type(a) is not LazyArray
        and isinstance(a, jax.Array)
        and not isinstance(a, jax.core.Tracer)
        and "aval" in type(a).__dict__
    ):
        _IMPL[0] = type(a)
    return a


class _Storage:
    """What tensors sharing memory share: a JAX array, or a NumPy array.

    The array has the shape of the tensor that made the storage; other tensors on
    it read and write it through their layout.

    ``exclusive`` is True only while nothing but this storage can hold its array:
    ``torch.compile`` wrote it from a program's outputs and nothing has read it
    since (reading goes through :attr:`TensorBase._data`, which clears the flag).
    Only such an array is donated to the next program without a copy.
    """

    __slots__ = ("pending", "numpy", "exclusive", "address", "inference")

    def __init__(self, array=None, numpy=None):
        self.pending, self.numpy, self.exclusive = array, numpy, False
        self.address = 0  # a made-up data_ptr, given on first use
        # made inside torch.inference_mode(): its tensors are inference tensors
        self.inference = (
            grad_mode.entered[0] > 0 and grad_mode.is_inference_mode_enabled()
        )

    @property
    def array(self):
        """The JAX array (a pending value is computed first: a sync point).
        :attr:`pending` is the array or the :class:`~jaxblitz.compat.lazy.LazyArray`
        as it is, for code that records work on it."""
        a = self.pending
        return a.force() if type(a) is LazyArray else a

    @array.setter
    def array(self, value) -> None:
        self.pending = value

    @property
    def shape(self) -> tuple[int, ...]:
        if self.numpy is not None:
            return self.numpy.shape
        a = self.pending
        kind = type(a)
        if kind is _IMPL[0]:
            return a.aval.shape
        return a.shape if kind is LazyArray else _learnt(a).shape

    @property
    def dtype(self) -> np.dtype:
        return np.dtype((self.pending if self.numpy is None else self.numpy).dtype)

    def nbytes(self) -> int:
        a = self.pending if self.numpy is None else self.numpy
        return math.prod(a.shape) * np.dtype(a.dtype).itemsize


_next_address = [0x10000]


def _address(storage: _Storage) -> int:
    if not storage.address:
        storage.address = _next_address[0]
        _next_address[0] += (storage.nbytes() + 64) // 64 * 64
    return storage.address


class UntypedStorage:
    """What ``Tensor.untyped_storage()`` returns: a storage's address and size."""

    def __init__(self, storage: _Storage):
        self._storage = storage

    def data_ptr(self) -> int:
        return _address(self._storage) if self._storage.nbytes() else 0

    def nbytes(self) -> int:
        return self._storage.nbytes()

    def size(self) -> int:
        return self._storage.nbytes()

    __len__ = size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntypedStorage) and other._storage is self._storage

    def __hash__(self) -> int:
        return id(self._storage)


def _bitcast(array: Any, dt: Any) -> jax.Array:
    """The same bits as another dtype of the same size (``view(dtype)``)."""
    with x64(True):
        if array.dtype == np.bool_:  # JAX bitcasts no bools: they are 0/1 bytes
            return array.astype(dt)
        if np.dtype(dt) == np.bool_:
            return array != 0
        return jax.lax.bitcast_convert_type(array, dt)


def _from_numpy_copy(n: np.ndarray) -> jax.Array:
    # A private, finished copy: later writes to `n` must never reach the array.
    return from_host(np.array(n, copy=True))


def from_host(n: np.ndarray, like: Any = None) -> jax.Array:
    """A NumPy array nothing else will write to, as a JAX array of its dtype:
    placed as ``jax.device_put`` places it, which compiles nothing
    (``jnp.asarray`` of an ndarray compiles a program per shape, ``lax.stage``),
    without its Python dispatch where no ``like`` commits it (:mod:`._transfer`).
    Placed as ``like`` (a JAX array) is where given: committed to its devices if
    it is committed, as jit keys its programs on that too; else on the default
    device, uncommitted."""
    where = like.sharding if getattr(like, "committed", False) else None
    if where is None:
        out = _transfer.put(n)
        if out is not None:
            return out
    with x64(True):
        return jax.device_put(n, where)


_PACKAGE = str(Path(__file__).parent)  # jaxblitz/compat
_BY_NUMPY = _dtype._FROM_NP  # a NumPy dtype -> its torch dtype


def _caller() -> str:
    """`` at file.py:12 (`line`)`` for the innermost frame outside compat, or ''."""
    for frame, lineno in traceback.walk_stack(None):
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE):
            line = linecache.getline(filename, lineno).strip()
            return f" at {Path(filename).name}:{lineno}" + (
                f" (`{line}`)" if line else ""
            )
    return ""


class TracedValueError(jax.errors.ConcretizationTypeError):
    """A tensor's value was needed while JAX traced it (inside ``torch.compile``).

    ``what`` names the operation, ``todo`` how to avoid it and ``where`` the line
    that asked; :func:`jaxblitz.compat.compile` turns it into a ``CompileError``.
    """

    def __init__(self, tracer: jax.core.Tracer, what: str, todo: str):
        self.what, self.todo, self.where = what, todo, _caller()
        super().__init__(tracer, f"{what}{self.where} needs a tensor's value")


_PRINTING = ("printing a tensor", "return the tensor and print it after the call")
_CONVERT = "return the tensor and convert it after the call"


class layout(TorchName):  # noqa: N801 -- torch's name
    """``torch.layout``: how a tensor's elements are kept; compat's are
    :data:`strided`."""


strided = layout("strided")


class TensorBase:
    """The handle under every ``torch.Tensor``: see the module doc."""

    __slots__ = (
        "_s",
        "_view",
        "_as",
        "_base",
        "_cache",
        "_vc",
        "_gv",
        "requires_grad_flag",
        "grad",
        "_grad_fn",
        "_acc",
        "_hooks",
        "__weakref__",
        "__dict__",
    )
    __array_priority__ = 1000  # numpy scalars defer to our operators

    _s: _Storage
    _view: _layout.Layout | None  # None: the storage's own row-major layout
    _as: np.dtype | None  # view(dtype): the storage's bits read as this dtype
    _base: Tensor | None  # the tensor this is a view of (views of views: the root)
    _cache: tuple | None  # (storage array read, this layout's elements of it)
    _vc: list[int]  # the version counter, shared with views (not with .data)
    _gv: int  # the version this view's grad_fn was made at
    requires_grad_flag: bool
    grad: Tensor | None
    _grad_fn: Node | None
    _acc: Node | None
    _hooks: list | None

    def is_inference(self) -> bool:
        """``x.is_inference()``: made inside ``torch.inference_mode()`` (a view
        is its base's kind, as in torch)."""
        return self._s.inference

    @staticmethod
    def _wrap(
        array: jax.Array | None,
        requires_grad: bool = False,
        grad_fn: Node | None = None,
        cls: type | None = None,
    ) -> Tensor:
        """A new :class:`~jaxblitz.compat.tensor.Tensor` (or ``cls``) on ``array``."""
        t = object.__new__(cls or _tensor_class)
        t._s = _Storage(array)
        t._view = t._as = t._base = t._cache = None
        t._vc = [0]
        t._gv = 0
        t.requires_grad_flag = requires_grad
        t.grad = None
        t._grad_fn = grad_fn
        t._acc = None
        t._hooks = None
        return t

    # -- storage ---------------------------------------------------------------
    @property
    def _data(self) -> jax.Array:
        """This tensor's elements as a JAX array (pending work runs first)."""
        return lazy.concrete(self._value())

    def _value(self) -> jax.Array | lazy.LazyArray:
        """:attr:`_data`, or the pending value that will be it: for code that
        passes it on to recorded work (``lazy.jit`` calls) and nothing else."""
        if self._as is not None:
            return _bitcast(lazy.concrete(self._bits()), self._as)
        return self._bits()

    def _bits(self) -> jax.Array | lazy.LazyArray:
        s, view = self._s, self._view
        if view is None:
            if s.numpy is not None:
                return _from_numpy_copy(s.numpy)
            s.exclusive = False  # handed out: another holder may keep it
            a = s.pending  # (lazy.current, inlined: every op's operands)
            return a.value if type(a) is LazyArray and a.value is not None else a
        if s.numpy is not None:
            return _from_numpy_copy(_layout.numpy_view(s.numpy, view))
        array, cache = s.pending, self._cache
        if cache is not None and cache[0] is array:
            return lazy.current(cache[1])
        with x64(True):
            out = _layout.read(lazy.current(array), layout=view)
        self._cache = (array, out)
        return out

    def _set_data(self, array: jax.Array) -> None:
        """Write ``array`` (this tensor's shape and dtype) into the storage."""
        self._vc[0] += 1
        if type(self._s.pending) is MetaArray:  # a meta tensor keeps no values
            return
        if self._as is not None:
            array = _bitcast(lazy.concrete(array), self._s.dtype)
        s, view = self._s, self._view
        if view is not None:
            if s.numpy is not None:
                _layout.numpy_view(s.numpy, view)[...] = np.asarray(array)
                return
            with x64(True):
                new = _layout.write(lazy.current(s.pending), array, layout=view)
            s.array, s.exclusive = new, False
            self._cache = (new, array)
        elif (
            s.numpy is not None
            and tuple(array.shape) == s.numpy.shape
            and array.dtype == s.numpy.dtype
        ):
            s.numpy[...] = np.asarray(array)  # shared with NumPy: write through
        else:
            s.array, s.numpy, s.exclusive = array, None, False

    def _host(self) -> np.ndarray:
        """This tensor's elements on the host, for reading only (no copy when the
        storage is NumPy's already)."""
        s, view = self._s, self._view
        if s.numpy is None:
            return np.asarray(self._data)
        out = s.numpy if view is None else _layout.numpy_view(s.numpy, view)
        return out if self._as is None else out.view(self._as)

    def _share(self, other: TensorBase) -> None:
        """Make this handle another name for ``other``'s elements (``.data``)."""
        self._s, self._view, self._cache = other._s, other._view, other._cache
        self._as = other._as

    def _place(self) -> _layout.Layout:
        view = self._view
        return _layout.identity(self._s.shape) if view is None else view

    # -- memory, as torch reports it ---------------------------------------------
    def stride(self, dim: int | None = None):
        s, view = self._s, self._view
        if view is not None:
            strides = view.stride
        elif s.numpy is not None and s.numpy.ndim:
            strides = tuple(b // s.numpy.itemsize for b in s.numpy.strides)
        else:
            strides = _layout.contiguous_strides(self.shape)
        if dim is None:
            return strides
        return strides[wrap_dim(dim, self.dim())]

    def storage_offset(self) -> int:
        return 0 if self._view is None else self._view.offset

    def is_contiguous(self, memory_format: Any = None) -> bool:
        order = _info._INNER_FIRST.get(memory_format)
        if order is not None:  # torch answers False for another rank
            layout = self._view or _layout.identity(tuple(self.shape))
            return len(order) == self.dim() and _info.is_dense_in(
                order, layout.shape, layout.stride
            )
        return self._view is None or _layout.is_contiguous(self._view)

    def untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._s)

    def data_ptr(self) -> int:
        s = self._s
        if not s.nbytes():
            return 0
        # torch's meta storage is at address 0: a view's is its offset
        base = 0 if type(s.pending) is MetaArray else _address(s)
        return base + self.storage_offset() * self.element_size()

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def _version(self) -> int:
        return self._vc[0]

    def _needs_value(self, what: str, todo: str = _CONVERT) -> None:
        """Raise :class:`TracedValueError` if this tensor has no value yet."""
        array = self._s.pending
        if isinstance(array, jax.core.Tracer):
            raise TracedValueError(array, what, todo)

    # -- metadata ----------------------------------------------------------------
    @property
    def shape(self) -> Size:
        view = self._view
        return Size(self._s.shape if view is None else view.shape)

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
        if self._as is None:  # (ops ask often: one dict lookup)
            a = s.pending if s.numpy is None else s.numpy
            found = _BY_NUMPY.get(a.aval.dtype if type(a) is _IMPL[0] else a.dtype)
            if found is not None:
                return found
        return _dtype.to_dtype(self._as if self._as is not None else s.dtype)

    @property
    def device(self) -> device:
        array = self._s.pending
        if type(array) is LazyArray:
            return _dtype.device_of(array)
        if array is None or not isinstance(array, jax.Array):
            return _meta.META if type(array) is MetaArray else _CPU
        return _dtype.device_of(array)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def get_device(self) -> int:
        """``-1`` on the CPU, else the device's index (torch's)."""
        where = self.device
        return -1 if where.type == "cpu" else where.index or 0

    def _shape(self) -> tuple[int, ...]:
        """The shape as a plain tuple (no ``Size`` made: ops ask often)."""
        view = self._view
        if view is not None:
            return view.shape
        s = self._s  # (_Storage.shape inlined: a hot path)
        if s.numpy is not None:
            return s.numpy.shape
        a = s.pending
        kind = type(a)
        if kind is _IMPL[0]:
            return a.aval.shape
        return a.shape if kind is LazyArray else _learnt(a).shape

    @property
    def ndim(self) -> int:
        return len(self._shape())

    def dim(self) -> int:
        return len(self._shape())

    def numel(self) -> int:
        return math.prod(self._shape())

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    # -- torch's predicates and memory facts ----------------------------------
    ndimension = dim

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def layout(self) -> layout:
        return strided

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    # compat has dense tensors only: no sparse, quantized, MKL-DNN or nested ones
    is_sparse = is_quantized = is_mkldnn = is_nested = property(lambda self: False)

    def is_complex(self) -> bool:
        return False  # compat has no complex dtypes

    def is_conj(self) -> bool:
        return False

    def is_neg(self) -> bool:
        return False

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def is_shared(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_same_size(self, other: TensorBase) -> bool:
        return self._shape() == other._shape()

    def is_nonzero(self) -> bool:
        n = self.numel()
        if n != 1:
            raise RuntimeError(
                "Boolean value of Tensor with "
                f"{'no values' if not n else 'more than one value'} is ambiguous"
            )
        return bool(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- conversion ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """Shares memory: later in-place ops on this tensor show in the array."""
        # torch refuses it in grad mode only: no_grad and a Function's forward
        # read such tensors freely
        if self.requires_grad_flag and not force and grad_mode.is_grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        self._needs_value(".numpy()")
        where = self.device
        if where.type != "cpu":  # torch's: only a CPU tensor shares its memory
            if force:  # torch: .detach().cpu().numpy(), a copy
                return np.array(self._data)
            raise TypeError(
                f"can't convert {where} device type tensor to numpy. Use "
                "Tensor.cpu() to copy the tensor to host memory first."
            )
        s = self._s
        if s.numpy is None:
            s.numpy, s.array = np.array(s.array), None  # a writeable host copy
        out = s.numpy if self._view is None else _layout.numpy_view(s.numpy, self._view)
        return out if self._as is None else out.view(self._as)

    def __array__(self, dtype=None, copy=None):
        self._needs_value("np.asarray(tensor)")
        if self.is_meta:  # torch's: as .numpy() of a tensor off the CPU
            raise TypeError(
                "can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first."
            )
        array = np.asarray(self._data)
        return array if dtype is None else array.astype(dtype)

    def _scalar(self, what: str) -> Any:
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        self._needs_value(what)
        if type(self._s.pending) is MetaArray:
            raise RuntimeError(_meta.NO_ITEM)
        return np.asarray(self._data).reshape(()).item()

    def item(self) -> Any:
        return self._scalar("`.item()`")

    def tolist(self) -> Any:
        self._needs_value(".tolist()")
        if self.is_meta:
            raise NotImplementedError(_meta.NO_DATA)
        return np.asarray(self._data).tolist()

    def __float__(self) -> float:
        return float(self._scalar("float(tensor)"))

    def __int__(self) -> int:
        return int(self._scalar("int(tensor)"))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        self._needs_value(
            "using a tensor as an index", "index with Python ints or tensors"
        )
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
            )
        self._needs_value(
            "data-dependent Python control flow (`if`/`while`/`and`/`or`/`assert` "
            "on a tensor calls bool(tensor))",
            "compute both branches and pick with torch.where, or decide outside "
            "the step",
        )
        return bool(self.item())

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))  # type: ignore[index]

    def __repr__(self) -> str:
        self._needs_value(*_PRINTING)
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # torch: a plain 0-d tensor formats as its Python number (f"{loss}" is
        # 0.123456789..., not tensor(0.1235)); a Parameter or a subclass, or a
        # tensor with dims, as an object does: repr, or a TypeError for a spec.
        self._needs_value(*_PRINTING)
        if self.dim() == 0 and type(self) is _tensor_class and not self.is_meta:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo: dict) -> Tensor:
        """``copy.deepcopy``: a leaf with its own copy of the storage (tensors
        copied together that shared a storage share the new one), its grad too."""
        if id(self) in memo:
            return memo[id(self)]
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support "
                "the deepcopy protocol at the moment.  If you were attempting to "
                "deepcopy a module, this may be because of a torch.nn.utils."
                "weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
            )
        s = self._s
        storage = memo.get(id(s))
        if storage is None:
            copied = np.array(s.numpy) if s.numpy is not None else None
            storage = memo[id(s)] = _Storage(None if copied is not None else s.array)
            storage.numpy = copied
        new = TensorBase._wrap(None, self.requires_grad_flag, cls=type(self))
        new._s, new._view, new._as = storage, self._view, self._as
        memo[id(self)] = new
        if self.grad is not None:
            new.grad = self.grad.__deepcopy__(memo)
        for key, value in self.__dict__.items():
            if not key.startswith("_"):
                new.__dict__[key] = copy.deepcopy(value, memo)
        return new

    def __reduce__(self):
        raise TypeError(
            "jaxblitz.compat tensors are not pickled; save them with torch.save "
            "(safetensors) instead"
        )


# Every op returns a `jaxblitz.compat.tensor.Tensor`: this base plus the mixins of
# ops, shape_ops, creation and the autograd graph. Those modules come before
# tensor.py in the import order (Tensor is made of them), so tensor.py hands its
# class to `_wrap` once, here.
_tensor_class: type[Tensor]


def use_tensor_class(cls: type[Tensor]) -> None:
    """Called once by :mod:`jaxblitz.compat.tensor` with its ``Tensor``."""
    global _tensor_class
    _tensor_class = cls
