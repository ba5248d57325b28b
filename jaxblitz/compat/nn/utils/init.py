"""Blitz 3, "Neural networks": ``torch.nn.utils.skip_init`` -- a module made
without running its parameter initialisation."""

from __future__ import annotations

import inspect
from typing import Any

from jaxblitz.compat.nn.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``module_cls(*args, **kwargs)`` whose parameter values are unspecified.

    torch makes the module on the meta device and allocates its storage
    uninitialised; compat has no meta device, so the module is made as usual
    (its values are one choice of "unspecified"), with torch's checks.
    """
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
