"""The bridge to the fast path: a compat ``nn.Module`` as ``(params, apply_fn)``.

``params`` is a nested dict named like the module's ``state_dict``
(``params["conv1"]["weight"]``), the functional core's convention, so
``jaxblitz.train`` (or any ``jax.jit``/``jax.grad`` code) can train it;
``module.load_params(params)`` writes the result back::

    params, apply_fn = torch.functional(net)
    logits = jax.jit(apply_fn)(params, images)       # pure: traceable, jittable
    net.load_params(new_params)
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase, _Storage
from jaxblitz.models import flatten_params, unflatten_params


def functional(module: Any) -> tuple[dict[str, Any], Any]:
    """``(params, apply_fn)`` with ``apply_fn(params, *inputs) -> output array``."""
    named = dict(module.named_parameters())
    params = unflatten_params({name: p._data for name, p in named.items()})

    def apply_fn(params: dict[str, Any], *inputs: Any) -> Any:
        flat = flatten_params(params)
        saved = {name: (p._s, p._view) for name, p in named.items()}
        try:
            for name, p in named.items():
                p._s, p._view = _Storage(flat[name]), None
            with no_grad():
                out = module(*[TensorBase._wrap(x) for x in inputs])
        finally:
            for name, p in named.items():
                p._s, p._view = saved[name]
        return jax.tree.map(
            lambda t: t._data, out, is_leaf=lambda t: isinstance(t, TensorBase)
        )

    return params, apply_fn


def load_params(module: Any, params: dict[str, Any]) -> None:
    """Copy a params tree (from :func:`functional`, or the core) into ``module``."""
    flat = flatten_params(params)
    named = dict(module.named_parameters())
    missing = sorted(set(named) - set(flat))
    unexpected = sorted(set(flat) - set(named))
    if missing or unexpected:
        raise KeyError(
            f"params do not match {type(module).__name__}: missing {missing}, "
            f"unexpected {unexpected}"
        )
    for name, p in named.items():
        value = flat[name]
        if tuple(np.shape(value)) != tuple(p.shape):
            raise ValueError(
                f"{name}: expected shape {tuple(p.shape)}, got {tuple(np.shape(value))}"
            )
        with x64(True):
            p._set_data(jax.numpy.asarray(value, p.dtype.np))
