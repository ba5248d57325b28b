"""``torch.get_num_threads`` / ``set_num_threads`` and their inter-op twins.

XLA's CPU thread pool is sized once, when JAX starts, so the numbers set here
do not resize it; they are kept (with torch's checks) for scripts that read
them back, and :func:`get_num_threads` decides how compat shares a long
``arange`` among threads, which torch's float points depend on."""

from __future__ import annotations

import operator
import os

__all__ = [
    "get_num_interop_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "set_num_threads",
]


def _default() -> int:
    """torch's default: ``OMP_NUM_THREADS`` (or ``MKL_NUM_THREADS``), else the
    cores this process may run on."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_numbers = {"intra": None, "interop": None}


def _checked(name: str, n: object) -> int:
    try:
        if isinstance(n, bool):
            raise TypeError
        n = operator.index(n)
    except TypeError:
        raise RuntimeError(
            f"{name} expects an int, but got {type(n).__name__}"
        ) from None
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def get_num_threads() -> int:
    """The number of threads torch's intra-op loops would use."""
    n = _numbers["intra"]
    return _default() if n is None else n


def set_num_threads(n: int) -> None:
    """Keep ``n`` as the intra-op thread count (XLA's pool is not resized)."""
    _numbers["intra"] = _checked("set_num_threads", n)


def get_num_interop_threads() -> int:
    """The number of inter-op threads (torch's default: the intra-op default)."""
    n = _numbers["interop"]
    return _default() if n is None else n


def set_num_interop_threads(n: int) -> None:
    """Keep ``n`` as the inter-op thread count; as in torch, only before any
    inter-op work has started, and only once."""
    if _numbers["interop"] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has "
            "started or set_num_interop_threads called"
        )
    _numbers["interop"] = _checked("set_num_interop_threads", n)
