"""Blitz 4, "Training on GPU": ``torch.cuda``, backed by JAX's GPU platform.

``torch.cuda.is_available()`` is true when JAX sees a GPU (``pip install
"jax[cuda12]"``); ``torch.device("cuda")`` is then JAX's first GPU. Streams, events
and CUDA graphs do not exist here (JAX schedules its own work): they raise
``NotImplementedError``. ``torch.cuda.amp`` is :mod:`jaxblitz.compat._cuda_amp`.
"""

from __future__ import annotations

import sys
from typing import Any

import jax

from jaxblitz.compat import _cuda_amp as amp
from jaxblitz.compat import _not_offered, _wait
from jaxblitz.compat.tensor._dtype import device, gpus, jax_device
from jaxblitz.compat.tensor.creation import initial_seed, manual_seed

# torch.cuda.amp: `import torch.cuda.amp` ports to `import jaxblitz.compat.cuda.amp`,
# which finds the module here (this module is not a package).
sys.modules[__name__ + ".amp"] = amp
# An empty search path makes this module a package to the import system, so that
# torch.cuda's submodules compat does not offer (torch.cuda.nvtx) are refused by
# name (_not_offered.SubmoduleRefuser), not as children of a plain module.
__path__: list[str] = []

__all__ = [
    "amp",
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
    if isinstance(index, str | device):
        index = device(index).index
    # Raises torch's "Torch not compiled with CUDA enabled" without a GPU.
    return jax_device(device("cuda", index))


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


def __getattr__(name: str) -> Any:
    # Streams, events, graphs, nvtx...: named, not silently absent; an
    # AttributeError too, so that hasattr answers False.
    reason = _not_offered.SUBMODULES.get(f"torch.cuda.{name}")
    if reason is not None:
        raise _not_offered.NotOffered(
            f"torch.cuda.{name} is not supported by jaxblitz.compat: {reason}"
        )
    raise _not_offered.NotOffered(
        f"torch.cuda.{name} is not supported by jaxblitz.compat (JAX schedules GPU "
        "work itself: there are no streams, events or CUDA graphs)"
    )
