"""Blitz 1, "Tensors": torch's dtypes and devices over JAX's.

``torch.float32`` is a :class:`dtype` wrapping a NumPy dtype; ``torch.device`` wraps
a JAX platform name. The type-promotion rules here are torch's, not NumPy's:
``int64 tensor * 2.5`` is float32 (the default dtype), ``int64 + float16`` is float16,
and a 0-dim tensor or Python number only wins when it is of a higher category
(bool < integer < floating): :func:`result_type`, :func:`promote_types`,
:func:`can_cast`.

Every op runs inside :func:`x64` (``jax.enable_x64(True)``): torch's int64/float64
are real, while the rest of the process (the functional core) keeps JAX's 32-bit
defaults.

Devices are torch's: a tensor is made on the CPU unless a ``device=`` argument,
:func:`set_default_device` (or ``with torch.device(...)``) says otherwise, and
moves with ``.to(device)``. Where JAX's default device is an accelerator, compat's
arrays not placed on a device (a CPU tensor's) live on JAX's CPU device: :func:`x64`
makes it the default device inside compat, and a tensor on the accelerator is an
array committed to it (so work follows it there). Ops on tensors of two devices
raise torch's errors (:func:`iterator_device`, :func:`guard_device`).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import jax
import numpy as np

from jaxblitz.compat.tensor._argparse import invalid_combination, must_be
from jaxblitz.compat.tensor._signatures import DEVICE_OPTIONS

# torch's module shadows float/int/bool with dtypes; keep the Python types.
_pyfloat, _pyint, _pybool = float, int, bool


@functools.cache
def home() -> jax.Device | None:
    """JAX's CPU device where JAX's default device is an accelerator: where compat
    keeps the arrays of CPU tensors. None where JAX's default device is the CPU
    already (or the process has no CPU backend: then tensors stay on JAX's default
    device, as before)."""
    if jax.default_backend() == "cpu":
        return None
    try:
        return jax.devices("cpu")[0]
    except RuntimeError:
        return None


class _AtHome:
    """:func:`x64` where :func:`home` is set: x64, and the CPU as JAX's default
    device unless one is set already (a ``device=`` factory call, or the user's
    ``jax.default_device``)."""

    __slots__ = ("flag", "_x64", "_device")

    def __init__(self, flag: _pybool):
        self.flag = flag

    def __enter__(self) -> None:
        self._x64 = jax.enable_x64(self.flag)
        self._x64.__enter__()
        self._device = None
        if jax.config.jax_default_device is None:
            self._device = jax.default_device(home())
            self._device.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._device is not None:
            self._device.__exit__(*exc)
        self._x64.__exit__(*exc)


def x64(flag: _pybool = True) -> Any:
    """The context every compat op runs in: ``jax.enable_x64(flag)`` (a cheap,
    thread-local context manager), and where JAX's default device is an
    accelerator, the CPU as the device of arrays made without one (torch makes
    tensors on the CPU; work on a tensor moved with ``.to("cuda")`` follows it)."""
    if home() is None:
        return jax.enable_x64(flag)
    return _AtHome(flag)


# x64(True) around one call, switched by hand where that is all it does (JAX's
# default device is the CPU, see `home`, and JAX runs no hook when the flag
# switches): the context manager costs a good part of what compat's funnel does
# per op. The one place compat uses the config state's private set/restore;
# where a JAX release lacks them, `call_x64` is the context manager.
_X64 = jax.enable_x64
_X64_BY_HAND = (
    hasattr(_X64, "swap_local")
    and hasattr(_X64, "set_local")
    and getattr(_X64, "_update_thread_local_hook", True) is None
)


def call_x64(call: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)`` inside :func:`x64` (True), the flag as it was
    after."""
    if _X64_BY_HAND and home() is None:
        previous = _X64.swap_local(True)
        try:
            return call(*args, **kwargs)
        finally:
            _X64.set_local(previous)
    with x64(True):
        return call(*args, **kwargs)


class dtype:  # noqa: N801 -- torch's name
    """``torch.float32`` etc.; ``scalar_type`` is torch's own name (``Float``), as in
    ``torch.FloatTensor`` and its error messages."""

    __slots__ = (
        "name",
        "np",
        "np_name",
        "scalar_type",
        "is_floating_point",
        "is_signed",
        "itemsize",
    )

    def __init__(self, name: str, np_dtype: Any, scalar_type: str):
        self.name = name
        self.scalar_type = scalar_type
        self.np = np.dtype(np_dtype)
        self.np_name = self.np.name  # (NumPy works it out on every read)
        self.is_floating_point = self.np.kind == "f" or name == "bfloat16"
        self.is_signed = self.np.kind in "fi" or name == "bfloat16"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


