"""Blitz 1, "Tensors": creation with explicit PRNG keys, the NumPy bridge, devices.

A JAX array is PyTorch's tensor without mutation: ``jax.numpy`` already covers
creation, arithmetic, indexing and reshaping, so this module adds only what it
lacks -- torch-shaped random constructors that take an explicit ``key``,
:func:`from_numpy`/:func:`to_numpy` with their real semantics, device helpers, and
:func:`cast` with torch's dtype names. How the Blitz's torch code reads in JAX::

    torch                                  JAX
    -------------------------------------  ----------------------------------------
    torch.empty(5, 3)                      jnp.zeros((5, 3))  (no uninitialised)
    torch.zeros(5, 3, dtype=torch.long)    jnp.zeros((5, 3), jnp.int32)
    torch.ones(5, 3) / torch.ones_like(x)  jnp.ones((5, 3)) / jnp.ones_like(x)
    torch.rand(5, 3) / torch.randn(5, 3)   rand(key, 5, 3) / randn(key, 5, 3)
    torch.rand_like(x, dtype=torch.float)  rand_like(key, x, "float")
    torch.tensor([5.5, 3])                 jnp.array([5.5, 3])
    torch.eye(3) / arange(5) / linspace    jnp.eye(3) / jnp.arange(5) / jnp.linspace
    x + y  /  torch.add(x, y)              x + y  /  jnp.add(x, y)
    torch.add(x, y, out=result)            result = x + y   (no out=; ops return)
    y.add_(x)                              y = y + x        (rebind, never mutate)
    x[:, 1] = 0                            x = x.at[:, 1].set(0)
    x[idx] += v                            x = x.at[idx].add(v)
    x[:, 1]                                x[:, 1]
    x.view(-1, 8) / x.reshape(-1, 8)       x.reshape(-1, 8)
    x.size() / x.shape                     x.shape
    torch.cat([x, y], dim=1)               jnp.concatenate([x, y], axis=1)
    torch.stack([x, y])                    jnp.stack([x, y])
    x @ y.T / x.matmul(y.T) / matmul(...)  x @ y.T / x.dot(y.T) / jnp.matmul(x, y.T)
    x * y / x.mul(y)                       x * y / jnp.multiply(x, y)
    x.sum().item()                         x.sum().item()  (or float(x.sum()))
    broadcasting                           the same NumPy rules
    x.numpy() / torch.from_numpy(a)        to_numpy(x) / from_numpy(a)
    x.to(torch.float64)                    cast(x, "float64")  (needs x64 mode)
    torch.cuda.is_available()              is_available("gpu")
    x.to("cuda") / x.device                device_put(x, "gpu") / x.device

The NumPy bridge, as observed with jax 0.10.2 on CPU. torch's ``from_numpy`` and
``.numpy()`` share memory both ways; JAX arrays are immutable, so they do not:

- ``to_numpy(x)`` is ``np.asarray(x)``: on CPU a zero-copy *read-only* view of the
  device buffer (``flags.writeable`` is False; writing raises ``ValueError``).
  ``to_numpy(x, copy=True)`` gives a writeable, independent copy.
- ``from_numpy(a)`` copies: later writes to ``a`` never show in the result.
  Plain ``jnp.asarray(a)`` also copies, but asynchronously -- a large array
  written to right after the call was seen to leak the write into the copy -- and
  ``jax.device_put(a)`` on CPU *aliases* a 64-byte-aligned numpy buffer, so later
  writes to ``a`` show through an "immutable" array. ``from_numpy`` makes a
  completed copy so neither can happen; don't mutate arrays you hand to JAX.

64-bit dtypes need ``jax.config.update("jax_enable_x64", True)`` (or
``JAX_ENABLE_X64=1``); otherwise JAX quietly gives float32/int32. :func:`cast` and
the ``dtype=`` of every constructor here raise instead; :func:`from_numpy` with
``dtype=None`` keeps JAX's 32-bit default and warns.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

DTypeLike = Any  # a jnp/np dtype, a scalar type, or a torch-style name like "long"

# torch's dtype aliases; any other name numpy knows ("uint8", "bfloat16") also works.
_TORCH_DTYPE_NAMES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "long": "int64",
    "int": "int32",
    "short": "int16",
}
_PY_TYPES = (bool, int, float, complex)
KINDS = ("cpu", "gpu", "tpu")
_KIND_ALIASES = {"cuda": "gpu", "rocm": "gpu"}  # torch says "cuda"


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------


def resolve_dtype(dtype: DTypeLike) -> np.dtype:
    """A dtype from a jnp/np dtype or a torch-style name ("long", "torch.float").

    Raises ``ValueError`` for unknown names and for 64-bit dtypes while JAX's x64
    mode is off (JAX would silently use the 32-bit dtype instead).
    """
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.")
        try:
            resolved = jnp.dtype(_TORCH_DTYPE_NAMES.get(name, name))
        except TypeError:
            known = ", ".join(
                sorted({*_TORCH_DTYPE_NAMES, *_TORCH_DTYPE_NAMES.values()})
            )
            raise ValueError(
                f"unknown dtype name {dtype!r}; expected a torch or numpy name such"
                f" as {known}, bool, uint8, bfloat16"
            ) from None
    elif dtype is None:
        raise TypeError("expected a dtype or a dtype name such as 'float32', got None")
    elif dtype in _PY_TYPES and isinstance(dtype, type):  # np.dtype(f8) == float
        # Python types mean JAX's default dtypes, as in jnp.asarray(1.0).
        return jax.dtypes.canonicalize_dtype(dtype)
    else:
        try:
            resolved = jnp.dtype(dtype)
        except TypeError:
            raise TypeError(
                f"expected a dtype or a dtype name such as 'float32', got {dtype!r}"
            ) from None
    canonical = jax.dtypes.canonicalize_dtype(resolved)
    if canonical != resolved:
        raise ValueError(
            f"dtype {resolved} needs JAX's 64-bit mode, which is off, so JAX would"
            f" silently give {canonical}. Enable it at start-up with"
            f" jax.config.update('jax_enable_x64', True), or ask for {canonical}."
        )
    return resolved


def cast(x: jax.Array, dtype: DTypeLike) -> jax.Array:
    """``x.to(dtype)`` / ``x.long()``: ``x`` as ``dtype`` (a dtype or torch name)."""
    return jnp.asarray(x).astype(resolve_dtype(dtype))


# ---------------------------------------------------------------------------
# Random constructors: torch's signatures with an explicit key first
# ---------------------------------------------------------------------------


def _check_key(fn: str, key: Any) -> None:
    dtype = getattr(key, "dtype", None)
    if dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key):
        if key.shape == ():
            return
    elif dtype == jnp.uint32 and getattr(key, "shape", None) == (2,):
        return  # a legacy jax.random.PRNGKey(seed)
    got = f"{type(key).__name__} {key!r}" if dtype is None else f"shape {key.shape}"
    raise TypeError(
        f"{fn} expects a single PRNG key as its first argument, e.g."
        f" {fn}(jax.random.key(0), ...), got {got}. Randomness in JAX is explicit:"
        f" torch's {fn}(2, 3) is {fn}(key, 2, 3)."
    )


def _shape(fn: str, shape: Sequence[Any]) -> tuple[int, ...]:
    """torch-style sizes: ``2, 3`` or ``(2, 3)`` -> ``(2, 3)``, each int >= 0."""
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fn}: shape must be ints, got {tuple(shape)!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: dimensions must be >= 0, got shape {dims}")
    return dims


def _kind_dtype(fn: str, dtype: DTypeLike, kind: str) -> np.dtype:
    resolved = resolve_dtype(dtype)
    test = jnp.floating if kind == "floating" else jnp.integer
    if not jnp.issubdtype(resolved, test):
        article = "an" if kind == "integer" else "a"
        raise TypeError(f"{fn}: dtype must be {article} {kind} dtype, got {resolved}")
    return resolved


def rand(key: jax.Array, *shape: int | Sequence[int], dtype=jnp.float32) -> jax.Array:
    """``torch.rand(*shape)``: uniform on [0, 1)."""
    _check_key("rand", key)
    dims = _shape("rand", shape)
    return jax.random.uniform(key, dims, _kind_dtype("rand", dtype, "floating"))


def randn(key: jax.Array, *shape: int | Sequence[int], dtype=jnp.float32) -> jax.Array:
    """``torch.randn(*shape)``: standard normal."""
    _check_key("randn", key)
    dims = _shape("randn", shape)
    return jax.random.normal(key, dims, _kind_dtype("randn", dtype, "floating"))


def randint(
    key: jax.Array,
    low: int,
    high: int,
    shape: int | Sequence[int],
    dtype: DTypeLike = jnp.int32,
) -> jax.Array:
    """``torch.randint(low, high, shape)``: integers in [low, high)."""
    _check_key("randint", key)
    dims = _shape("randint", (shape,) if not isinstance(shape, Sequence) else shape)
    for name, bound in (("low", low), ("high", high)):
        if isinstance(bound, bool) or not isinstance(bound, int | np.integer):
            raise TypeError(
                f"randint: {name} must be an int, got {type(bound).__name__} "
                f"{bound!r}, as torch.randint's are"
            )
    if not low < high:
        raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
    dtype = _kind_dtype("randint", dtype, "integer")
    return jax.random.randint(key, dims, low, high, dtype)


def randperm(key: jax.Array, n: int, dtype: DTypeLike = jnp.int32) -> jax.Array:
    """``torch.randperm(n)``: a random permutation of ``range(n)``, shape ``(n,)``."""
    _check_key("randperm", key)
    (n,) = _shape("randperm", (n,))
    dtype = _kind_dtype("randperm", dtype, "integer")
    return jax.random.permutation(key, jnp.arange(n, dtype=dtype))


def normal(
    key: jax.Array,
    mean: float | jax.Array,
    std: float | jax.Array,
    shape: int | Sequence[int],
    dtype: DTypeLike = jnp.float32,
) -> jax.Array:
    """``torch.normal(mean, std, size)``: ``mean + std * randn``, broadcast."""
    _check_key("normal", key)
    dims = _shape("normal", (shape,) if not isinstance(shape, Sequence) else shape)
    if isinstance(std, int | float) and std < 0:
        raise ValueError(f"normal: expected std >= 0, got std={std}")
    dtype = _kind_dtype("normal", dtype, "floating")
    # Same key -> same draws; under jit XLA may fuse mean + std * z into one
    # multiply-add, so values can differ from eager by an ulp.
    return (mean + std * jax.random.normal(key, dims, dtype)).astype(dtype)


def rand_like(key: jax.Array, x: jax.Array, dtype: DTypeLike = None) -> jax.Array:
    """``torch.rand_like(x, dtype=...)``: uniform [0, 1) in ``x``'s shape."""
    return rand(key, jnp.shape(x), dtype=jnp.result_type(x) if dtype is None else dtype)


