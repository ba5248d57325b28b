"""Blitz 1, "Tensors": constructors (``torch.tensor``, ``zeros``, ``rand`` ...) and
the ``x.new_*`` methods (:class:`CreationMixin`).

torch draws random numbers from a global generator; here that generator is a JAX
key split on every draw (``torch.manual_seed(s)`` resets it), so a seeded script is
reproducible, though its numbers differ from PyTorch's.

Tensors are made where torch makes them: on the CPU unless ``device=`` or the
default device (``torch.set_default_device``, ``with torch.device(...)``) says
otherwise; ``zeros_like``/``x.new_*`` on their source's device. A tensor for an
accelerator is made there (:func:`_placed`) and committed to it.
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import os
import warnings
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _threads
from jaxblitz.compat._warn_always import warn_once
from jaxblitz.compat.tensor import _argparse, _dtype, _host_random, _meta
from jaxblitz.compat.tensor._checks import check_values, error
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._fresh_layout import laid_out
from jaxblitz.compat.tensor._layout import Layout
from jaxblitz.compat.tensor._signatures import (
    ARANGE_OPTIONS,
    DRAW_OPTIONS,
    EYE_OPTIONS,
    LINSPACE_OPTIONS,
    NEW_OPTIONS,
)
from jaxblitz.compat.tensor._tensor_base import (
    Size,
    TensorBase,
    _as_int,
    _Storage,
    _type_name,
    from_host,
    sizes,
    strided,
)

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_TORCH_DEFAULT_SEED = 67280421310721  # torch's default generator seed


class Generator:
    """``torch.Generator``: threefry key data, split on every draw.

    The state is raw key data (two uint32s), seeded and split on the host with
    JAX's exact bits (:mod:`compat._host_random`: no program to compile for
    either); inside ``torch.compile`` it is a tracer, split by ``jax.random``.
    Where JAX's default PRNG is not partitionable threefry, it is a typed
    ``jax.random`` key, split by ``jax.random`` throughout.
    """

    def __init__(self, device: Any = "cpu"):
        where = _dtype.device(device)
        if where.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        # torch's CPU generator is on "cpu", whatever index was asked for
        self._device = _dtype.device("cpu") if where.type == "cpu" else where
        self.manual_seed(_TORCH_DEFAULT_SEED)

    @property
    def device(self) -> _dtype.device:
        return self._device

    def manual_seed(self, seed: Any) -> Generator:
        seed = int(seed)
        if not -(1 << 63) <= seed < 1 << 64:  # torch's range and message
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % (1 << 64)
        if _host_random.on_host():
            self._key = _host_random.seed_bits(seed)
        else:
            with x64(True):
                self._key = jax.random.key(seed - (seed >= 1 << 63) * (1 << 64))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """``Generator.seed()``: seeded from the operating system's entropy (a
        non-deterministic 64-bit seed, as torch's); the seed is returned."""
        seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(seed)
        return seed

    def get_state(self) -> Tensor:
        """``Generator.get_state()``: a uint8 tensor (torch's ByteTensor) that
        :meth:`set_state` restores exactly. Its bytes are compat's state -- the
        seed, then the JAX key data -- not torch's Mersenne Twister state, and
        the two do not cross."""
        key = self._key
        if isinstance(key, jax.core.Tracer):
            raise RuntimeError(
                "get_state: the generator's state is being traced (inside "
                "torch.compile); read it outside the compiled function"
            )
        data = jax.random.key_data(key) if _typed(key) else key
        words = np.asarray(data, np.uint32).reshape(-1).astype("<u4")
        raw = np.array([self._seed], "<u8").tobytes() + words.tobytes()
        return tensor(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state: Any) -> Generator:
        """``Generator.set_state(state)``: a state from :meth:`get_state`."""
        if not isinstance(new_state, TensorBase):
            raise TypeError(
                f"expected a torch.ByteTensor, but got {_type_name(new_state)}"
            )
        if new_state.dtype is not _dtype.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.asarray(new_state.detach().numpy(), np.uint8).reshape(-1).tobytes()
        size = 8 + 4 * int(np.prod(self._key_shape()))
        if len(raw) != size:
            raise RuntimeError(
                f"Expected a jaxblitz.compat generator state of size {size} but found "
                f"the input RNG state size to be {len(raw)} (compat's state is its "
                "own: a state from PyTorch's torch.get_rng_state() cannot be set)"
            )
        seed = int(np.frombuffer(raw[:8], "<u8")[0])
        words = np.frombuffer(raw[8:], "<u4").astype(np.uint32)
        if _host_random.on_host():
            key: Any = words.copy()
        else:
            words = words.reshape(self._key_shape())
            key = jax.random.wrap_key_data(words, impl=jax.config.jax_default_prng_impl)
        self._seed, self._key = seed, key
        return self

    def _key_shape(self) -> tuple:
        key = self._key
        return tuple(jax.random.key_data(key).shape) if _typed(key) else (2,)

    def next_key(self) -> jax.Array | np.ndarray:
        if "error" in vmap_randomness:
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. "
                "Please either use the 'same' or 'different' randomness flags on "
                "vmap or perform the randomness operation out of vmap"
            )
        key = self._key
        if isinstance(key, jax.core.Tracer) or _typed(key):
            with x64(True):
                self._key, key = _split(key)
            return key
        # raw threefry data: the host's, or a program's output (torch.compile)
        self._key, key = _host_random.split_bits(np.asarray(key))
        if not _host_random.on_host():  # JAX's default PRNG changed since
            key = jax.random.wrap_key_data(key, impl="threefry2x32")
        return key


# The ``randomness`` of each torch.func.vmap whose function is being traced: a
# draw under "error" raises, as torch's; under "same" the key is not batched,
# so every element draws the same numbers.
vmap_randomness: list[str] = []


def _typed(key: Any) -> bool:
    return jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)


