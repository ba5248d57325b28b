"""Blitz 4, "Training on GPU": ``torch.cuda``, backed by JAX's GPU platform.

``torch.cuda.is_available()`` is true when JAX sees a GPU (``pip install
"jax[cuda12]"``); ``torch.device("cuda")`` is then JAX's first GPU. Without one,
each name answers as torch's CPU-only build does. Streams and events are the
device's one ordered queue (:mod:`jaxblitz.compat._cuda_streams`); CUDA graphs,
allocator knobs and NVML queries are refused by name
(:mod:`jaxblitz.compat._cuda_build`). ``torch.cuda.amp`` is
:mod:`jaxblitz.compat._cuda_amp`.
"""

from __future__ import annotations

import sys
from typing import Any

import jax

from jaxblitz.compat import _cuda_amp as amp
from jaxblitz.compat import _cuda_build, _not_offered, _wait
from jaxblitz.compat._cuda_build import (
    AcceleratorError,
    DeferredCudaCallError,
    OutOfMemoryError,
    get_arch_list,
    get_device_capability,
    get_gencode_flags,
    get_rng_state,
    get_rng_state_all,
    init,
    is_bf16_supported,
    is_tf32_supported,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_cached,
    memory_reserved,
    memory_stats,
    set_rng_state,
    set_rng_state_all,
)
from jaxblitz.compat._cuda_streams import (
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    device,
    device_of,
    is_current_stream_capturing,
    set_device,
    set_stream,
    stream,
)
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor import creation as _creation
from jaxblitz.compat.tensor._dtype import gpus, jax_device
from jaxblitz.compat.tensor.creation import initial_seed, manual_seed

# torch.cuda.amp: `import torch.cuda.amp` ports to `import jaxblitz.compat.cuda.amp`,
# which finds the module here (this module is not a package).
sys.modules[__name__ + ".amp"] = amp
# An empty search path makes this module a package to the import system, so that
# torch.cuda's submodules compat does not offer (torch.cuda.nvtx) are refused by
# name (_not_offered.SubmoduleRefuser), not as children of a plain module.
__path__: list[str] = []

# torch.cuda.FloatTensor, torch.cuda.FloatStorage...
globals().update(_cuda_build.TENSOR_TYPES)
globals().update(_cuda_build.STORAGE_TYPES)
has_half = True
has_magma = False

__all__ = [
    *_cuda_build.TENSOR_TYPES,
    *_cuda_build.STORAGE_TYPES,
    "AcceleratorError",
    "DeferredCudaCallError",
    "Event",
    "OutOfMemoryError",
    "Stream",
    "StreamContext",
    "amp",
    "current_stream",
    "default_generators",
    "default_stream",
    "device",
    "device_of",
    "get_arch_list",
    "get_device_capability",
    "get_gencode_flags",
    "get_rng_state",
    "get_rng_state_all",
    "has_half",
    "has_magma",
    "init",
    "is_bf16_supported",
    "is_current_stream_capturing",
    "is_tf32_supported",
    "max_memory_cached",
    "max_memory_reserved",
    "mem_get_info",
    "memory_cached",
    "memory_reserved",
    "memory_stats",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "get_device_properties",
    "initial_seed",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "seed",
    "synchronize",
]


def _gpu(index: Any = None) -> jax.Device:
    if isinstance(index, str | _dtype.device):
        index = _dtype.device(index).index
    # Raises torch's "Torch not compiled with CUDA enabled" without a GPU.
    return jax_device(_dtype.device("cuda", index))


def is_available() -> bool:
    return bool(gpus())


def device_count() -> int:
    return len(gpus())


def is_initialized() -> bool:
    return is_available()


def current_device() -> int:
    _gpu()
    return 0


def get_device_name(device: Any = None) -> str:
    return _gpu(device).device_kind


def get_device_properties(device: Any = None) -> Any:
    raise NotImplementedError(
        "torch.cuda.get_device_properties is not supported by jaxblitz.compat; "
        f"JAX's device is {_gpu(device)!r} (jax.devices('gpu'))"
    )


def synchronize(device: Any = None) -> None:
    """Run compat's pending work (lazy mode) and wait for the GPU's queue (JAX
    dispatches asynchronously)."""
    _wait.synchronize(_gpu(device).platform)


def _stat(name: str, device: Any) -> int:
    if not is_available():
        return 0  # torch's CPU build reports 0, as here
    stats = _gpu(device).memory_stats() or {}
    return int(stats.get(name, 0))


def memory_allocated(device: Any = None) -> int:
    return _stat("bytes_in_use", device)


def max_memory_allocated(device: Any = None) -> int:
    return _stat("peak_bytes_in_use", device)


def empty_cache() -> None:
    """Nothing to free by hand: JAX's allocator returns memory itself."""


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    raise NotImplementedError(
        "torch.cuda.seed() is not supported by jaxblitz.compat: compat has one "
        "generator for every device; use torch.manual_seed(n)"
    )


def seed_all() -> None:
    seed()


# torch's CPU build: no CUDA generators; on a GPU, compat's one generator each
default_generators = (_creation.default_generator,) * len(gpus())

# CUDA graphs, allocator knobs, NVML...: refused by name, an AttributeError too
# (hasattr answers False); a name torch lacks gets the plain AttributeError.
__getattr__ = _not_offered.refuser(__name__, "torch.cuda", _cuda_build.REFUSED)
