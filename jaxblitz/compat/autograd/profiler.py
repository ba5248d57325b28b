"""``torch.autograd.profiler``: ``record_function`` names a span of JAX's trace
(the same class as :mod:`jaxblitz.compat.profiler`'s, as in torch);
``profile`` is refused when made, as ``torch.profiler.profile`` is."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.profiler import _INSTEAD, ProfilerActivity, record_function

__all__ = ["ProfilerActivity", "profile", "record_function"]


class profile:  # noqa: N801 -- torch's name
    """Refused when made: its results (event tables) have no JAX counterpart."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "torch.autograd.profiler.profile is not supported by jaxblitz.compat: "
            f"{_INSTEAD}"
        )
