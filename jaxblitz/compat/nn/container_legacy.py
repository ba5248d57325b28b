"""Blitz 3 (define the network): ``nn.Container``, torch's long-deprecated base
class, kept for the old scripts that still subclass it."""

from __future__ import annotations

import warnings
from typing import Any

from jaxblitz.compat.nn.module import Module


class Container(Module):
    """A Module whose keyword arguments become its children, with torch's
    ``FutureWarning``."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now "
            "implemented in `nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
