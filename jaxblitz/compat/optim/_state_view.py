"""Blitz 3/4 (update the weights): ``optimizer.state`` in torch's format.

torch's ``optimizer.state`` is a ``defaultdict(dict)`` from each parameter to its
buffers (SGD: ``{"momentum_buffer": tensor}``, Adam: ``{"step": tensor(1.),
"exp_avg": ..., "exp_avg_sq": ...}``). compat keeps Optax states
(``optimizer._optax_states``); :class:`StateView` shows them as torch does,
converted (:mod:`._optim_state`'s per-parameter helpers, as ``state_dict()``) only
when read, so a ``step()`` nobody looks at costs nothing more.

Writes are not lost: before a step (and ``state_dict()``) each dict handed out is
compared with what it held when it was made -- its keys, each entry's tensor, that
tensor's storage and version counter -- and a changed one is loaded back the way
``load_state_dict()`` loads it. A step writes its new values into the tensors
already handed out, in place, as torch's in-place updates do, so a buffer held
across steps stays live.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from jaxblitz.compat.tensor._tensor_base import TensorBase

_NONE = object()  # no Optax state (a dict the user made, or torch's empty one)


def _mark(value: Any) -> tuple:
    """What tells an entry's later edits: the object, and for a tensor its
    storage, the array in it, its view and its version counter."""
    if not isinstance(value, TensorBase):
        return (value,)
    s = value._s
    mark = (value, s, s.pending, value._view, value._vc, value._vc[0])
    # a storage NumPy shares may be written through NumPy, unseen: always changed
    return mark if s.numpy is None else (*mark, object())


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        x == y if type(x) is int else x is y for x, y in zip(a, b, strict=True)
    )


def _marks(entry: dict) -> dict:
    return {key: _mark(value) for key, value in entry.items()}


def _unchanged(entry: dict, marks: dict) -> bool:
    if len(entry) != len(marks):
        return False
    for key, value in entry.items():
        old = marks.get(key, _NONE)
        if old is _NONE or not _same(_mark(value), old):
            return False
    return True


class StateView(MutableMapping):
    """torch's ``optimizer.state`` over an optimizer's Optax states."""

    def __init__(self, opt: Any):
        self._opt = opt
        # a parameter -> the dict handed out, the Optax state it shows (_NONE:
        # none) and its entries' marks (None: the user's own dict, never marked)
        self._dicts: dict[Any, dict] = {}
        self._made: dict[Any, tuple[Any, dict | None]] = {}

    # -- reading -------------------------------------------------------------------
    def _group(self, p: Any) -> dict | None:
        """``p``'s param group (None: not a parameter of this optimizer)."""
        groups = self._opt.param_groups
        if len(groups) == 1:
            return (
                groups[0]
                if p in self._opt._optax_states
                or any(q is p for q in groups[0]["params"])
                else None
            )
        for group in groups:
            if any(q is p for q in group["params"]):
                return group
        return None

    def _show(self, p: Any, add: bool) -> dict | None:
        """``p``'s dict, brought up to date with its Optax state; None where torch
        keeps nothing for ``p`` and ``add`` is false (else an empty dict, kept)."""
        raw = self._opt._optax_states.get(p, _NONE)
        entry = self._dicts.get(p)
        if entry is not None:
            shown, marks = self._made[p]
            if shown is raw or marks is None or not _unchanged(entry, marks):
                return entry  # up to date, or edited (loaded at the next step)
            self._refresh(p, entry, raw)
            return entry
        new: dict = {}
        group = None if raw is _NONE else self._group(p)
        if group is not None:
            new = self._opt._torch_entry(group, p, raw)
        if not new and not add:
            return None
        self._dicts[p] = new
        self._made[p] = (raw, _marks(new))
        return new

    def _refresh(self, p: Any, entry: dict, raw: Any, group: Any = _NONE) -> None:
        """Put ``raw``'s values into ``entry``: into the tensors there (in place,
        as torch's step writes its buffers) where shape and dtype allow."""
        if group is _NONE:
            group = None if raw is _NONE else self._group(p)
        new = {} if group is None else self._opt._torch_arrays(group, p, raw)
        for key, array in new.items():
            old = entry.get(key)
            if isinstance(old, TensorBase) and _fits(old, array):
                old._set_data(array)
            else:
                entry[key] = TensorBase._wrap(array)
        self._made[p] = (raw, _marks(entry))

    def __getitem__(self, p: Any) -> dict:
        out = self._show(p, add=True)  # torch: defaultdict(dict)
        assert out is not None
        return out

    def _keys(self) -> list:
        for p in self._opt._optax_states:
            self._show(p, add=False)
        return list(self._dicts)

    def __iter__(self) -> Iterator:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __contains__(self, p: object) -> bool:
        return p in self._dicts or self._show(p, add=False) is not None

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    # -- writing -------------------------------------------------------------------
    def __setitem__(self, p: Any, value: dict) -> None:
        self._dicts[p] = value
        self._made[p] = (self._opt._optax_states.get(p, _NONE), None)

    def __delitem__(self, p: Any) -> None:
        if p not in self:
            raise KeyError(p)
        self._dicts.pop(p, None)
        self._made.pop(p, None)
        self._opt._optax_states.pop(p, None)  # torch: made afresh at the next step

    def adopt(self, p: Any, entry: dict, raw: Any) -> None:
        """Hand out ``entry`` as ``p``'s dict, showing the Optax state ``raw``
        (``load_state_dict``: the loaded dict, made anew, its tensors kept)."""
        self._dicts[p] = entry
        self._made[p] = (_NONE if raw is None else raw, _marks(entry))

    def detach(self) -> None:
        """Stop following the optimizer (torch: a new ``state`` replaced this
        one): the dicts handed out stay as they are, a plain mapping of them."""
        self._opt = _Detached()

    def sync(self) -> None:
        """Load the dicts edited since they were made back into the Optax states
        (as ``load_state_dict`` would): before a step reads them."""
        if not self._dicts:
            return
        states = self._opt._optax_states
        for p, entry in self._dicts.items():
            shown, marks = self._made[p]
            if marks is not None and _unchanged(entry, marks):
                continue
            group = self._group(p)
            if group is None:  # not a parameter of this optimizer: torch ignores it
                continue
            if not entry and not self._opt._state_at_init:
                states.pop(p, None)  # torch: an empty state is made afresh
                raw = _NONE
            else:
                raw = states[p] = self._opt._load_entry(group, p, entry)
            self._made[p] = (raw, _marks(entry))

    def stepped(self, params: list, group: Any = _NONE) -> None:
        """After a step stored new states for ``params`` (of ``group``, where
        given): refresh the dicts handed out for them (torch's step updates them
        in place)."""
        if not self._dicts:
            return
        states = self._opt._optax_states
        for p in params:
            entry = self._dicts.get(p)
            if entry is not None:
                self._refresh(p, entry, states.get(p, _NONE), group)


def _fits(old: TensorBase, array: Any) -> bool:
    """Whether ``array`` can be written into ``old`` (its shape and dtype)."""
    if old._view is None and old._as is None:
        s = old._s
        return s.shape == tuple(array.shape) and s.dtype == array.dtype
    new = TensorBase._wrap(array)
    return old.shape == new.shape and old.dtype == new.dtype


class _Detached:
    """What a detached :class:`StateView` reads instead of its optimizer: no
    states, no parameters (so it shows and keeps its own dicts alone)."""

    _state_at_init = False

    def __init__(self) -> None:
        self._optax_states: dict = {}
        self.param_groups: list = []
