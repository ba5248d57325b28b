"""``torch.accelerator``: the process's accelerator, whichever it is.

The Blitz's tensor tutorial moves a tensor with
``tensor.to(torch.accelerator.current_accelerator())`` when
``torch.accelerator.is_available()``. Here the accelerator is JAX's: a GPU
(``cuda``) or a TPU (``tpu``); on a CPU-only process there is none, as in torch.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat import _wait
from jaxblitz.compat.tensor._dtype import accelerator_devices, accelerator_type, device

__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "empty_cache",
    "is_available",
    "memory_allocated",
    "set_device_index",
    "synchronize",
]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    return accelerator_type() is not None


def current_accelerator(check_available: bool = False) -> device | None:
    found = accelerator_type()
    return None if found is None else device(found)


def device_count() -> int:
    return len(accelerator_devices())


def _require() -> list:
    found = accelerator_devices()
    if not found:
        raise RuntimeError(_NONE)
    return found


def current_device_index() -> int:
    _require()
    return 0


current_device_idx = current_device_index


def set_device_index(device: Any) -> None:
    index = device.index if hasattr(device, "index") else device
    if index not in (None, 0):
        _require()
        raise NotImplementedError(
            "torch.accelerator.set_device_index to another device is not supported "
            "by jaxblitz.compat: place tensors with .to(device) instead"
        )


set_device_idx = set_device_index


def synchronize(device: Any = None) -> None:
    _wait.synchronize(_require()[0].platform)


def empty_cache() -> None:
    _require()


def memory_allocated(device: Any = None) -> int:
    stats = _require()[0].memory_stats() or {}
    return int(stats.get("bytes_in_use", 0))
