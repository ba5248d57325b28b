"""Blitz 4 (training on a device): ``torch.mps`` -- as a PyTorch build without
the MPS backend answers: no device, and torch's own error (``RuntimeError: Cannot
execute ...() without MPS backend.``) where one is needed. compat's devices are
JAX's CPU, GPU and TPU; Apple's Metal is none of them.
"""

from __future__ import annotations

from typing import Any, NoReturn

from jaxblitz.compat import _not_offered

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "get_rng_state",
    "is_available",
    "manual_seed",
    "recommended_max_memory",
    "seed",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "synchronize",
]


def _no_backend(what: str) -> NoReturn:
    raise RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Nothing to seed: torch.manual_seed calls this, which must not raise."""


def seed() -> None:
    _no_backend("getDefaultGenerator")


def get_rng_state(device: Any = "mps") -> Any:
    _no_backend("getDefaultGenerator")


def set_rng_state(new_state: Any, device: Any = "mps") -> None:
    _no_backend("getDefaultGenerator")


def synchronize() -> None:
    _no_backend("deviceSynchronize")


def empty_cache() -> None:
    _no_backend("emptyCache")


def set_per_process_memory_fraction(fraction: float) -> None:
    _no_backend("setMemoryFraction")


def current_allocated_memory() -> int:
    _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    _no_backend("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    _no_backend("getRecommendedMaxMemory")


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.mps",
    dict.fromkeys(
        ("Event", "compile_shader", "load_metallib", "profiler"),
        "compat has no MPS device (its devices are JAX's CPU, GPU and TPU)",
    ),
)
