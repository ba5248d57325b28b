"""Blitz 4, "Training on GPU": ``torch.cuda.amp``, PyTorch's deprecated spelling of
``torch.amp`` for ``"cuda"`` (:mod:`jaxblitz.compat.amp`), with its FutureWarnings.

Imported as ``jaxblitz.compat.cuda.amp`` (``from torch.cuda.amp import GradScaler``
ports to that); :mod:`jaxblitz.compat.cuda` registers it under that name.
"""

from __future__ import annotations

import warnings
from typing import Any

from jaxblitz.compat import amp
from jaxblitz.compat.tensor._dtype import float16

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(
        f"`torch.cuda.amp.{name}(args...)` is deprecated. Please use `{instead}` "
        "instead.",
        FutureWarning,
        stacklevel=3,
    )


class autocast(amp.autocast):  # noqa: N801 -- torch's name
    """``torch.cuda.amp.autocast``: ``torch.amp.autocast("cuda", ...)``."""

    def __init__(
        self, enabled: bool = True, dtype: Any = float16, cache_enabled: bool = True
    ) -> None:
        _deprecated("autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__(
            "cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled
        )


class GradScaler(amp.GradScaler):
    """``torch.cuda.amp.GradScaler``: ``torch.amp.GradScaler("cuda", ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        _deprecated("GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


def custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    _deprecated("custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Any = None) -> Any:
    _deprecated("custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return amp.custom_bwd(bwd, device_type="cuda")
