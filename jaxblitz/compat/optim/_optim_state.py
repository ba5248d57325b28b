"""``Optimizer.state_dict()`` / ``load_state_dict()`` in torch's structure.

compat keeps each parameter's state as its Optax state (``optimizer._optax_states``;
``optimizer.state`` shows it in torch's format, :mod:`._state_view`); torch's state
dict names the same numbers its own way::

    {"state": {0: {"momentum_buffer": tensor}, ...},
     "param_groups": [{"lr": 0.01, ..., "params": [0, 1]}]}

As torch's, ``state_dict()["state"][i]`` is the very dict ``optimizer.state[p]``
holds, its tensors the optimizer's live buffers (a later ``step()`` shows in them,
an in-place edit of them changes the next step), and ``load_state_dict`` keeps the
loaded tensors themselves where torch's cast leaves them as they are (same dtype,
same device): the optimizer then writes its steps into them.

Each optimizer names its buffers (``Optimizer._buffers``: torch key, Optax state
class, field): ``ScaleByAdamState.mu``/``nu`` are Adam's ``exp_avg``/``exp_avg_sq``,
``ScaleByRmsState.nu`` RMSprop's ``square_avg``, ``TraceState.trace`` its
``momentum_buffer``, ... and the update count is ``step`` (a float32 scalar tensor,
as torch keeps it). Loading writes them back into fresh Optax states.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from itertools import chain
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat.optim._state_view import StateView
from jaxblitz.compat.tensor._dtype import float32, x64
from jaxblitz.compat.tensor._tensor_base import TensorBase, from_host

# param-group keys compat adds for itself, not torch's (Adam: the betas, split)
_INTERNAL = ("beta1", "beta2")


def _find(state: Any) -> dict[str, Any]:
    """The Optax sub-states (the first of each class), by class name."""
    if not isinstance(state, tuple):
        return {}
    known = _LAYOUTS.get(type(state))
    if known is not None and _alike(state, known[0]):  # as the last of its kind
        return {name: _at(state, path) for name, path in known[1].items()}
    containers: list = []
    paths: dict[str, tuple[int, ...]] = {}
    _locate(state, (), containers, paths)
    _LAYOUTS[type(state)] = (containers, paths)
    return {name: _at(state, path) for name, path in paths.items()}


# a state's type -> the last such state's layout: each tuple _find walks into
# (its path, its parts' types) and where each sub-state sat. A step reads every
# parameter's state, all alike: walking each one costs more than the update's
# recording.
_LAYOUTS: dict[type, tuple[list, dict[str, tuple[int, ...]]]] = {}


def _locate(state: Any, path: tuple, containers: list, paths: dict) -> None:
    if not isinstance(state, tuple):  # a leaf (asked nothing: lazily, a read)
        return
    name = type(state).__name__
    if name.startswith("Inject") or type(state) is tuple:  # the wrapper, chains
        containers.append((path, tuple(map(type, state))))
        for i, part in enumerate(state):
            _locate(part, (*path, i), containers, paths)
    elif hasattr(state, "_fields"):
        paths.setdefault(name, path)


def _at(state: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        state = state[i]
    return state


def _alike(state: Any, containers: list) -> bool:
    """Whether ``state``'s tuples that _find walks hold parts of the same types
    as those of the state ``containers`` was made from (so the same sub-states
    sit in the same places)."""
    for path, types in containers:
        node = _at(state, path)
        if type(node) is not tuple and not type(node).__name__.startswith("Inject"):
            return False
        if tuple(map(type, node)) != types:
            return False
    return True


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


def _as_float32(count: Any) -> Any:
    return jnp.asarray(count, jnp.float32)


_float32_jit = lazy.jit(_as_float32)
# the last update count converted, and its float32 value: a param group's
# parameters share one count (optimizer.share_scalars), converted once a step
_LAST_STEP: list = [None, None]


def _step(count: Any) -> Any:
    """torch's ``step``: the update count as a float32 scalar (recorded lazily,
    so reading the state runs no pending work)."""
    if _LAST_STEP[0] is not count:
        with x64(True):
            _LAST_STEP[:] = count, _float32_jit(count)
    return _LAST_STEP[1]


# The flag started() hands out: a host value, not a device array, since every
# parameter's state holds this one object and a program that donates its inputs
# (torch.compile's) would give its one buffer away.
_STARTED: list = [np.bool_(True)]


def started() -> Any:
    """A started flag a step set on the host (``SGD._settle``), known true
    without a read of its value (lazily, a sync)."""
    return _STARTED[0]


def _started(opt: Any, found: dict[str, Any]) -> bool:
    """Whether torch would keep state for this parameter yet (``found``: its
    sub-states, :func:`_find`)."""
    if opt._started is None:
        return True
    cls, field = opt._started
    flag = getattr(found[cls], field)
    return (bool(_STARTED) and flag is _STARTED[0]) or bool(flag)


def _torch_arrays(opt: Any, group: dict[str, Any], state: Any) -> dict[str, Any]:
    """``state``'s buffers as torch names them, as arrays (empty: torch keeps
    none yet)."""
    out: dict[str, Any] = {}
    found = _find(state)
    if not _started(opt, found):
        return out
    for key, cls, field in opt._buffers(group):
        if cls == "":
            out[key] = _step(state.count)
        else:
            out[key] = getattr(found[cls], field)
    return out


def state_dict(opt: Any) -> dict[str, Any]:
    """torch's ``Optimizer.state_dict``: params as indices, in group order; each
    state the dict ``optimizer.state`` holds (live, as torch's)."""
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
    state = {
        (mapping[id(p)] if isinstance(p, TensorBase) else p): entry
        for p, entry in opt.state.items()
    }
    return {"state": state, "param_groups": groups}


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
    view = StateView(opt)  # torch: a new ``state``; the old one keeps its dicts
    new_state: dict[Any, Any] = {}
    for key, value in state_dict["state"].items():
        p = id_map.get(key)
        if p is None:  # torch keeps what it cannot place, as it is
            view.adopt(key, value, None)
            continue
        entry = _cast(p, value, state_dict["param_groups"], key)
        raw = opt._load_entry(group_of[id(p)], p, entry)
        new_state[p] = raw
        view.adopt(p, entry, raw)
    opt._state_view.detach()
    opt.param_groups = new_groups  # torch: a new list
    opt._optax_states.clear()
    opt._optax_states.update(new_state)
    opt._state_view = view


def _cast(
    p: TensorBase, value: Any, groups: list, param_id: Any, key: Any = None
) -> Any:
    """torch's ``_cast`` in ``load_state_dict``: dicts and sequences made anew,
    each tensor cast to ``p``'s dtype where it is floating (``step`` left as it
    is) -- so a tensor that needs no cast is kept, the same object."""
    if isinstance(value, TensorBase):
        if key == "step":
            group = next((g for g in groups if param_id in g["params"]), {})
            if group.get("capturable") or group.get("fused"):
                value = value.to(dtype=float32)
        elif p.is_floating_point():
            value = value.to(dtype=p.dtype)
        return _on_device(value, p)
    if isinstance(value, dict):
        return {k: _cast(p, v, groups, param_id, k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return type(value)(_cast(p, v, groups, param_id) for v in value)  # type: ignore[call-arg]
    return value


def _on_device(t: TensorBase, p: TensorBase) -> TensorBase:
    """``t``, its elements moved off NumPy (where ``torch.load`` puts them) onto
    JAX's device: the optimizer's steps write into it, which lazily must not
    need its value on the host (a write through NumPy would run the pending
    work at every step). A NumPy array taken from it before stops sharing (a
    copy moves: that array stays the caller's to write)."""
    s = t._s
    if s.numpy is not None and t._view is None and t._as is None:
        s.pending, s.numpy = from_host(np.array(s.numpy), p._value()), None
    return t


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
