# ruff: noqa: F403, F405 -- this module re-exports Python's multiprocessing
"""Blitz 4 (loading data): ``torch.multiprocessing`` -- Python's
:mod:`multiprocessing`, as torch re-exports it, and torch's tensor-sharing
strategies.

torch registers its tensors with multiprocessing's pickler so that they cross
processes in shared memory. compat's tensors are not pickled (``torch.save``
writes them), so a tensor put on a ``Queue`` raises; send NumPy arrays
(``t.numpy()``) instead. DataLoader's workers hand their batches back
themselves. The sharing strategy is therefore kept and answered, and changes
nothing. ``spawn`` is not offered (see its reason).
"""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *

from jaxblitz.compat import _not_offered

__all__ = [
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    *multiprocessing.__all__,
]

# torch's strategies: file descriptors by default, and the file system, on Linux;
# elsewhere the file system only.
if sys.platform == "darwin" or sys.platform == "win32":
    _ALL_STRATEGIES = {"file_system"}
    _strategy = "file_system"
else:
    _ALL_STRATEGIES = {"file_descriptor", "file_system"}
    _strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """``torch.multiprocessing.set_sharing_strategy``: one of torch's names
    (the module doc says why it changes nothing here)."""
    global _strategy
    if new_strategy not in _ALL_STRATEGIES:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, "
            f"expected one of {_ALL_STRATEGIES}"
        )
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    return _strategy


def get_all_sharing_strategies() -> set[str]:
    return set(_ALL_STRATEGIES)


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.multiprocessing",
    _not_offered.each(
        """spawn start_processes ProcessContext SpawnContext
        ProcessExitedException ProcessRaisedException""",
        "torch's process launcher is not implemented: Python's "
        "multiprocessing.get_context('spawn').Process starts one; "
        "jaxblitz.parallel shards a batch over devices in one process",
    )
    | {"init_reductions": _not_offered.BUILD},
)