@jax.jit
def _split(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``jax.random.split(key)``'s two keys, as one program (split eagerly, then
    unpacked, it compiled two): the generator's next state and the key to draw
    with. Inside ``torch.compile`` (raw threefry data, as the eager state is),
    or a typed key where JAX's default PRNG is not partitionable threefry."""
    if _typed(key):
        keys = jax.random.split(key)
        return keys[0], keys[1]
    keys = jax.random.split(jax.random.wrap_key_data(key, impl="threefry2x32"))
    return jax.random.key_data(keys[0]), keys[1]


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    """``torch.seed()``: the default generator seeded non-deterministically; the
    seed is returned."""
    return default_generator.seed()


def get_rng_state() -> Tensor:
    """``torch.get_rng_state()``: the default generator's state as a uint8
    tensor; compat's bytes (seed and JAX key), not torch's Mersenne state."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """``torch.set_rng_state(state)``: the next draws repeat those that followed
    :func:`get_rng_state`."""
    default_generator.set_state(new_state)


def _key(generator: Generator | None) -> jax.Array:
    return (generator or default_generator).next_key()


def draw(
    sample: Any,
    key: jax.Array,
    shape: tuple,
    dtype: Any,
    *static: Any,
    operands: tuple = (),
):
    """``sample(key, shape, dtype, *static)`` -- ``jax.random.uniform``, ``normal``
    or ``randint`` -- with the same values, compiled once per size class.

    JAX's partitionable threefry (its default) draws element ``i`` from
    ``(key, i)`` alone, so n values drawn flat are the first n of any longer flat
    draw. Eagerly, the values are drawn flat at the next size class
    (:func:`_size_class`) and cut to ``shape``: the random program, slow to
    compile (BENCHMARKS.md), is shared by every shape of a class, and a new shape
    compiles only a slice. Under tracing (``torch.compile``), or with another
    random implementation, it draws exactly n, the same values. ``operands``
    (``randint``'s bounds) are arguments of the program, not part of it: a new
    value compiles nothing.
    """
    n = int(np.prod(shape, dtype=np.int64))
    if isinstance(key, jax.core.Tracer) or not n:
        return sample(key, (n,), dtype, *operands, *static).reshape(shape)
    prefix = jax.config.jax_threefry_partitionable and (
        isinstance(key, np.ndarray)  # host key data: threefry (see Generator)
        or str(jax.random.key_impl(key)) == "threefry2x32"
    )
    size = _size_class(n) if prefix else n
    flat = _draw_flat(
        key, *operands, size=size, dtype=dtype, sample=sample, static=static
    )
    return _cut(flat, n=n, shape=tuple(shape))


def _size_class(n: int) -> int:
    """n rounded up: to a power of two (at least 256) up to 2**16, beyond that to
    a multiple of 1/16 of n's power of two (at most 1/16 more values drawn)."""
    if n <= 1 << 16:
        return max(256, 1 << (n - 1).bit_length())
    step = 1 << (n.bit_length() - 5)
    return -(-n // step) * step


@functools.partial(jax.jit, static_argnames=("size", "dtype", "sample", "static"))
def _draw_flat(key, *operands, size, dtype, sample, static):
    return sample(key, (size,), dtype, *operands, *static)


def _cut(flat: jax.Array, *, n: int, shape: tuple) -> jax.Array:
    """The first ``n`` values of ``flat`` in ``shape``. On the CPU, cut on the host
    (the array's own memory, then one copy back): a program per shape compiled
    slowly for a slice (BENCHMARKS.md); elsewhere, that program."""
    if next(iter(flat.devices())).platform == "cpu":
        return from_host(np.asarray(flat)[:n].reshape(shape), flat)
    return _cut_jit(flat, n=n, shape=shape)


@functools.partial(jax.jit, static_argnames=("n", "shape"))
def _cut_jit(flat, *, n, shape):
    return flat[:n].reshape(shape)


# ---------------------------------------------------------------------------
# From data
# ---------------------------------------------------------------------------


def _infer(data: Any) -> _dtype.dtype:
    flat = np.asarray(data, dtype=object).ravel().tolist()
    for v in flat:  # NumPy would keep only the real parts
        if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
            raise NotImplementedError(
                f"complex number {v!r}: jaxblitz.compat has no complex dtypes (torch "
                "would make a complex64 tensor); use real tensors"
            )
    # torch folds its elements' dtypes with promote_types: a Python number
    # counts as bool, int64 or the default float, a NumPy scalar (or a tensor's
    # value) as its own dtype, so [np.float64(r), 2] is float64, not float32.
    found = None
    for v in flat:
        if isinstance(v, np.generic | np.ndarray):
            d = _dtype.to_dtype(v.dtype)
        else:
            d = _dtype.scalar_dtype(v)
        found = d if found is None else _dtype.promote_types(found, d)
    return _dtype.get_default_dtype() if found is None else found


def _check_layout(name: str, layout: Any) -> None:
    """torch's ``layout=`` of a factory: compat's tensors are all strided."""
    if layout is not None and layout is not strided:
        raise NotImplementedError(
            f"{name}: layout={layout} is not supported by jaxblitz.compat (its "
            "tensors are torch.strided)"
        )


def _placed(fn):
    """A factory call whose tensor goes to an accelerator makes its values there
    (JAX's default device set to it meanwhile), not on the CPU and copied over."""

    @functools.wraps(fn)
    def placed(
        *args: Any, device: Any = None, layout: Any = None, **kwargs: Any
    ) -> Tensor:
        _check_layout(fn.__name__, layout)
        where = _dtype.factory_device(device)
        if where.type == "meta":
            return _on_meta(fn, args, where, kwargs)
        target = _dtype.placement(where)
        if target is None:
            return fn(*args, device=where, **kwargs)
        with jax.default_device(target):
            return fn(*args, device=where, **kwargs)

    return placed


_RAND_SCHEMAS = (
    "tuple of ints size, *, torch.Generator generator, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    "tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False",
)


def _size_keyword(fn: Any, skip: int = 0) -> Any:
    """torch's ``*size`` factories take the size as a keyword too
    (``torch.empty(size=(2, 3))``, ``x.new_zeros(size=...)``); ``skip`` counts
    the leading arguments that are not the size (a method's ``self``)."""

    @functools.wraps(fn)
    def sized(*args: Any, **kwargs: Any) -> Any:
        if "size" in kwargs:
            if len(args) > skip:
                raise _size_twice(fn.__name__, args[skip:], kwargs)
            args = (*args, kwargs.pop("size"))
        return fn(*args, **kwargs)

    return sized


def _size_twice(name: str, args: tuple, kwargs: dict) -> TypeError:
    """torch's error for a size given both by position and by keyword."""
    if name not in ("rand", "randn"):
        return TypeError(f"{name}() got multiple values for argument 'size'")
    got = [_type_name(a) for a in args]
    got += [f"{k}={_type_name(v)}" for k, v in kwargs.items() if v is not None]
    expected = "".join(f" * ({schema})\n" for schema in _RAND_SCHEMAS)
    return TypeError(
        f"{name}() received an invalid combination of arguments - got "
        f"({', '.join(got)}), but expected one of:\n{expected}"
    )


def _on_meta(fn: Any, args: tuple, where: Any, kwargs: dict) -> Tensor:
    """A factory call on the meta device: its shape and dtype, and the generator
    left as it was (torch's meta kernels draw nothing; compat's draw, if any,
    is dropped)."""
    generator = kwargs.get("generator") or default_generator
    state = generator._key
    try:
        return fn(*args, device=where, **kwargs)
    finally:
        generator._key = state


def _finish(array: Any, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """The tensor of ``array`` on ``device`` (None: the default device): a CPU
    tensor's array is left uncommitted
    (:func:`jaxblitz.compat.tensor._dtype.placement`), an accelerator's is
    committed to it."""
    where = _dtype.factory_device(device)
    if where.type == "meta":  # the shape and dtype, no elements kept
        t = TensorBase._wrap(_meta.like(array, _meta_dtype(array, dtype)))
        if requires_grad:
            t._set_requires_grad(
                True, "Only Tensors of floating point and complex dtype"
            )
        return t
    target = _dtype.placement(where)
    if target is None and dtype is None and isinstance(array, np.ndarray):
        return _host_made(array, requires_grad)
    with x64(True):
        array = jnp.asarray(
            array, dtype=None if dtype is None else _dtype.to_dtype(dtype).np
        )
        if target is not None:
            array = jax.device_put(array, target)
    t = TensorBase._wrap(array)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
    return t


def _meta_dtype(array: Any, dtype: Any) -> np.dtype:
    """The dtype a meta tensor of ``array`` gets: ``dtype``'s, else the
    array's as a torch dtype."""
    return _dtype.to_dtype(array.dtype if dtype is None else dtype).np


def _host_made(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = TensorBase._wrap(from_host(array))
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
    return t


_C_NAMES = {"int32": "int", "float32": "float", "float64": "double"}
_C_NAMES.update(float16="c10::Half", bfloat16="c10::BFloat16")
# The largest finite value of each narrow float; float16's and bfloat16's are
# checked only when more than one element is filled (torch's one-element fill
# rounds to inf unchecked).
_FLOAT_MAX = {"float32": 3.4028234663852886e38, "float16": 65504.0}
_FLOAT_MAX["bfloat16"] = 3.3895313892515355e38


def _check_fill(fill: Any, dt: np.dtype, numel: int) -> None:
    """torch's checked conversion of a fill value: integers out of the dtype's
    range (an unsigned one also takes a negative integer its width can wrap),
    NaN or infinity into integers, and a finite float's overflow are refused."""
    if isinstance(fill, complex | np.complexfloating) or dt.kind not in "iufV":
        return
    value = fill.item() if isinstance(fill, np.generic) else fill
    if dt.kind in "fV":  # (V: ml_dtypes' bfloat16)
        top = _FLOAT_MAX.get(dt.name) if dt.name == "float32" or numel > 1 else None
        bad = top is not None and math.isfinite(value) and abs(value) > top
    else:
        info = np.iinfo(dt)
        wraps = dt.kind == "u" and isinstance(value, int)  # -1 into uint8: 255
        low = -info.max if wraps else info.min
        bad = not math.isfinite(value) or not low <= value <= info.max
    if bad:
        name = _C_NAMES.get(dt.name, f"{dt.name}_t")
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def _filled(name: str, size: tuple, fill: Any, dt: np.dtype, device: Any) -> Any:
    """``size`` filled with ``fill``: made by NumPy where the tensor lives on the
    CPU (handed over, no program: a tiny model's ``zeros`` each step), by XLA on
    the accelerator it is placed on (no copy over). None where NumPy refuses
    the fill (out of the dtype's range, NaN into integers): XLA's casts then."""
    shape = _size(name, size)
    where = _dtype.factory_device(device)
    if where.type == "meta":  # torch allocates nothing for a meta tensor
        return _meta.MetaArray(shape, dt)
    if _dtype.placement(where) is None:
        try:
            with np.errstate(all="ignore"):  # float16's overflow to inf is torch's
                return np.full(shape, fill, dt)
        except (OverflowError, ValueError, TypeError):
            pass
    with x64(True):
        return jnp.full(shape, fill, dt)


def _refuse(
    fn: str, args: tuple, params: tuple = (), options: tuple = (), **given: Any
) -> None:
    """torch's error for a factory call's argument of a type it refuses
    (``given``: its generator, dtype and requires_grad), if one is."""
    keywords = {k: v for k, v in given.items() if v is not None and v is not False}
    types = {"torch_dtype": _dtype.dtype, "torch_Generator": Generator}
    _argparse.refuse_call(fn, args, params, keywords, options, **types)


# what torch's Number takes (a one-element tensor gives its value)
_NUMBERS = (int, float, complex, np.number, np.bool_, TensorBase)


def tensor(
    data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``torch.tensor(data)``: always a copy; ints -> int64, floats -> float32."""
    if isinstance(data, TensorBase):
        _warn_copy_construct("torch.tensor")
    return _tensor(data, dtype, device, requires_grad)


def _warn_copy_construct(how: str, stacklevel: int = 3) -> None:
    """torch's warning for a tensor given as data to ``how`` (a copy that
    leaves the graph), attributed to the caller of ``how``."""
    warnings.warn(
        "To copy construct from a tensor, it is recommended to use "
        "sourceTensor.detach().clone() or "
        "sourceTensor.detach().clone().requires_grad_(True), rather than "
        f"{how}(sourceTensor).",
        UserWarning,
        stacklevel=stacklevel,
    )


def _tensor(
    data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``tensor`` without its warning for a tensor given as data."""
    if type(requires_grad) is not builtins.bool or (
        dtype is not None and type(dtype) is not _dtype.dtype
    ):
        if requires_grad is None:  # torch.tensor's has no None default
            raise _argparse.must_be("tensor", "requires_grad", "bool", None)
        _refuse("tensor", (), dtype=dtype, requires_grad=requires_grad)
    if isinstance(data, TensorBase):  # torch: on data's device unless told
        device = device or _dtype.explicit_default() or _dtype.tensor_device(data)
        return _finish(data._data, dtype or data.dtype, device, requires_grad)
    if isinstance(data, np.ndarray | np.generic):
        array = np.array(data, copy=True)
        dtype = dtype or _dtype.to_dtype(array.dtype)
        return _finish(array, dtype, device, requires_grad)
    if isinstance(data, list | tuple) and builtins.any(
        isinstance(v, TensorBase) for v in data
    ):
        data = [np.asarray(v) if isinstance(v, TensorBase) else v for v in data]
    _check_ragged(data)
    array = np.asarray(data)
    if array.dtype.kind in "OSU":  # not numbers: torch's error, if it has one
        _argparse.refuse_data(data, dtype)
    return _finish(array, dtype or _infer(data), device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    if isinstance(data, TensorBase) and dtype in (None, data.dtype):
        where = device or _dtype.explicit_default()
        return data if where is None else data.to(where)
    if (
        isinstance(data, np.ndarray)
        and dtype in (None, _dtype.to_dtype(data.dtype))
        and _dtype.factory_device(device).type == "cpu"
        and data.dtype.kind in "biufc"
    ):
        return from_numpy(data)  # torch shares the array's memory
    return _tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """``torch.from_numpy``: shares ``array``'s memory both ways (see .tensor)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dtype.to_dtype(array.dtype)  # raises for dtypes torch lacks
    t = TensorBase._wrap(None)
    if array.flags.c_contiguous:
        t._s = _Storage(numpy=array)
        return t
    item = array.itemsize
    if any(st < 0 for st in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors "
            "with negative strides are not currently supported. (You can probably "
            "work around this by making a copy of your array  with array.copy().) "
        )
    if any(st % item for st in array.strides):
        raise ValueError(
            "given numpy array strides not a multiple of the element byte size. "
            "Copy the numpy array to reallocate the memory."
        )
    # A strided array: the tensor is a layout over the memory it spans.
    strides = tuple(st // item for st in array.strides)
    span = 1 + builtins.sum(
        (n - 1) * st for n, st in zip(array.shape, strides, strict=True)
    )
    buffer = np.lib.stride_tricks.as_strided(array, (span,), (item,))
    t._s = _Storage(numpy=buffer)
    t._view = Layout(tuple(array.shape), strides, 0)
    return t


# ---------------------------------------------------------------------------
# Filled and ranged
# ---------------------------------------------------------------------------


def _size(name: str, size: tuple) -> tuple[int, ...]:
    """A torch size from ``*size`` or one sequence: ints, none negative."""
    size = sizes(name, size)
    for s in size:
        if s < 0 and name == "zeros":  # torch's zeros is a decomposition
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}"
            )
    return size


def _int(name: str, arg: str, position: int, value: Any) -> int:
    """An int argument such as ``eye``'s ``n``: a float (even ``2.0``) is refused."""
    index = _as_int(value)
    if index is None:
        raise TypeError(
            f"{name}(): argument '{arg}' (position {position}) must be int, not "
            f"{_type_name(value)}"
        )
    return index


def _float_dtype(dtype: Any) -> np.dtype:
    return _dtype.to_dtype(dtype or _dtype.get_default_dtype()).np


def _draw_dtype(dtype: Any, kernel: str) -> np.dtype:
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    if not dt.is_floating_point:  # torch's kernels have no integer draws
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dt.scalar_type}'"
        )
    return dt.np


def _check_ragged(data: Any, dim: int = 0) -> None:
    """torch's error for a ragged nested list: "expected sequence of length 2 at
    dim 1 (got 1)"; numpy's own message says less."""
    if not isinstance(data, list | tuple) or not data:
        return
    first = data[0]
    if isinstance(first, list | tuple):
        for item in data[1:]:
            if not isinstance(item, list | tuple):
                raise TypeError("not a sequence")
            if len(item) != len(first):
                raise ValueError(
                    f"expected sequence of length {len(first)} at dim {dim + 1} "
                    f"(got {len(item)})"
                )
        for item in data:
            _check_ragged(item, dim + 1)


@_placed
def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if type(requires_grad) is not builtins.bool or (
        dtype is not None and type(dtype) is not _dtype.dtype
    ):
        _refuse("full", (size, fill_value), dtype=dtype, requires_grad=requires_grad)
    if isinstance(fill_value, TensorBase):
        fill_value = fill_value.item()
    if not isinstance(fill_value, int | float | complex | np.number | np.bool_):
        raise TypeError(
            "full(): argument 'fill_value' (position 2) must be Number, not "
            f"{_type_name(fill_value)}"
        )
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    dt = _dtype.to_dtype(dtype).np
    if not isinstance(size, tuple | list):  # torch takes no bare int here
        raise _argparse.must_be("full", "size", "tuple of ints", size, 1)
    shape = _size("full", (size,))
    _check_fill(fill_value, dt, math.prod(shape))
    array = _filled("full", (shape,), fill_value, dt, device)
    return _finish(array, None, device, requires_grad)


@_size_keyword
@_placed
def zeros(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    if type(requires_grad) is not builtins.bool or (
        dtype is not None and type(dtype) is not _dtype.dtype
    ):
        _refuse("zeros", size, dtype=dtype, requires_grad=requires_grad)
    array = _filled("zeros", size, 0, _float_dtype(dtype), device)
    return _finish(array, None, device, requires_grad)


@_size_keyword
@_placed
def ones(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    if type(requires_grad) is not builtins.bool or (
        dtype is not None and type(dtype) is not _dtype.dtype
    ):
        _refuse("ones", size, dtype=dtype, requires_grad=requires_grad)
    array = _filled("ones", size, 1, _float_dtype(dtype), device)
    return _finish(array, None, device, requires_grad)


@_size_keyword
def empty(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    memory_format: Any = None,
    _like: Any = None,
) -> Tensor:
    """``torch.empty``: JAX has no uninitialised memory, so zeros."""
    _check_layout("empty", layout)
    if type(requires_grad) is not builtins.bool or (
        dtype is not None and type(dtype) is not _dtype.dtype
    ):
        _refuse("empty", size, dtype=dtype, requires_grad=requires_grad)
    size = _size("empty", size)
    out = zeros(size, dtype=dtype, device=device)
    out = laid_out(out, memory_format, _like)
    return out.requires_grad_(True) if requires_grad else out


@_placed
def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if (
        type(n) is not int
        or (m is not None and type(m) is not int)
        or type(requires_grad) is not builtins.bool
        or (dtype is not None and type(dtype) is not _dtype.dtype)
    ):
        args = (n,) if m is None else (n, m)
        params = ("n: int", "m: int")
        given = {"dtype": dtype, "requires_grad": requires_grad}
        _refuse("eye", args, params, EYE_OPTIONS, **given)
    n = _int("eye", "n", 1, n)
    m = n if m is None else _int("eye", "m", 2, m)
    for arg, value in (("n", n), ("m", m)):
        if value < 0:
            raise RuntimeError(f"{arg} must be greater or equal to 0, got {value}")
    with x64(True):
        array = jnp.eye(n, m, dtype=_float_dtype(dtype))
    return _finish(array, None, device, requires_grad)


@_placed
def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if (
        type(requires_grad) is not builtins.bool
        or (dtype is not None and type(dtype) is not _dtype.dtype)
        or not isinstance(start, _NUMBERS)
        or not (end is None or isinstance(end, _NUMBERS))
        or not isinstance(step, _NUMBERS)
    ):
        args = (start,) if end is None else (start, end)
        args += () if type(step) is int and step == 1 else (step,)
        names = ("end",) if len(args) == 1 else ("start", "end", "step")
        params = tuple(f"{name}: Number" for name in names)
        given = {"dtype": dtype, "requires_grad": requires_grad}
        _refuse("arange", args, params, ARANGE_OPTIONS, **given)
    if end is None:
        start, end = 0, start
    lo, hi, by = (
        v.item() if isinstance(v, TensorBase) else v for v in (start, end, step)
    )
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"unsupported range: {lo} -> {hi}")
    if by == 0:
        raise RuntimeError("step must be nonzero")
    if (hi - lo) * by < 0:  # torch refuses what NumPy turns into []
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        ints = builtins.all(isinstance(v, int) for v in (start, end, step))
        dtype = _dtype.int64 if ints else _dtype.get_default_dtype()
    dt = _dtype.to_dtype(dtype)
    if dt.np.kind in "iu":
        return _finish(_int_arange(lo, hi, by, dt), None, device, requires_grad)
    if dt.np in _TORCH_POINTS:
        n = max(int(np.ceil((float(hi) - float(lo)) / float(by))), 0)
        return _finish(_torch_arange(lo, by, n, dt.np), None, device, requires_grad)
    with x64(True):
        array = jnp.arange(start, end, step, dtype=dt.np)
    return _finish(array, None, device, requires_grad)


def _int_arange(lo: Any, hi: Any, by: Any, dt: _dtype.dtype) -> np.ndarray:
    """torch's integer arange: bounds and step cast to int64 first (truncated)."""
    start, end, step = int(lo), int(hi), int(by)
    if step == 0 and dt is _dtype.int64:  # a fractional step that truncates to 0
        raise ValueError("step must be nonzero")  # (torch's words and type)
    if dt is _dtype.int64:  # torch counts in int64 arithmetic for int64 only
        sign = 1 if step > 0 else -1
        span = end - start + step - sign
        n = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
    else:
        n = int(np.ceil((float(hi) - float(lo)) / float(by)))
    return (start + step * np.arange(max(n, 0), dtype=np.int64)).astype(dt.np)


def _space_args(name: str, start: Any, end: Any, steps: Any) -> tuple:
    """linspace/logspace's checks, in torch's words; 0-dim tensor ends as numbers."""
    steps = _int(name, "steps", 3, steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    ends = [v for v in (start, end) if isinstance(v, TensorBase)]
    if builtins.any(v.dim() for v in ends):
        raise RuntimeError(
            f"{name} only supports 0-dimensional start and end tensors, but got "
            + " and ".join(
                f"{arg} with {v.dim()} dimension(s)"
                for arg, v in (("start", start), ("end", end))
                if isinstance(v, TensorBase) and v.dim()
            )
            + "."
        )
    start, end = (v.item() if isinstance(v, TensorBase) else v for v in (start, end))
    return start, end, steps


@_placed
def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if (
        type(requires_grad) is not builtins.bool
        or (dtype is not None and type(dtype) is not _dtype.dtype)
        or not isinstance(start, _NUMBERS)
        or not isinstance(end, _NUMBERS)
        or type(steps) is not int
    ):
        args = (start, end, steps)
        params = ("start: Number", "end: Number", "steps: int")
        given = {"dtype": dtype, "requires_grad": requires_grad}
        _refuse("linspace", args, params, LINSPACE_OPTIONS, **given)
    start, end, steps = _space_args("linspace", start, end, steps)
    dt = np.dtype(_float_dtype(dtype))
    if dt.kind in "iu":  # torch: ends cast to the dtype, the points truncated
        array = np.trunc(_two_sided(int(start), int(end), steps)).astype(dt)
        return _finish(array, None, device, requires_grad)
    if dt in _TORCH_POINTS:
        points = torch_linspace(start, end, steps, dt)
        return _finish(points, None, device, requires_grad)
    with x64(True):
        array = jnp.linspace(start, end, steps, dtype=dt)
    return _finish(array, None, device, requires_grad)


@_placed
def logspace(
    start: float,
    end: float,
    steps: int,
    base: float = 10.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.logspace``: ``base ** linspace(start, end, steps)``."""
    start, end, steps = _space_args("logspace", start, end, steps)
    dt = np.dtype(_float_dtype(dtype))
    if steps == 1:  # torch: base ** start, in double, whatever the dtype
        array = np.full(1, float(base) ** float(start))
    elif dt.kind in "iu":  # torch: an integer base and ends, float exponents
        array = np.trunc(float(int(base)) ** _two_sided(int(start), int(end), steps))
    else:
        array = float(base) ** _two_sided(float(start), float(end), steps)
    return _finish(array.astype(dt), None, device, requires_grad)


# torch's CPU kernels count float32 and float64 points with fused multiply-adds
# (one rounding), arange in double in blocks of one vector register's width;
# compat makes the same points bit for bit, so that what is computed from them
# (a sampling grid's positions on pixel centres, a positional encoding) is too.
_TORCH_POINTS = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}


def _fma(a: Any, b: Any, c: Any, xp: Any = np) -> Any:
    """``a * b + c`` in float64 rounded once (error-free product and sum); ``xp``
    the array module (NumPy, or ``jax.numpy`` inside a program)."""
    a, b, c = (xp.asarray(v, xp.float64) for v in (a, b, c))
    p = a * b
    split = 134217729.0  # 2**27 + 1: Veltkamp's split into 26-bit halves
    a_hi = split * a - (split * a - a)
    b_hi = split * b - (split * b - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    v = s - p
    t = (p - (s - v)) + (c - v)
    with np.errstate(invalid="ignore"):  # inf - inf in the error terms
        out = s + (t + err)
    return xp.where(xp.isfinite(s), out, s)


def torch_linspace(start: Any, end: Any, steps: int, dt: np.dtype, xp: Any = np) -> Any:
    """torch's float32/float64 ``linspace`` points, bit for bit: the step in the
    dtype, each half counted from its own end with one rounding. ``xp``: the
    array module (``jax.numpy`` for ends known only inside a program)."""
    first, last = (xp.asarray(v).astype(dt) for v in (start, end))
    if steps <= 1:
        return xp.full(steps, first, dt)
    count = xp.asarray(steps - 1).astype(dt)
    if xp is not np:  # XLA would multiply by the constant's reciprocal: 2 roundings
        count = jax.lax.optimization_barrier(count)
    step = (last - first) / count  # in the dtype, as torch's step_t
    i = xp.arange(steps)
    low = i < steps // 2
    k = xp.where(low, i, steps - 1 - i)
    points = _fma(xp.where(low, step, -step), k, xp.where(low, first, last), xp)
    return points.astype(dt)


_GRAIN = 32768  # torch's internal::GRAIN_SIZE: shorter loops run on one thread


def _torch_arange(start: float, step: float, n: int, dt: np.dtype) -> np.ndarray:
    """torch's float32/float64 ``arange`` points, bit for bit: counted in double,
    a register's width at a time from that block's first point (rounded to the
    dtype), the last ``len % (2 * width)`` of each thread's share one by one. A
    range of more than ``_GRAIN`` points is shared among :func:`get_num_threads`
    threads as torch's ``parallel_for`` shares it."""
    width = _TORCH_POINTS[dt]
    i = np.arange(n)
    chunk = n
    if n >= _GRAIN:
        threads = min(_threads.get_num_threads(), -(-n // _GRAIN))
        chunk = -(-n // threads)
    begin = i - i % chunk if chunk else i
    length = np.minimum(chunk, n - begin)
    local = i - begin
    first = i - local % width
    blocked = local < length - length % (2 * width)
    base = _fma(step, first, start).astype(dt).astype(np.float64)
    points = np.where(blocked, _fma(step, i - first, base), _fma(step, i, start))
    return points.astype(dt)


def _two_sided(first: float, last: float, steps: int) -> np.ndarray:
    """torch's points from ``first`` to ``last``: a float step, each half counted
    from its own end."""
    if steps == 1:
        return np.full(1, float(first))
    step = (float(last) - float(first)) / (steps - 1)
    i = np.arange(steps)
    return np.where(i < steps // 2, first + step * i, last - step * (steps - i - 1))


# ---------------------------------------------------------------------------
# Random
# ---------------------------------------------------------------------------


def _check_draw(
    name: str, size: tuple, generator: Any, dtype: Any, requires_grad: Any
) -> None:
    """rand/randn's arguments of a type torch's parser refuses, in its words."""
    if (
        type(requires_grad) is not builtins.bool
        or (dtype is not None and type(dtype) is not _dtype.dtype)
        or generator is not None
        and type(generator) is not Generator
    ):
        _refuse(
            name,
            size,
            options=DRAW_OPTIONS,
            generator=generator,
            dtype=dtype,
            requires_grad=requires_grad,
        )


@_size_keyword
@_placed
def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    _check_draw("rand", size, generator, dtype, requires_grad)
    with x64(True):
        shape = _size("rand", size)
        dt = _draw_dtype(dtype, "check_uniform_bounds")
        array = draw(jax.random.uniform, _key(generator), shape, dt)
    return _finish(array, None, device, requires_grad)


@_size_keyword
@_placed
def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    _check_draw("randn", size, generator, dtype, requires_grad)
    with x64(True):
        shape = _size("randn", size)
        dt = _draw_dtype(dtype, "normal_kernel_cpu")
        array = draw(jax.random.normal, _key(generator), shape, dt)
    return _finish(array, None, device, requires_grad)


@_placed
def randint(
    low: int,
    high: Any = None,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """``torch.randint(high, size)`` or ``torch.randint(low, high, size)``."""
    if size is None and isinstance(high, tuple | list):
        low, high, size = 0, low, high
    elif high is None and size is not None:  # torch.randint(high, size=...)
        low, high = 0, low
    if high is None or size is None:
        raise TypeError(
            "randint() missing its size: call randint(high, size) or "
            "randint(low, high, size) with size a tuple of ints, e.g. (3,)"
        )
    low, high = _int("randint", "low", 1, low), _int("randint", "high", 2, high)
    if not isinstance(size, tuple | list):  # torch: randint(5, 3) is refused
        raise TypeError(
            "randint(): argument 'size' (position 3) must be tuple of ints, not "
            f"{_type_name(size)}"
        )
    shape = _size("randint", (size,))
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= "
            f"to={high}"
        )
    dt = _dtype.to_dtype(dtype or _dtype.int64).np
    with x64(True):  # drawn as int64; torch allows any dtype (floats hold ints)
        array = draw(_randint, _key(generator), shape, np.int64, operands=(low, high))
        array = array.astype(dt)
    return _finish(array, None, device, False)


def _randint(key, shape, dtype, low, high):
    return jax.random.randint(key, shape, low, high, dtype)


@_placed
def randperm(
    n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    (n,) = _size("randperm", (_int("randperm", "n", 1, n),))
    dt = _dtype.to_dtype(dtype or _dtype.int64).np
    with x64(True):
        array = jax.random.permutation(_key(generator), jnp.arange(n, dtype=dt))
    return _finish(array, None, device, False)


@_placed
def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """``torch.normal(mean, std, size)`` (numbers) or with tensor mean/std."""
    if size is None:
        shape = np.broadcast_shapes(_shape(mean), _shape(std))
    else:
        shape = _size("normal", (size,))
    if isinstance(std, TensorBase):
        # a pending std is checked at the next sync, not read here
        check_values(
            [std], _negative, error("normal expects all elements of std >= 0.0")
        )
    elif np.any(np.asarray(std) < 0):
        # torch prints the double as C++ streams do: -1, not -1.0
        shown = f"{std:g}" if isinstance(std, builtins.float) else std
        raise RuntimeError(f"normal expects std >= 0.0, but found std {shown}")
    if dtype is None:  # a tensor mean or std gives its dtype, as in torch
        given = [v.dtype for v in (mean, std) if isinstance(v, TensorBase)]
        dtype = given[0] if given else None
    z = randn(*shape, generator=generator, dtype=dtype, device=device)
    if not (isinstance(mean, TensorBase) or isinstance(std, TensorBase)):
        with x64(True):
            mean, std = np.asarray(mean, z.dtype.np), np.asarray(std, z.dtype.np)
            return _finish(z._data * std + mean, None, device, False)
    # a tensor's values, pending or not: one recorded function in both modes
    # (deferred import: autograd loads after this module)
    from jaxblitz.compat.autograd.graph import run  # noqa: PLC0415

    mean, std = (
        v.detach()._value() if isinstance(v, TensorBase) else np.asarray(v, z.dtype.np)
        for v in (mean, std)
    )
    out = run(_affine_fn, z._data, std, mean, dt=z.dtype.np_name)
    return TensorBase._wrap(out).to(z.device)


def _shape(v: Any) -> tuple:
    return tuple(v.shape) if isinstance(v, TensorBase) else np.shape(np.asarray(v))


def _negative(std: Any) -> tuple:
    return ~(std >= 0), std


def _affine_fn(z, std, mean, *, dt):
    return (z * std.astype(dt) + mean.astype(dt)).astype(dt)


def _like(fn):
    def like(
        input: Tensor,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        memory_format: Any = None,
        **kwargs: Any,
    ) -> Tensor:
        out = fn(
            *input.shape,
            dtype=dtype or input.dtype,
            device=device or _dtype.tensor_device(input),  # torch: input's, unless told
            **kwargs,
        )
        out = laid_out(out, memory_format, input)
        return out.requires_grad_(True) if requires_grad else out

    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like, ones_like, empty_like = _like(zeros), _like(ones), _like(empty)
rand_like, randn_like = _like(rand), _like(randn)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    out = full(
        input.shape,
        fill_value,
        dtype=dtype or input.dtype,
        device=device or _dtype.tensor_device(input),
    )
    out = laid_out(out, memory_format, input)
    return out.requires_grad_(True) if requires_grad else out


# ---------------------------------------------------------------------------
# x.new_*: a new tensor with x's dtype unless told otherwise
# ---------------------------------------------------------------------------


class CreationMixin(TensorBase):
    """``new_ones``, ``new_zeros``, ``new_empty``, ``new_full`` and ``new_tensor``."""

    __slots__ = ()

    def _new(self, fn, name: str, size: tuple, dtype, device, requires_grad) -> Tensor:
        size = sizes(name, size)
        dtype = dtype or self.dtype
        device = device or _dtype.tensor_device(self)  # torch: x.new_*() on x's
        return fn(size, dtype=dtype, device=device, requires_grad=requires_grad)

    @functools.partial(_size_keyword, skip=1)
    def new_ones(self, *size: Any, dtype=None, device=None, requires_grad=False):
        return self._new(ones, "new_ones", size, dtype, device, requires_grad)

    @functools.partial(_size_keyword, skip=1)
    def new_zeros(self, *size: Any, dtype=None, device=None, requires_grad=False):
        return self._new(zeros, "new_zeros", size, dtype, device, requires_grad)

    @functools.partial(_size_keyword, skip=1)
    def new_empty(self, *size: Any, dtype=None, device=None, requires_grad=False):
        return self._new(empty, "new_empty", size, dtype, device, requires_grad)

    def new_full(
        self, size: Any, fill_value: Any, dtype: Any = None, **kwargs: Any
    ) -> Tensor:
        kwargs.setdefault("device", _dtype.tensor_device(self))
        return full(size, fill_value, dtype=dtype or self.dtype, **kwargs)

    def new_tensor(self, data: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        kwargs.setdefault("device", _dtype.tensor_device(self))
        if isinstance(data, TensorBase):
            _warn_copy_construct("tensor.new_tensor", 4)  # past the method's wrapper
        return _tensor(data, dtype=dtype or self.dtype, **kwargs)

    def new(self, *args: Any, device: Any = None, **kwargs: Any) -> Tensor:
        """``x.new(...)``, torch's legacy constructor with ``x``'s dtype and device:
        ``x.new(2, 3)`` uninitialised, ``x.new([1, 2])`` from data, ``x.new()``
        empty, ``x.new(t)`` an alias of ``t`` (of ``x``'s dtype)."""
        here = _dtype.tensor_device(self)
        if device is not None and here is not None:
            wanted = _dtype.device(device).type
            if wanted != here.type:
                raise RuntimeError(
                    f"legacy constructor expects device type: {here.type} but "
                    f"device type: {wanted} was passed"
                )
        return _legacy_new(self.dtype, here, args, kwargs, alias=True)


# ---------------------------------------------------------------------------
# Legacy tensor types: torch.FloatTensor(2, 3), torch.LongTensor([1, 2]),
# isinstance(x, torch.FloatTensor)
# ---------------------------------------------------------------------------


class _TensorType(type):
    """torch's ``tensortype``: calling one builds a tensor of its dtype;
    ``isinstance`` asks for that dtype on its device type, the CPU's or
    (``torch.cuda.FloatTensor``) the GPU's; it is no subclass of Tensor."""

    dtype: _dtype.dtype
    is_cuda: builtins.bool

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return (
            isinstance(obj, TensorBase)
            and obj.dtype is cls.dtype
            and obj.device.type == ("cuda" if cls.is_cuda else "cpu")
        )

    def __call__(cls, *args: Any, device: Any = None, **kwargs: Any) -> Tensor:
        if not cls.is_cuda:
            return _legacy_new(cls.dtype, device or "cpu", args, kwargs, alias=False)
        if not _dtype.gpus():
            raise TypeError(
                f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                "with CUDA enabled."
            )
        return _legacy_new(cls.dtype, device or "cuda", args, kwargs, alias=False)


def _legacy_new(
    dt: _dtype.dtype, device: Any, args: tuple, kwargs: dict, alias: bool
) -> Tensor:
    """torch's legacy constructor (``torch.FloatTensor(...)``, ``x.new(...)``):
    sizes (uninitialised), data, a tensor of ``dt`` (itself, or with ``alias`` an
    alias of it), or nothing (empty)."""
    if kwargs:
        raise _argparse.invalid_combination("new", args, kwargs, NEW_OPTIONS)
    if len(args) == 1 and isinstance(args[0], builtins.bool | builtins.float):
        raise TypeError(f"new(): data must be a sequence (got {_type_name(args[0])})")
    if len(args) == 1 and _as_int(args[0]) is None:
        data = args[0]
        if isinstance(data, TensorBase):
            if data.dtype is not dt:
                raise TypeError(f"expected {_options(dt)} (got {_options(data.dtype)})")
            return data.view_as(data) if alias else data
        if isinstance(data, builtins.str | builtins.bytes) or not isinstance(
            data, list | tuple | np.ndarray
        ):
            raise TypeError(f"new(): invalid data type '{_type_name(data)}'")
        if not isinstance(data, Size):  # torch.FloatTensor(x.shape): a size
            return tensor(data, dtype=dt, device=device)
    shape = (
        sizes("new", args, "size", NEW_OPTIONS) if args else (0,)
    )  # torch.FloatTensor(): empty
    return empty(shape, dtype=dt, device=device)


def _options(dt: _dtype.dtype) -> str:
    return (
        f"TensorOptions(dtype={_dtype._CPP[dt.np_name]}, device=cpu, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt))"
    )


def _legacy_type(name: str, dt: _dtype.dtype, cuda: builtins.bool = False) -> type:
    module = "torch.cuda" if cuda else "torch"
    cls = _TensorType(name, (), {"__module__": module, "__slots__": ()})
    cls.dtype, cls.is_cuda = dt, cuda
    return cls


FloatTensor = _legacy_type("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_type("HalfTensor", _dtype.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _dtype.bfloat16)
LongTensor = _legacy_type("LongTensor", _dtype.int64)
IntTensor = _legacy_type("IntTensor", _dtype.int32)
ShortTensor = _legacy_type("ShortTensor", _dtype.int16)
CharTensor = _legacy_type("CharTensor", _dtype.int8)
ByteTensor = _legacy_type("ByteTensor", _dtype.uint8)
BoolTensor = _legacy_type("BoolTensor", _dtype.bool)
# 'torch.FloatTensor' (Tensor.type()'s answer) -> the dtype
LEGACY_DTYPES = {
    f"torch.{cls.__name__}": cls.dtype
    for cls in (
        FloatTensor,
        DoubleTensor,
        HalfTensor,
        BFloat16Tensor,
        LongTensor,
        IntTensor,
        ShortTensor,
        CharTensor,
        ByteTensor,
        BoolTensor,
    )
}


def set_default_tensor_type(t: Any) -> None:
    """``torch.set_default_tensor_type`` (deprecated): ``torch.FloatTensor``,
    ``torch.DoubleTensor`` (``HalfTensor``, ``BFloat16Tensor``) or their names,
    as ``torch.set_default_dtype`` of their dtype. A CUDA type's default device
    is refused: use ``torch.set_default_device``."""
    if isinstance(t, builtins.str):
        if t.startswith("torch.cuda."):
            raise NotImplementedError(
                f"set_default_tensor_type({t!r}): jaxblitz.compat does not set the "
                "default device through a tensor type; use "
                "torch.set_default_dtype and torch.set_default_device('cuda')"
            )
        if t not in LEGACY_DTYPES:
            head, _, rest = t.partition(".")
            if head != "torch" or not rest:
                raise ModuleNotFoundError(f"No module named '{head}'")
            raise AttributeError(f"module 'torch' has no attribute '{rest}'")
        dt = LEGACY_DTYPES[t]
    elif isinstance(t, _TensorType):
        dt = t.dtype
    else:
        raise TypeError(
            "invalid type object: only floating-point types are supported as the "
            "default type"
        )
    warn_once(
        "set_default_tensor_type",
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
    )
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(dt)
