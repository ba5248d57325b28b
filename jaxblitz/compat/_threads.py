"""``torch.get_num_threads`` / ``set_num_threads`` and their inter-op twins.

XLA's CPU thread pool is sized once, when JAX starts its CPU backend (the first
tensor made). :func:`set_num_threads` called before that sizes it, as torch's
pool follows the number (where no GPU or TPU can start: see
:func:`jaxblitz.runtime.set_cpu_threads`); called after, it cannot resize the
pool, and a warning says so once. The numbers are kept either way (with torch's
checks) for scripts that read them back, and :func:`get_num_threads` decides how
compat shares a long ``arange`` among threads, which torch's float points depend
on."""

from __future__ import annotations

import operator
import os
import warnings

from jaxblitz import runtime

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
    """Keep ``n`` as the intra-op thread count, and size XLA's CPU pool to it if
    JAX has not started yet (see the module's note)."""
    _numbers["intra"] = n = _checked("set_num_threads", n)
    _size_pool(n)


# The size compat gave XLA's CPU pool (None: JAX's own, one thread per core), and
# whether a later call was told it cannot change it.
_pool: dict = {"size": None, "warned": False}


def _size_pool(n: int) -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    if not cores or runtime.accelerator_installed():
        return  # nothing to narrow with; or the GPU compiler's pool would shrink too
    size = _pool["size"] or cores
    if min(n, cores) == size:
        return
    if _pool["size"] is None:  # (a pool compat sized has started)
        try:
            if runtime.set_cpu_threads(n):
                _pool["size"] = n
            return
        except RuntimeError:  # JAX's backend is running: its pool keeps its size
            pass
    if not _pool["warned"]:
        _pool["warned"] = True
        threads = f"{size} thread" + "s" * (size != 1)
        warnings.warn(
            f"torch.set_num_threads({n}) came after JAX started its CPU backend "
            f"(the first tensor made): XLA's thread pool keeps its {threads}. "
            "Call set_num_threads before making any tensor to size it.",
            stacklevel=3,
        )


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