# The one dtype table: torch's name, NumPy's dtype, torch's scalar type name.
float32 = dtype("float32", np.float32, "Float")
float64 = dtype("float64", np.float64, "Double")
float16 = dtype("float16", np.float16, "Half")
bfloat16 = dtype("bfloat16", jax.numpy.bfloat16, "BFloat16")
int64 = dtype("int64", np.int64, "Long")
int32 = dtype("int32", np.int32, "Int")
int16 = dtype("int16", np.int16, "Short")
int8 = dtype("int8", np.int8, "Char")
uint8 = dtype("uint8", np.uint8, "Byte")
bool = dtype("bool", np.bool_, "Bool")  # noqa: A001 -- torch.bool
float, double, half = float32, float64, float16  # noqa: A001 -- torch's aliases
long, int, short = int64, int32, int16  # noqa: A001

ALL = (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool)
_FROM_NP = {d.np: d for d in ALL}
_FROM_NAME = {d.name: d for d in ALL}


def _by_name(name: str) -> dtype:
    return _FROM_NAME[name]


_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def to_dtype(d: Any) -> dtype:
    """A torch dtype from a torch dtype, a NumPy/JAX dtype or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is _pyfloat:  # torch's parser: Python's float is a double, whatever
        return float64  # the default dtype
    if d is _pyint:
        return int64
    if d is _pybool:
        return bool
    try:
        return _FROM_NP[np.dtype(d)]
    except (KeyError, TypeError):
        why = ""
        with contextlib.suppress(TypeError):
            if np.dtype(d).kind == "c":
                why = ": jaxblitz.compat has no complex dtypes"
        raise TypeError(f"cannot interpret {d!r} as a torch dtype{why}") from None


def category(d: dtype) -> int:
    """torch's promotion category: 0 bool, 1 integer, 2 floating (3 would be complex,
    which compat does not have)."""
    return 2 if d.is_floating_point else (0 if d is bool else 1)


def scalar_dtype(value: Any) -> dtype:
    """The dtype torch gives a Python number: bool, int64 or the default float."""
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, _pyint):
        return int64
    return _default_float


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype both fit in, by torch's table.

    Unlike NumPy's, a float absorbs any integer (``int64 + float16 -> float16``),
    ``uint8 + int8 -> int16`` and ``float16 + bfloat16 -> float32``.
    """
    if type1 is type2:
        return type1
    c1, c2 = category(type1), category(type2)
    if c1 != c2:
        return type1 if c1 > c2 else type2
    if c1 == 1 and uint8 in (type1, type2):
        other = type2 if type1 is uint8 else type1
        return int16 if other is int8 else other
    if {type1, type2} == {float16, bfloat16}:
        return float32
    return type1 if type1.itemsize >= type2.itemsize else type2


promote = promote_types  # cat/stack fold their tensors' dtypes with this


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # torch's combine_categories: a lower-priority operand only counts if it is of a
    # higher category (a float 0-dim tensor lifts an int tensor to its float dtype).
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(operands: Iterable[tuple[dtype, int]]) -> dtype:
    """torch's promotion over ``(dtype, priority)`` pairs (``torch.result_type``).

    priority 2: a tensor with dims, 1: a 0-dim tensor, 0: a Python number (whose
    dtype is :func:`scalar_dtype`'s). Each priority class is folded with
    :func:`promote_types`; a lower class wins only with a higher category.
    """
    slots: list[dtype | None] = [None, None, None]
    for d, priority in operands:
        held = slots[priority]
        slots[priority] = d if held is None else promote_types(held, d)
    best = _combine(slots[2], _combine(slots[1], slots[0]))
    if best is None:
        raise ValueError("result_type needs at least one operand")
    return best


def can_cast(from_: dtype, to: dtype) -> bool:
    """``torch.can_cast``: may an op's result of dtype ``from_`` be written into a
    tensor of dtype ``to`` (``x += y``, ``out=``)? Refused only into a lower
    category: float into an integer or bool tensor, integer into a bool tensor."""
    return category(from_) <= category(to)