def randn_like(key: jax.Array, x: jax.Array, dtype: DTypeLike = None) -> jax.Array:
    """``torch.randn_like(x, dtype=...)``: standard normal in ``x``'s shape."""
    dtype = jnp.result_type(x) if dtype is None else dtype
    return randn(key, jnp.shape(x), dtype=dtype)


# ---------------------------------------------------------------------------
# The NumPy bridge (semantics in the module docstring)
# ---------------------------------------------------------------------------


def to_numpy(x: jax.Array, copy: bool = False) -> np.ndarray:
    """``x.numpy()``: read-only (zero-copy on CPU) unless ``copy=True``."""
    if isinstance(x, jax.core.Tracer):
        raise TypeError(
            "to_numpy got a traced value: inside jit/grad there is no concrete"
            " array yet. Return it from the transformed function and convert outside."
        )
    return np.array(x, copy=True) if copy else np.asarray(x)


def from_numpy(a: np.ndarray, dtype: DTypeLike = None) -> jax.Array:
    """``torch.from_numpy(a)``, but a finished copy: later writes to ``a`` don't show.

    With ``dtype=None`` the array keeps ``a``'s dtype where JAX can hold it: with
    x64 off, float64/int64 become float32/int32 and a ``UserWarning`` says so.
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(
            f"from_numpy expects a numpy.ndarray, got {type(a).__name__};"
            " use jnp.asarray for lists and scalars"
        )
    if dtype is None:
        target = jax.dtypes.canonicalize_dtype(a.dtype)
        if target != a.dtype:
            warnings.warn(
                f"from_numpy: {a.dtype} array stored as {target} because JAX's 64-bit"
                f" mode is off; pass dtype={str(target)!r} to silence this",
                stacklevel=2,
            )
    else:
        target = resolve_dtype(dtype)
    # copy=True alone copies asynchronously; block so `a` may be mutated right away.
    return jnp.array(a, dtype=target, copy=True).block_until_ready()


# ---------------------------------------------------------------------------
# Devices
# ---------------------------------------------------------------------------


def _kind(kind: str) -> str:
    canonical = _KIND_ALIASES.get(kind, kind)
    if canonical not in KINDS:
        raise ValueError(f"unknown device kind {kind!r}; expected one of {KINDS}")
    return canonical


def devices(kind: str | None = None) -> list[jax.Device]:
    """``jax.devices(kind)``, but an absent kind gives ``[]`` instead of an error."""
    if kind is None:
        return jax.devices()
    try:
        return jax.devices(_kind(kind))
    except RuntimeError:  # "Unknown backend: 'gpu' requested, but no platforms..."
        return []


def is_available(kind: str) -> bool:
    """``torch.cuda.is_available()`` is ``is_available("gpu")``."""
    return bool(devices(kind))


def default_device() -> jax.Device:
    """Where new arrays go: ``jax.default_device`` if set, else ``jax.devices()[0]``."""
    # JAX adds its config options to jax.config at import; its types omit them.
    chosen = jax.config.jax_default_device  # type: ignore[attr-defined]
    if isinstance(chosen, jax.Device):
        return chosen
    return get_device(chosen) if isinstance(chosen, str) else jax.devices()[0]


def get_device(spec: str | jax.Device) -> jax.Device:
    """``torch.device(spec)``: a Device from ``"cpu"``, ``"gpu:1"``, ``"cuda"``..."""
    if isinstance(spec, jax.Device):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"expected a jax.Device or a string like 'cpu:0', got {spec!r}")
    kind, _, index = spec.partition(":")
    if index and not index.isdigit():
        raise ValueError(f"bad device {spec!r}; expected 'kind' or 'kind:index'")
    found = devices(kind)
    if not found:
        available = ", ".join(str(d) for d in jax.devices())
        raise ValueError(f"no {kind!r} device in this process; available: {available}")
    i = int(index or 0)
    if i >= len(found):
        raise ValueError(f"device {spec!r} does not exist; {kind} has {len(found)}")
    return found[i]


def device_put(x: Any, device: str | jax.Device) -> Any:
    """``x.to(device)``: ``x`` (an array or pytree) committed to ``device``.

    NumPy leaves go through :func:`from_numpy` first, so the result never aliases
    their memory (``jax.device_put`` alone can, on CPU).
    """
    target = get_device(device)
    x = jax.tree.map(lambda a: from_numpy(a) if isinstance(a, np.ndarray) else a, x)
    return jax.device_put(x, target)
