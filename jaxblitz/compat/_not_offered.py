"""The names of torch.nn, torch.nn.functional and torch.optim that compat does not
offer, each refused by name with its reason: ``nn.SyncBatchNorm`` raises
:class:`NotOffered` (a ``NotImplementedError``, and an ``AttributeError``, so
``hasattr`` still answers False)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class NotOffered(NotImplementedError, AttributeError):
    """A PyTorch name compat does not offer; the message says why."""


_FRACTIONAL = (
    "fractional max pooling (random pooling regions) is not implemented; "
    "MaxPool or AdaptiveMaxPool are the deterministic equivalents"
)
_LOW_PRECISION = "float8 and grouped matrix products have no counterpart in compat"
_FUSED_LOSS = "torch's fused linear + cross-entropy loss is not implemented"

REASONS: dict[str, dict[str, str]] = {
    "torch.nn": {
        "AdaptiveLogSoftmaxWithLoss": "not implemented",
        "Container": "torch's long-deprecated base class: use nn.Module",
        "FractionalMaxPool2d": _FRACTIONAL,
        "FractionalMaxPool3d": _FRACTIONAL,
        "LinearCrossEntropyLoss": _FUSED_LOSS,
        "SyncBatchNorm": "compat trains in one process: use BatchNorm "
        "(jaxblitz.parallel shards a batch over devices)",
    },
    "torch.nn.functional": {
        "conv_tbc": "the time-batch-channel convolution is not implemented",
        "fractional_max_pool2d": _FRACTIONAL,
        "fractional_max_pool2d_with_indices": _FRACTIONAL,
        "fractional_max_pool3d": _FRACTIONAL,
        "fractional_max_pool3d_with_indices": _FRACTIONAL,
        "grouped_mm": _LOW_PRECISION,
        "linear_cross_entropy": _FUSED_LOSS,
        "scaled_grouped_mm": _LOW_PRECISION,
        "scaled_mm": _LOW_PRECISION,
    },
    "torch.optim": {
        "Muon": "not implemented",
        "SparseAdam": "compat has no sparse gradients",
    },
}


def refuser(module: str, namespace: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for compat's ``namespace`` (``torch.nn``...)."""
    reasons = REASONS[namespace]

    def __getattr__(name: str) -> Any:  # noqa: N807 -- a module's __getattr__
        if name in reasons:
            raise NotOffered(
                f"{namespace}.{name} is not supported by jaxblitz.compat: "
                f"{reasons[name]}"
            )
        raise AttributeError(f"module '{module}' has no attribute '{name}'")

    return __getattr__


def refused(qualname: str, reason: str) -> Callable[..., Any]:
    """A stand-in for the function ``qualname`` (``torch.func.vmap``) that raises
    :class:`NotOffered` with ``reason`` when called: importing it works, as a
    script's imports must, and the script stops where it first uses it."""
    name = qualname.rpartition(".")[2]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotOffered(f"{qualname} is not supported by jaxblitz.compat: {reason}")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``{qualname}``: refused (not supported by jaxblitz.compat)."
    return refuse
