"""Blitz 4, "Training on GPU": ``torch.cuda``'s queries of the build and device
(capability, architectures, random states, memory), its legacy tensor and storage
types, and the names compat refuses, with why.

On a GPU each query answers from JAX's device; without one, as torch's CPU-only
build answers (an empty list, 0, or "Torch not compiled with CUDA enabled").
"""

from __future__ import annotations

import collections
import warnings
from typing import Any

from jaxblitz.compat import _not_offered
from jaxblitz.compat.ops.shape_ops import warn_typed_storage
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor import creation as _creation


def _jax_gpu(device: Any = None) -> Any:
    if isinstance(device, str | _dtype.device):
        device = _dtype.device(device).index
    # Raises torch's "Torch not compiled with CUDA enabled" without a GPU.
    return _dtype.jax_device(_dtype.device("cuda", device))


def get_device_capability(device: Any = None) -> tuple[int, int]:
    major, _, minor = str(_jax_gpu(device).compute_capability).partition(".")
    return int(major), int(minor or 0)


def get_arch_list() -> list[str]:
    """The architectures of this process's GPUs (``['sm_90']``); jaxlib's own
    build list is not known to compat."""
    found = {"sm_{}{}".format(*get_device_capability(i)) for i in range(_count())}
    return sorted(found)


def get_gencode_flags() -> str:
    return " ".join(
        f"-gencode compute=compute_{arch},code=sm_{arch}"
        for arch in (a.removeprefix("sm_") for a in get_arch_list())
    )


def is_bf16_supported(including_emulation: bool = True) -> bool:
    if not _count():
        return False
    return including_emulation or get_device_capability()[0] >= 8


def is_tf32_supported() -> bool:
    return is_bf16_supported(including_emulation=False)


def init() -> None:
    _jax_gpu()


def _count() -> int:
    return len(_dtype.gpus())


# -- random states: compat has one generator for every device ----------------


def get_rng_state(device: Any = "cuda") -> Any:
    _jax_gpu(device)
    return _creation.get_rng_state()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    # torch's CPU-only build queues the call for a CUDA start that never comes.
    if _count():
        _jax_gpu(device)
        _creation.set_rng_state(new_state)


def get_rng_state_all() -> list[Any]:
    return [get_rng_state(i) for i in range(_count())]


def set_rng_state_all(new_states: Any) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# -- memory: JAX's allocator statistics under torch's names ------------------


def _stats(device: Any) -> dict[str, int]:
    if not _count():
        return {}  # torch's CPU build reports nothing
    return _jax_gpu(device).memory_stats() or {}


def memory_reserved(device: Any = None) -> int:
    return int(_stats(device).get("bytes_reserved", 0))


def max_memory_reserved(device: Any = None) -> int:
    return int(_stats(device).get("peak_bytes_reserved", 0))


def memory_cached(device: Any = None) -> int:
    warnings.warn(
        "`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    warnings.warn(
        "`torch.cuda.max_memory_cached` has been renamed to "
        "`torch.cuda.max_memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device)


_TORCH_STAT = {  # torch's memory_stats key: JAX's
    "allocated_bytes.all.current": "bytes_in_use",
    "allocated_bytes.all.peak": "peak_bytes_in_use",
    "reserved_bytes.all.current": "bytes_reserved",
    "reserved_bytes.all.peak": "peak_bytes_reserved",
}


def memory_stats(device: Any = None) -> collections.OrderedDict[str, int]:
    """torch's keys that JAX's allocator counts too, sorted as torch's."""
    stats = _stats(device)
    found = {key: stats[jax] for key, jax in _TORCH_STAT.items() if jax in stats}
    return collections.OrderedDict(sorted(found.items()))


def mem_get_info(device: Any = None) -> tuple[int, int]:
    stats = _jax_gpu(device).memory_stats() or {}
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total


# -- errors --------------------------------------------------------------------


class OutOfMemoryError(RuntimeError):
    """``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError``); JAX reports
    its own as an XlaRuntimeError saying RESOURCE_EXHAUSTED."""

    __module__ = "torch"


class AcceleratorError(RuntimeError):
    __module__ = "torch"


class DeferredCudaCallError(Exception):
    __module__ = "torch.cuda"


# -- legacy types -------------------------------------------------------------

_LEGACY = {
    "Float": _dtype.float32,
    "Double": _dtype.float64,
    "Half": _dtype.float16,
    "BFloat16": _dtype.bfloat16,
    "Long": _dtype.int64,
    "Int": _dtype.int32,
    "Short": _dtype.int16,
    "Char": _dtype.int8,
    "Byte": _dtype.uint8,
    "Bool": _dtype.bool,
}
# torch.cuda.FloatTensor(2, 3): a GPU tensor; no GPU: torch's TypeError
TENSOR_TYPES = {
    f"{kind}Tensor": _creation._legacy_type(f"{kind}Tensor", dt, cuda=True)
    for kind, dt in _LEGACY.items()
}


class _StorageType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return False  # compat makes no typed storages


class _LegacyStorage(metaclass=_StorageType):
    """``torch.cuda.FloatStorage``: typed storages are not offered; without a
    GPU, torch's CPU build's answer comes first."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        warn_typed_storage(stacklevel=3)
        _jax_gpu()
        raise _not_offered.NotOffered(
            f"torch.cuda.{cls.__name__} is not supported by jaxblitz.compat: "
            + _not_offered.SUBMODULES["torch.storage"]
        )


STORAGE_TYPES = {
    f"{kind}Storage": type(
        f"{kind}Storage", (_LegacyStorage,), {"__module__": "torch.cuda"}
    )
    for kind in [*_LEGACY, "ComplexFloat", "ComplexDouble"]
}

# -- names refused, with why ---------------------------------------------------

_ALLOCATOR = (
    "JAX's allocator manages GPU memory (XLA_PYTHON_CLIENT_MEM_FRACTION and "
    "XLA_PYTHON_CLIENT_PREALLOCATE set it); memory_allocated, memory_reserved, "
    "memory_stats and mem_get_info are offered"
)
REFUSED = {
    **_not_offered.each(
        """CUDAGraph graph graph_pool_handle make_graphed_callables ExternalStream
        get_stream_from_external MemPool use_mem_pool GreenContext""",
        _not_offered.STREAMS,
    ),
    **_not_offered.each(
        """caching_allocator_alloc caching_allocator_delete
        caching_allocator_disabled caching_allocator_enable CUDAPluggableAllocator
        change_current_allocator get_allocator_backend ipc_collect
        set_per_process_memory_fraction get_per_process_memory_fraction
        memory_snapshot memory_summary memory_stats_as_nested_dict
        host_memory_stats host_memory_stats_as_nested_dict
        reset_accumulated_host_memory_stats reset_accumulated_memory_stats
        reset_max_memory_allocated reset_max_memory_cached
        reset_peak_host_memory_stats reset_peak_memory_stats""",
        _ALLOCATOR,
    ),
    **_not_offered.each(
        """device_memory_used memory_usage temperature power_draw clock_rate
        utilization list_gpu_processes""",
        "NVML's device queries: call pynvml (nvidia-ml-py) directly",
    ),
    **_not_offered.each(
        """cudart current_blas_handle current_solver_handle check_error CudaError
        cudaStatus get_sync_debug_mode set_sync_debug_mode
        can_device_access_peer""",
        "the CUDA runtime's handles and switches are XLA's, not compat's",
    ),
}
