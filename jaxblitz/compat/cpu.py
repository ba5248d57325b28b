"""Blitz 4 (training on a device): ``torch.cpu`` -- the device-agnostic queries a
script makes of the CPU (``torch.cpu.is_available()``, ``device_count()``...)."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat import _not_offered, _wait

__all__ = [
    "current_device",
    "device_count",
    "is_available",
    "is_initialized",
    "set_device",
    "synchronize",
]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    """1: torch counts the CPU as one device, whatever its cores."""
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device: Any) -> None:
    """Nothing to set: there is one CPU device (torch's no-op)."""


def synchronize(device: Any = None) -> None:
    """Run compat's pending work (lazy mode) and wait for it: JAX dispatches
    asynchronously, where torch's CPU ops have finished on return."""
    _wait.synchronize("cpu")


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.cpu",
    {
        **dict.fromkeys(
            ("Event", "Stream", "StreamContext", "current_stream", "stream"),
            _not_offered.STREAMS,
        ),
        "get_capabilities": "the instruction sets PyTorch's own CPU kernels use; "
        "XLA chooses its own",
    },
)
