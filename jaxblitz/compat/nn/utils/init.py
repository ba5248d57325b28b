"""Blitz 3, "Neural networks": ``torch.nn.utils.skip_init`` -- a module made
without running its parameter initialisation."""

from __future__ import annotations

import inspect
from typing import Any

from jaxblitz.compat.nn.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``module_cls(*args, **kwargs)`` whose parameter values are unspecified.

    As torch: the module is made on the meta device, then given storage on
    ``device`` (the CPU unless given) by ``to_empty`` -- zeros in compat.
    """
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
