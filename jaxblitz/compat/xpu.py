"""Blitz 4 (training on a device): ``torch.xpu`` -- as a PyTorch build without
XPU support answers: no device, nothing allocated, and torch's own error
(``AssertionError: Torch not compiled with XPU enabled``) where a device is
needed. compat's devices are JAX's CPU, GPU and TPU; Intel's XPU is none of them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NoReturn

from jaxblitz.compat import _not_offered

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_gencode_flags",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "synchronize",
]


def _not_compiled() -> NoReturn:
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list[str]:
    return []


def get_gencode_flags() -> str:
    return ""


def empty_cache() -> None:
    """Nothing cached: no XPU."""


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def max_memory_reserved(device: Any = None) -> int:
    return 0


def memory_stats(device: Any = None) -> dict[str, Any]:
    return OrderedDict()


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    return {}


def memory_snapshot() -> list[Any]:
    return []


# torch queues the seeding of an XPU generator until XPU starts: without one,
# never; torch.manual_seed calls these, so they must not raise.
def manual_seed(seed: int) -> None:
    int(seed)


def manual_seed_all(seed: int) -> None:
    int(seed)


def seed() -> None:
    pass


def seed_all() -> None:
    pass


def set_rng_state(new_state: Any, device: Any = "xpu") -> None:
    pass


def set_rng_state_all(new_states: Any) -> None:
    pass


def get_rng_state_all() -> list[Any]:
    return []


def current_device() -> int:
    _not_compiled()


def get_device_capability(device: Any = None) -> dict[str, Any]:
    _not_compiled()


def get_device_name(device: Any = None) -> str:
    _not_compiled()


def get_device_properties(device: Any = None) -> Any:
    _not_compiled()


def get_rng_state(device: Any = "xpu") -> Any:
    _not_compiled()


def init() -> None:
    _not_compiled()


def initial_seed() -> int:
    _not_compiled()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    _not_compiled()


def set_device(device: Any) -> None:
    _not_compiled()


def synchronize(device: Any = None) -> None:
    _not_compiled()


_NO_XPU = "compat has no XPU device (its devices are JAX's CPU, GPU and TPU)"
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.xpu",
    _not_offered.each(
        """Event MemPool Stream StreamContext XPUGraph XPUPluggableAllocator
        can_device_access_peer change_current_allocator clock_rate current_stream
        default_generators device device_memory_used device_of
        get_per_process_memory_fraction get_stream_from_external graph
        graph_pool_handle is_current_stream_capturing make_graphed_callables
        memory_usage power_draw reset_accumulated_memory_stats
        reset_peak_memory_stats set_per_process_memory_fraction set_stream stream
        streams temperature use_mem_pool utilization""",
        _NO_XPU,
    ),
)
