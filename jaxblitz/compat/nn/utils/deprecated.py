"""Blitz 4, "Training a classifier": the deprecated names ``torch.nn.utils`` still
offers, with torch's FutureWarning."""

from __future__ import annotations

import warnings
from typing import Any

from jaxblitz.compat.nn.utils.clip_grad import clip_grad_norm_
from jaxblitz.compat.tensor import Tensor

__all__ = ["clip_grad_norm"]


def clip_grad_norm(
    parameters: Any,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """``clip_grad_norm_`` under its old name."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
