"""Blitz 2 (autograd hooks): ``torch.utils.hooks`` -- the handle a hook's
registration returns (nn's own, :class:`~jaxblitz.compat.nn.hooks.RemovableHandle`)
and the marker for hooks not to be saved."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from jaxblitz.compat import _not_offered
from jaxblitz.compat.nn.hooks import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]

F = TypeVar("F", bound=Callable)


def unserializable_hook(f: F) -> F:
    """``torch.utils.hooks.unserializable_hook``: marks ``f`` as a hook that is
    not saved with its tensor (torch then does not warn)."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.utils.hooks",
    {
        "warn_if_has_hooks": "compat's torch.save writes a tensor's values, never "
        "its hooks: there is nothing to warn of",
        "BackwardHook": "torch's internal helper of nn.Module's full backward hooks: "
        "register_full_backward_hook is offered",
    },
)
