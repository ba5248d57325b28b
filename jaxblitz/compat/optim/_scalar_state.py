"""Blitz 3/4 (update the weights): optimizer buffers that are scalars per
parameter (NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``) in torch's state
dict.

``state_dict()`` names them like any buffer (``Optimizer._buffers``); torch keeps
them as float32 scalar tensors. Loading puts them back into the Optax state after
the parameter-shaped buffers are loaded (:mod:`jaxblitz.compat.optim._optim_state`
reads every buffer in its parameter's shape).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.optim import _optim_state
from jaxblitz.compat.optim.optimizer import Optimizer
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase


class ScalarBuffers(Optimizer):
    """An optimizer some of whose torch buffers are scalars: ``_scalars`` names
    them (torch key -> (Optax state class, field)), each a float32 scalar."""

    _scalars: dict[str, tuple[str, str]] = {}

    def _array_buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        """``_buffers`` less the scalar ones (what the generic loader reads)."""
        full = type(self)._buffers(self, group)
        return [b for b in full if b[0] not in self._scalars]

    def _load_entry(self, group: dict[str, Any], p: TensorBase, value: dict) -> Any:
        value = dict(value)
        scalars = {n: value.pop(n) for n in self._scalars if n in value}
        missing = [n for n in self._scalars if n not in scalars]
        if missing and scalars:
            raise KeyError(
                f"{type(self).__name__}.load_state_dict: the state of a parameter "
                f"lacks {missing} (jaxblitz.compat needs every buffer torch keeps)"
            )
        layout = self._array_buffers(group)  # the generic loader reads these
        state = _optim_state._optax_state(self, group, p, value, layout)
        if not scalars:
            return state
        fields: dict[str, dict[str, Any]] = {}
        with x64(True):
            for name, v in scalars.items():
                cls, field = self._scalars[name]
                array = v._data if isinstance(v, TensorBase) else v
                fields.setdefault(cls, {})[field] = jnp.asarray(array, jnp.float32)
        return _optim_state._replace(state, fields)
