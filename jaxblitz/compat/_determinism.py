"""``torch.use_deterministic_algorithms`` and its debug mode, with torch's checks.

compat's programs are deterministic on the CPU: the same inputs give the same
bits run to run. On a GPU, XLA's scatter-adds and some reductions are
deterministic only with ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` set
before JAX starts; asking for deterministic algorithms on a GPU without it
warns once and names the flag, where torch raises at the nondeterministic op.
"""

from __future__ import annotations

import os
import warnings

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "use_deterministic_algorithms",
]

_MODES = ("default", "warn", "error")
_state = {"on": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (see the module's docstring)."""
    for name, value, position in (("mode", mode, 1), ("warn_only", warn_only, 2)):
        if not isinstance(value, bool):
            raise TypeError(
                f"_set_deterministic_algorithms(): argument '{name}' (position "
                f"{position}) must be bool, not {type(value).__name__}"
            )
    _state.update(on=mode, warn_only=warn_only and mode)
    if mode:
        _check_gpu()


def are_deterministic_algorithms_enabled() -> bool:
    return _state["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``"default"``/0: off; ``"warn"``/1: on, warn only; ``"error"``/2: on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, "
                f"`error`, but got {debug_mode}"
            )
        debug_mode = _MODES.index(debug_mode)
    elif debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["on"]:
        return 0
    return 1 if _state["warn_only"] else 2


def _check_gpu() -> None:
    import jax

    flags = os.environ.get("XLA_FLAGS", "")
    if jax.default_backend() == "gpu" and "xla_gpu_deterministic_ops=true" not in flags:
        warnings.warn(
            "torch.use_deterministic_algorithms(True): XLA's GPU scatter-adds and "
            "reductions are deterministic only with "
            "XLA_FLAGS=--xla_gpu_deterministic_ops=true set before JAX starts",
            stacklevel=3,
        )
