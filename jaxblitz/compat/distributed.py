"""Blitz 5, "Data parallelism" (beyond one process): ``torch.distributed``.

compat is single-process: one Python process drives every device JAX sees
(``nn.DataParallel`` shards a batch over ``jax.devices()``), so there is never a
process group. What a script asks before starting one works as in PyTorch
without one: ``is_available()`` is true, ``is_initialized()`` false, and
``get_rank()``/``get_world_size()`` raise PyTorch's error. ``init_process_group``
is refused by name (JAX's own multi-process runtime is
``jaxblitz.parallel.initialize``, over JAX arrays, not torch's collectives), and
so, in PyTorch's words plus their own name, is every collective.
"""

from __future__ import annotations

import enum
import os
from typing import Any

__all__ = [
    "Backend",
    "GroupMember",
    "ReduceOp",
    "all_gather",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_node_local_rank",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "scatter",
    "send",
]

# torch's words, wherever a process group is needed and none was started
NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call "
    "init_process_group."
)


def _no_group(name: str) -> ValueError:
    return ValueError(
        f"{NOT_INITIALIZED} (jaxblitz.compat: torch.distributed.{name} needs a "
        "process group, and compat runs in one process: init_process_group is "
        "not supported)"
    )


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """``torch.distributed.ReduceOp``: the names, for code that mentions them."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class Backend(str):
    """``torch.distributed.Backend``: a backend's lower-case name."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        return str.__new__(cls, name.lower())


class GroupMember:
    WORLD = None  # no default group
    NON_GROUP_MEMBER = -100


class group:  # noqa: N801 -- torch's name
    WORLD = None


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return False


def is_gloo_available() -> bool:
    return False  # compat has no torch backend; JAX's CPU collectives are its own


def is_nccl_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to "
        "allow `get_node_local_rank` to work, assuming you are not running in a "
        "multi-device context and want the code to run locally instead."
    )


def get_rank(group: Any = None) -> int:
    raise ValueError(NOT_INITIALIZED)


def get_world_size(group: Any = None) -> int:
    raise ValueError(NOT_INITIALIZED)


def get_backend(group: Any = None) -> str:
    raise ValueError(NOT_INITIALIZED)


def init_process_group(backend: str | None = None, *args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(
        "torch.distributed.init_process_group is not supported by jaxblitz.compat: "
        "one process drives every device JAX sees (nn.DataParallel shards a batch "
        "over jax.devices()); several hosts join JAX's multi-process runtime with "
        "jaxblitz.parallel.initialize(), not torch's process groups"
    )


def destroy_process_group(group: Any = None) -> None:
    raise AssertionError("Process group cannot be None")  # torch's, without one


def _collective(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise _no_group(name)

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``torch.distributed.{name}``: needs a process group (none)."
    return refuse


all_gather = _collective("all_gather")
all_gather_into_tensor = _collective("all_gather_into_tensor")
all_gather_object = _collective("all_gather_object")
all_reduce = _collective("all_reduce")
all_to_all = _collective("all_to_all")
all_to_all_single = _collective("all_to_all_single")
barrier = _collective("barrier")
broadcast = _collective("broadcast")
broadcast_object_list = _collective("broadcast_object_list")
gather = _collective("gather")
gather_object = _collective("gather_object")
irecv = _collective("irecv")
isend = _collective("isend")
monitored_barrier = _collective("monitored_barrier")
new_group = _collective("new_group")
recv = _collective("recv")
reduce = _collective("reduce")
reduce_scatter = _collective("reduce_scatter")
reduce_scatter_tensor = _collective("reduce_scatter_tensor")
scatter = _collective("scatter")
scatter_object_list = _collective("scatter_object_list")
send = _collective("send")


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # the import system's and tools' probes
        raise AttributeError(name)
    raise NotImplementedError(
        f"torch.distributed.{name} is not supported by jaxblitz.compat (one "
        "process, no process groups: see torch.distributed.init_process_group)"
    )