# torch's device types (``torch.device("mps")`` is a valid device everywhere; using
# one this process lacks fails), and JAX's ``tpu``.
_DEVICE_TYPES = [
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
    "tpu",
]
# JAX's platform -> torch's device type.
_TYPE_OF_PLATFORM = {"gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


class device:  # noqa: N801 -- torch's name
    """``torch.device("cpu")`` / ``torch.device("cuda:0")`` / ``torch.device(0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any = None, index: Any = None):  # noqa: A002 -- torch's
        spec = type
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        if isinstance(spec, _pyint) and not isinstance(spec, _pybool):
            # torch.device(0): the current accelerator's device 0.
            if spec < 0:
                raise RuntimeError("Device index must not be negative")
            found = accelerator_type()
            if found is None:
                raise RuntimeError(
                    "Cannot access accelerator device when none is available."
                )
            spec, index = found, spec
        if spec.__class__ is not str:  # torch's parser: a str or a device
            given = (type,) if index is None else (type, index)
            raise invalid_combination("device", given, {}, DEVICE_OPTIONS)
        if index is not None and index.__class__ is not _pyint:
            if not isinstance(index, np.integer):
                raise must_be("device", "index", "int", index, 2)
            index = _pyint(index)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        kind, _, idx = spec.partition(":")
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_DEVICE_TYPES[:-1])} device type at "
                f"start of device string: {spec} (jaxblitz.compat: also tpu)"
            )
        if idx and not idx.isdigit():
            raise RuntimeError(f"Invalid device string: '{spec}'")
        self.type = kind
        self.index = _pyint(idx) if idx else index

    def __repr__(self) -> str:
        extra = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{extra})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object):
        if isinstance(other, str):
            other = device(other)
        return (
            isinstance(other, device)
            and self.type == other.type
            and self.index == other.index
        )

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        # torch: ``with torch.device("cuda"):`` is the default device meanwhile
        _defaults().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _defaults().pop()


def gpus() -> list:
    """JAX's GPUs in this process (``torch.cuda``'s devices), empty without one."""
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def accelerator_devices() -> list:
    """JAX's accelerator devices in this process (GPU or TPU), empty on CPU."""
    backend = jax.default_backend()
    return [] if backend == "cpu" else jax.devices(backend)


def accelerator_type() -> str | None:
    """torch's name for this process's accelerator: 'cuda' (JAX's GPU), 'tpu', or
    None."""
    found = accelerator_devices()
    return _TYPE_OF_PLATFORM.get(found[0].platform) if found else None


# The devices of the arguments of the torch.func transforms running now,
# innermost last: a transform's tracers have no device of their own.
transform_devices: list[device] = []


def device_of(array: jax.Array) -> device:
    """The torch device a JAX array lives on; a ``torch.func`` transform's
    tracer is on its arguments' device, as torch's wrapped tensors are."""
    if transform_devices and isinstance(array, jax.core.Tracer):
        return transform_devices[-1]
    where = next(iter(array.devices()))
    kind = _TYPE_OF_PLATFORM.get(where.platform)
    if kind is None:
        return device("cpu")
    same = jax.devices(where.platform)
    return device(kind, same.index(where) if where in same else 0)


def tensor_device(t: Any) -> device | None:
    """``t.device``, or None for a traced tensor (inside ``torch.compile``, where
    a value has no device yet)."""
    try:
        return t.device
    except jax.errors.ConcretizationTypeError:
        return None


def jax_device(d: device) -> jax.Device:
    """The JAX device behind a torch device (cuda means JAX's gpu platform)."""
    if d.type not in ("cpu", "cuda", "tpu"):
        # torch's own wording for a device type it was built without.
        raise RuntimeError(
            f"PyTorch is not linked with support for {d.type} devices "
            "(jaxblitz.compat runs on JAX's cpu, cuda (gpu) and tpu)"
        )
    platform = {"cuda": "gpu"}.get(d.type, d.type)
    try:
        found = jax.devices(platform)
    except RuntimeError:
        found = []
    if not found:
        if d.type == "cuda":
            raise AssertionError(
                "Torch not compiled with CUDA enabled (jaxblitz.compat: JAX sees no "
                "GPU in this process; use device 'cpu' or install jax[cuda12])"
            )
        raise RuntimeError(f"no {d.type!r} device in this process")
    index = d.index or 0
    if index >= len(found):
        raise RuntimeError(
            f"{d} is not available: this process has {len(found)} {d.type} device(s)"
        )
    return found[index]


