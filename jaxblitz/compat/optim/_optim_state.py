"""``Optimizer.state_dict()`` / ``load_state_dict()`` in torch's structure.

compat keeps each parameter's state as its Optax state (``optimizer._optax_states``;
``optimizer.state`` shows it in torch's format, :mod:`._state_view`); torch's state
dict names the same numbers its own way::

    {"state": {0: {"momentum_buffer": tensor}, ...},
     "param_groups": [{"lr": 0.01, ..., "params": [0, 1]}]}

Each optimizer names its buffers (``Optimizer._buffers``: torch key, Optax state
class, field): ``ScaleByAdamState.mu``/``nu`` are Adam's ``exp_avg``/``exp_avg_sq``,
``ScaleByRmsState.nu`` RMSprop's ``square_avg``, ``TraceState.trace`` its
``momentum_buffer``, ... and the update count is ``step`` (a float32 scalar tensor,
as torch keeps it). Loading writes them back into fresh Optax states.
"""

from __future__ import annotations

import copy
from itertools import chain
from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase

# param-group keys compat adds for itself, not torch's (Adam: the betas, split)
_INTERNAL = ("beta1", "beta2")


def _find(state: Any, found: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Optax sub-states (the first of each class), by class name."""
    found = {} if found is None else found
    name = type(state).__name__
    if name.startswith("Inject") or type(state) is tuple:  # the wrapper, chains
        for part in state:
            _find(part, found)
    elif hasattr(state, "_fields"):
        found.setdefault(name, state)
    return found


def _replace(state: Any, values: dict[str, dict[str, Any]]) -> Any:
    """``state`` with the fields in ``values[class name]`` swapped in."""
    name = type(state).__name__
    if name in values:
        return state._replace(**values[name])
    if isinstance(state, tuple):
        parts = [_replace(part, values) for part in state]
        if hasattr(state, "_fields"):  # a NamedTuple (InjectHyperparamsState ...)
            return type(state)(*parts)
        return type(state)(parts)
    return state


def _tensor(array: Any) -> TensorBase:
    return TensorBase._wrap(array)


def _step(count: Any) -> TensorBase:
    with x64(True):
        return _tensor(jnp.asarray(count, jnp.float32))


def _started(opt: Any, state: Any) -> bool:
    """Whether torch would keep state for this parameter yet."""
    if opt._started is None:
        return True
    cls, field = opt._started
    return bool(getattr(_find(state)[cls], field))


def _torch_state(opt: Any, group: dict[str, Any], state: Any) -> dict[str, Any]:
    found = _find(state)
    out: dict[str, Any] = {}
    if not _started(opt, state):
        return out
    for key, cls, field in opt._buffers(group):
        if cls == "":
            out[key] = _step(state.count)
        else:
            out[key] = _tensor(getattr(found[cls], field))
    return out


def state_dict(opt: Any) -> dict[str, Any]:
    """torch's ``Optimizer.state_dict``: params as indices, in group order."""
    opt._sync_state()  # edits made through ``optimizer.state`` first
    mapping: dict[int, int] = {}
    start = 0
    groups = []
    for group in opt.param_groups:
        packed = {
            k: v for k, v in group.items() if k != "params" and k not in _INTERNAL
        }
        for i, p in enumerate(group["params"], start):
            mapping.setdefault(id(p), i)
        packed["params"] = [mapping[id(p)] for p in group["params"]]
        start += len(packed["params"])
        groups.append(packed)
    state: dict[int, Any] = {}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt._optax_states.get(p)
            if st is None:
                continue
            entry = opt._torch_entry(group, p, st)
            if entry:  # torch keeps no state where it has nothing to keep
                state[mapping[id(p)]] = entry
    return {"state": dict(sorted(state.items())), "param_groups": groups}


def load_state_dict(opt: Any, state_dict: dict[str, Any]) -> None:
    """torch's ``Optimizer.load_state_dict``: checks, words and casts as torch."""
    state_dict = state_dict.copy()
    groups = opt.param_groups
    saved_groups = copy.deepcopy(state_dict["param_groups"])
    if len(groups) != len(saved_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    if any(
        len(g["params"]) != len(s["params"])
        for g, s in zip(groups, saved_groups, strict=True)
    ):
        raise ValueError(
            "loaded state dict contains a parameter group that doesn't match the size "
            "of optimizer's group"
        )
    id_map = dict(
        zip(
            chain.from_iterable(g["params"] for g in saved_groups),
            chain.from_iterable(g["params"] for g in groups),
            strict=True,
        )
    )
    new_groups = []
    for group, saved in zip(groups, saved_groups, strict=True):
        saved["params"] = group["params"]
        if "param_names" in group and "param_names" not in saved:
            saved["param_names"] = group["param_names"]
        new_groups.append(opt._adopt(saved))
    group_of = {id(p): g for g in new_groups for p in g["params"]}
    new_state: dict[Any, Any] = {}
    for key, value in state_dict["state"].items():
        p = id_map.get(key)
        if p is None:
            continue
        new_state[p] = opt._load_entry(group_of[id(p)], p, value)
    opt.param_groups[:] = new_groups
    opt._optax_states.clear()
    opt._optax_states.update(new_state)
    opt._state_view.forget()  # torch: a new ``state``, the old dicts detached


def _optax_state(
    opt: Any,
    group: dict[str, Any],
    p: TensorBase,
    value: dict,
    layout: list[tuple[str, str, str]] | None = None,
) -> Any:
    """One parameter's Optax state from its torch state ``value`` (the buffers
    in ``layout``, by default ``opt._buffers(group)``)."""
    layout = opt._buffers(group) if layout is None else layout
    # torch 1.x saved SGD's unused buffer as None; torch reads None as no buffer yet
    value = {k: v for k, v in value.items() if v is not None}
    if opt._started is not None and not value:
        layout = []  # torch had nothing yet (SGD before momentum)
    missing = [key for key, _, _ in layout if key not in value]
    if missing:
        raise KeyError(
            f"{type(opt).__name__}.load_state_dict: the state of a parameter lacks "
            f"{missing} (jaxblitz.compat needs every buffer torch keeps)"
        )
    with x64(True):
        state = opt._tx(group).init(p._data)
        if not layout:
            return state
        found = _find(state)
        fields: dict[str, dict[str, Any]] = {}
        count = jnp.asarray(1, jnp.int32)  # a kept state has seen a step
        for key, cls, field in layout:
            v = value[key]
            array = v._data if isinstance(v, TensorBase) else jnp.asarray(v)
            if cls == "":
                count = jnp.asarray(array, jnp.int32)
                continue
            fields.setdefault(cls, {})[field] = array.astype(p.dtype.np).reshape(
                p.shape
            )
        for cls in fields:  # the stages' own counts (Adam's bias correction)
            if "count" in found[cls]._fields:
                fields[cls]["count"] = count
        if opt._started is not None:
            cls, field = opt._started
            fields.setdefault(cls, {})[field] = jnp.asarray(True)
        state = state._replace(count=count)
        state = _replace(state, fields)
    return state
