"""Blitz 3/4 (update the weights): optimizer buffers that are scalars per
parameter (NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``) in torch's state
dict.

``state_dict()`` names them like any buffer (``Optimizer._buffers``); torch keeps
them as float32 scalar tensors. Loading puts them back into the Optax state after
the parameter-shaped buffers are loaded (:mod:`jaxblitz.compat.optim._optim_state`
reads every buffer in its parameter's shape).
"""

from __future__ import annotations

from itertools import chain
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

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = {k: dict(v) for k, v in state_dict["state"].items()}
        scalars = {
            k: {n: v.pop(n) for n in self._scalars if n in v} for k, v in saved.items()
        }
        for values in scalars.values():
            missing = [n for n in self._scalars if n not in values]
            if missing and values:
                raise KeyError(
                    f"{type(self).__name__}.load_state_dict: the state of a parameter "
                    f"lacks {missing} (jaxblitz.compat needs every buffer torch keeps)"
                )
        self._buffers = self._array_buffers  # the generic loader reads these
        try:
            _optim_state.load_state_dict(self, {**state_dict, "state": saved})
        finally:
            del self._buffers
        params = chain.from_iterable(g["params"] for g in self.param_groups)
        ids = chain.from_iterable(g["params"] for g in state_dict["param_groups"])
        by_id = dict(zip(ids, params, strict=True))
        with x64(True):
            for k, values in scalars.items():
                p = by_id.get(k)
                if p is None or p not in self.state or not values:
                    continue
                fields: dict[str, dict[str, Any]] = {}
                for name, v in values.items():
                    cls, field = self._scalars[name]
                    array = v._data if isinstance(v, TensorBase) else v
                    fields.setdefault(cls, {})[field] = jnp.asarray(array, jnp.float32)
                self.state[p] = _optim_state._replace(self.state[p], fields)
