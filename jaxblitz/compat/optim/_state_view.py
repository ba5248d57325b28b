"""Blitz 3/4 (update the weights): ``optimizer.state`` in torch's format.

torch's ``optimizer.state`` is a ``defaultdict(dict)`` from each parameter to its
buffers (SGD: ``{"momentum_buffer": tensor}``, Adam: ``{"step": tensor(1.),
"exp_avg": ..., "exp_avg_sq": ...}``). compat keeps Optax states
(``optimizer._optax_states``); :class:`StateView`, a ``defaultdict(dict)`` itself,
shows them as torch does, converted (:mod:`._optim_state`'s per-parameter
helpers, as ``state_dict()``) only when read, so a ``step()`` nobody looks at
costs nothing more.

The dicts handed out are the mapping's own items, so code that reads a dict's
items in C sees them; every Python-level method (``len``, iteration, ``items``,
``==``, ``repr``, copies ...) first adds the states not read yet, in torch's
order. Before any read C sees no states at all: ``json.dumps`` (C's encoder
reads the size first) then prints ``{}`` where torch's raises for its tensor
keys. Its copies (``copy``, ``copy.deepcopy``, ``__reduce__``, ``|``) are plain
``defaultdict``s, as torch's are.

Writes are not lost: before a step (and ``state_dict()``) each dict handed out is
compared with what it held when it was made -- its keys, each entry's tensor, that
tensor's storage and version counter -- and a changed one is loaded back the way
``load_state_dict()`` loads it. A step writes its new values into the tensors
already handed out, in place, as torch's in-place updates do, so a buffer held
across steps stays live.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterator
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


class StateView(defaultdict):
    """torch's ``optimizer.state``, a ``defaultdict(dict)``, over an optimizer's
    Optax states: the dicts handed out are its own items (so C code that reads a
    dict's items directly sees them), and every Python-level method first adds
    the parameters whose state was never read, in torch's order."""

    __slots__ = ("_opt", "_made")

    def __init__(self, opt: Any):
        super().__init__(dict)
        self._opt = opt
        # a parameter -> the Optax state its dict shows (_NONE: none) and its
        # entries' marks (None: the user's own dict, never marked)
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

    def _show(self, p: Any, add: bool) -> Any:
        """``p``'s dict, brought up to date with its Optax state; None where torch
        keeps nothing for ``p`` and ``add`` is false (else a new entry, kept)."""
        raw = self._opt._optax_states.get(p, _NONE)
        if _has(self, p):
            entry = _get(self, p)
            shown, marks = self._made[p]
            if shown is raw or marks is None or not _unchanged(entry, marks):
                return entry  # up to date, or edited (loaded at the next step)
            self._refresh(p, entry, raw)
            return entry
        new = self._convert(p, raw)
        if new is None:
            if not add:
                return None
            if self.default_factory is None:  # torch: defaultdict's __missing__
                raise KeyError(p)
            new = self.default_factory()
        self._place(p, new, raw, marked=True)
        return new

    def _convert(self, p: Any, raw: Any) -> dict | None:
        """The Optax state ``raw`` as torch's dict of it (None: torch keeps none)."""
        group = None if raw is _NONE else self._group(p)
        new = None if group is None else self._opt._torch_entry(group, p, raw)
        return new or None

    def _place(self, p: Any, entry: Any, raw: Any, marked: bool) -> None:
        """Add ``p``'s ``entry`` where torch's dict holds it: after the states
        made before it, added first (torch adds a parameter at its first step,
        or when first asked for); ``marked``: made here, not the user's."""
        if not _has(self, p):
            states = self._opt._optax_states
            for q in states:  # those made before p (all, where p has none)
                if q is p:
                    break
                if not _has(self, q):
                    made = self._convert(q, states[q])
                    if made is not None:
                        _set(self, q, made)
                        self._made[q] = (states[q], _marks(made))
        _set(self, p, entry)
        self._made[p] = (raw, _marks(entry) if marked and type(entry) is dict else None)

    def _fill(self) -> None:
        """Add every parameter torch keeps a state for, each up to date: what a
        Python-level read of the whole mapping does first."""
        for p in self._opt._optax_states:
            self._show(p, add=False)

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

    def held(self) -> bool:
        """Whether any dict was handed out (so a step has edits to look for)."""
        return _len(self) > 0

    def __getitem__(self, p: Any) -> Any:
        return self._show(p, add=True)  # torch: defaultdict(dict)

    def __missing__(self, p: Any) -> Any:
        return self[p]

    def get(self, p: Any, default: Any = None) -> Any:
        out = self._show(p, add=False)
        return default if out is None and not _has(self, p) else out

    def __contains__(self, p: object) -> bool:
        return _has(self, p) or self._show(p, add=False) is not None

    def __iter__(self) -> Iterator:
        self._fill()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator:
        self._fill()
        return dict.__reversed__(self)

    def __len__(self) -> int:
        self._fill()
        return _len(self)

    def keys(self) -> Any:
        self._fill()
        return dict.keys(self)

    def values(self) -> Any:
        self._fill()
        return dict.values(self)

    def items(self) -> Any:
        self._fill()
        return dict.items(self)

    def __eq__(self, other: object) -> bool:
        self._fill()
        if isinstance(other, StateView):
            other._fill()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._fill()
        return f"defaultdict({self.default_factory!r}, {dict.__repr__(self)})"

    # -- copies: torch's own type, a defaultdict ---------------------------------------
    def copy(self) -> defaultdict:
        self._fill()
        return defaultdict(self.default_factory, dict.items(self))

    __copy__ = copy

    def __reduce__(self) -> tuple:
        self._fill()
        return (defaultdict, (self.default_factory,), None, None, iter(self.items()))

    def __deepcopy__(self, memo: dict) -> Any:
        self._fill()
        items = dict.items(self)
        opt = memo.get(id(self._opt))
        if opt is None:  # the user's copy of `optimizer.state`: torch's type
            return defaultdict(self.default_factory, copy.deepcopy(list(items), memo))
        # a copy of the optimizer: its own view, of the copied Optax states
        new = memo[id(self)] = StateView(opt)
        new.default_factory = self.default_factory
        dict.update(new, copy.deepcopy(list(items), memo))
        new._made = copy.deepcopy(self._made, memo)
        return new

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        out = defaultdict(self.default_factory, other)
        out.update(self.items())
        return out

    @classmethod
    def fromkeys(cls, iterable: Any, value: Any = None) -> Any:  # type: ignore[override]
        return defaultdict.fromkeys(iterable, value)

    # -- writing -------------------------------------------------------------------
    def __setitem__(self, p: Any, value: Any) -> None:
        self._place(p, value, self._opt._optax_states.get(p, _NONE), marked=False)

    def __delitem__(self, p: Any) -> None:
        if p not in self:
            raise KeyError(p)
        _del(self, p)
        self._made.pop(p, None)
        self._opt._optax_states.pop(p, None)  # torch: made afresh at the next step

    def pop(self, p: Any, *default: Any) -> Any:
        if p not in self:
            if default:
                return default[0]
            raise KeyError(p)
        value = _get(self, p)
        del self[p]
        return value

    def popitem(self) -> tuple:
        self._fill()
        if not _len(self):
            raise KeyError("popitem(): dictionary is empty")
        p = next(dict.__reversed__(self))
        return p, self.pop(p)

    def setdefault(self, p: Any, default: Any = None) -> Any:
        if p in self:
            return _get(self, p)
        self[p] = default
        return default

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        if hasattr(other, "keys"):  # dict.update's rule: keys(), then each item
            other = [(k, other[k]) for k in other.keys()]  # noqa: SIM118
        for p, value in other:
            self[p] = value
        for p, value in kwargs.items():
            self[p] = value

    def __ior__(self, other: Any) -> StateView:
        self.update(other)
        return self

    def clear(self) -> None:
        for p in list(self):
            del self[p]

    # -- the optimizer's side --------------------------------------------------------
    def adopt(self, p: Any, entry: dict, raw: Any) -> None:
        """Hand out ``entry`` as ``p``'s dict, showing the Optax state ``raw``
        (``load_state_dict``: the loaded dict, made anew, its tensors kept)."""
        _set(self, p, entry)
        self._made[p] = (_NONE if raw is None else raw, _marks(entry))

    def detach(self) -> None:
        """Stop following the optimizer (torch: a new ``state`` replaced this
        one): every state it shows made first, then kept as it is, a plain
        ``defaultdict`` of them."""
        self._fill()
        self._opt = _Detached()

    def sync(self) -> None:
        """Load the dicts edited since they were made back into the Optax states
        (as ``load_state_dict`` would): before a step reads them."""
        if not _len(self):
            return
        states = self._opt._optax_states
        for p, entry in dict.items(self):
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
        if not _len(self):
            return
        states = self._opt._optax_states
        for p in params:
            entry = _get(self, p)
            if entry is not None:
                self._refresh(p, entry, states.get(p, _NONE), group)


# the dict's own methods: the storage, as C code reads it, with no refresh
_get = dict.get
_has = dict.__contains__
_set = dict.__setitem__
_del = dict.__delitem__
_len = dict.__len__


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
