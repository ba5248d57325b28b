"""Blitz 3, "Neural Networks" (a module as a function): ``torch.nn.utils.stateless``
-- ``functional_call``, refused by name as ``torch.func.functional_call`` is
(:mod:`jaxblitz.compat.func` says why and what to use instead)."""

from __future__ import annotations

from jaxblitz.compat._not_offered import refused
from jaxblitz.compat.func import _INSTEAD

__all__ = ["functional_call"]

functional_call = refused("torch.nn.utils.stateless.functional_call", _INSTEAD)