# ---------------------------------------------------------------------------
# The default device of factory calls, and where a tensor's array goes
# ---------------------------------------------------------------------------

_CPU = device("cpu")
# torch keeps the default device per thread: set_default_device's, then the
# devices of the ``with torch.device(...)`` blocks entered, innermost last
_default = threading.local()


def _defaults() -> list:
    stack = getattr(_default, "stack", None)
    if stack is None:
        stack = _default.stack = [None]
    return stack


def set_default_device(device: Any) -> None:  # noqa: A002 -- torch's name
    """``torch.set_default_device``: where factory calls (``torch.tensor``,
    ``zeros``, ``rand``...) without ``device=`` make their tensors, in this thread;
    ``None`` is the CPU again. Tensors made from others (``zeros_like``,
    ``x.new_ones``, ``from_numpy``) keep their source's device, as in torch."""
    _defaults()[0] = None if device is None else _device_of_spec(device)


def get_default_device() -> device:
    """``torch.get_default_device()``: ``device(type='cpu')`` unless set; an
    accelerator's with its index (``cuda:0``)."""
    return explicit_default() or _CPU


def explicit_default() -> device | None:
    """The default device if one was set (by :func:`set_default_device` or a
    ``with torch.device(...)`` block), else None: torch's factory calls then keep
    a source tensor's device (``torch.tensor(cuda_tensor)``)."""
    stack = _defaults()
    found = stack[-1] if len(stack) > 1 else stack[0]
    if found is None or found.index is not None or found.type in ("cpu", "meta"):
        return found
    jax_device(found)  # torch asks its device for an index: none here raises
    return device(found.type, 0)  # torch: the current device of its type


def _device_of_spec(spec: Any) -> device:
    return spec if isinstance(spec, device) else device(spec)


def factory_device(spec: Any = None) -> device:
    """The device a factory call makes its tensor on: ``device=`` if given, else
    the default device (the CPU unless set)."""
    return get_default_device() if spec is None else _device_of_spec(spec)


def placement(d: device) -> jax.Device | None:
    """The JAX device to commit a new tensor on ``d`` to, or None for a CPU
    tensor: its array stays uncommitted where compat makes arrays (:func:`x64`:
    JAX's CPU device where the default device is an accelerator, else JAX's
    default device), so compat's own arrays join work anywhere, as before. A
    tensor on an accelerator is committed to its device: the work on it runs
    there. A meta tensor has no JAX device (its storage is a shape and a
    dtype, :mod:`._meta`): None too."""
    return None if d.type in ("cpu", "meta") else jax_device(d)


_SAME = "Expected all tensors to be on the same device"


def iterator_device(found: Sequence[tuple[device, int]]) -> device:
    """torch's device rule for an elementwise op (its TensorIterator), over the
    ``(device, ndim)`` of each tensor operand: the op runs on the first device
    that is not the CPU (else the CPU); one 0-dim CPU tensor may join it there,
    as a number; any other tensor elsewhere is torch's error."""
    common = next((d for d, _ in found if d.type != "cpu"), _CPU)
    scalars = 0
    for d, ndim in found:
        if common.type != "cpu" and ndim == 0 and d.type == "cpu":
            scalars += 1
            if scalars > 1:
                raise RuntimeError(
                    "Trying to pass too many CPU scalars to non-CPU kernel!"
                )
        elif d != common:
            raise RuntimeError(
                f"{_SAME}, but found at least two devices, {common} and {d}!"
            )
    return common


_DISPATCH = {"cuda": "CUDA", "tpu": "XLA"}  # torch's dispatch key of a device type


def guard_device(found: Sequence[tuple[str, device]], method: str) -> device:
    """torch's device check in a kernel's wrapper (``mm``, ``addmm``, ...), over
    ``(argument name, device)`` pairs: every tensor on the first one's device; the
    error names the argument and the kernel (``wrapper_CUDA_addmm``)."""
    common = found[0][1]
    for name, d in found[1:]:
        if d != common:
            kind = common.type if common.type != "cpu" else d.type
            key = _DISPATCH.get(kind, kind.upper())
            raise RuntimeError(
                f"{_SAME}, but got {name} is on {d}, different from other tensors "
                f"on {common} (when checking argument in method wrapper_{key}_"
                f"{method})"
            )
    return common


# C++ type names, as torch's matmul and clamp errors print them
_CPP = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}
