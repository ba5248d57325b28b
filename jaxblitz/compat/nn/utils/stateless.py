"""Blitz 3, "Neural Networks" (a module as a function): ``torch.nn.utils.stateless``
-- ``functional_call``, torch's older name of ``torch.func.functional_call``."""

from __future__ import annotations

from jaxblitz.compat._func_state import functional_call

__all__ = ["functional_call"]
