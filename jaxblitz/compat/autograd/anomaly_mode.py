"""``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``: while on, a
backward node that returns NaN raises torch's error naming the node.

torch also warns with the traceback of the forward call that made the node;
compat does not keep forward tracebacks, so the error names the node only.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_detect_anomaly",
]

_state = {"on": False, "check_nan": True}


def is_anomaly_enabled() -> bool:
    return _state["on"]


def is_anomaly_check_nan_enabled() -> bool:
    return _state["check_nan"]


def check(name: str, grads: Any) -> None:
    """Raise torch's error when a backward node's ``grads`` hold NaN (while on)."""
    if not (_state["on"] and _state["check_nan"]):
        return
    for k, g in enumerate(grads):
        if g is None or not jnp.issubdtype(g.dtype, jnp.inexact):
            continue
        if bool(jnp.isnan(jnp.asarray(g)).any()):
            raise RuntimeError(
                f"Function '{name}' returned nan values in its {k}th output."
            )


class _Switch:
    def __init__(self, mode: bool, check_nan: bool) -> None:
        self._prev = dict(_state)
        _state.update(on=mode, check_nan=check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _state.update(self._prev)


class detect_anomaly:  # noqa: N801 -- torch's name
    """On for the ``with`` block (or the decorated function)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the "
            "runtime and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._switch = _Switch(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        self._switch.__exit__(*exc)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly(_Switch):  # noqa: N801 -- torch's name
    """On or off from now on; as a context manager, until the block ends."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        super().__init__(mode, check_nan)
