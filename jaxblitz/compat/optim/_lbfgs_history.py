"""Blitz 3/4 (update the weights): ``torch.optim.LBFGS``'s curvature pairs, kept
in buffers of ``history_size`` rows.

torch keeps the pairs in Python lists (``old_dirs``, ``old_stps``, ``ro``) that
grow to ``history_size``, and runs the two-loop recursion as a ``dot`` and an
``add_`` per pair. Recorded lazily, each length of the history is another graph,
and so another compiled program, at every iteration until the history is full.
Here the pairs are rows of ``(history_size, numel)`` buffers written at a ring
index, and the two-loop recursion is one call, a ``lax.fori_loop`` over the pairs
held, both with the index and the count as arguments: one program for every
length. torch's lists (and ``al``) are filled from the buffers when read
(:meth:`History.export`, each pair's tensors made once), and the buffers made from
the lists a loaded (or edited) state holds (:meth:`History.adopt`); they grow
only where the pairs outnumber them (a ``history_size`` changed between steps,
as torch's lists grow then).
"""

from __future__ import annotations

from operator import is_
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase

_KEYS = ("old_dirs", "old_stps", "ro")


def _alloc(y, *, size):
    rows = jnp.zeros((size, *y.shape), y.dtype)
    return rows, rows, jnp.zeros((size,), y.dtype), jnp.zeros((size,), y.dtype)


def _push(dirs, stps, ro, y, s, ro_new, slot):
    # torch: old_dirs.append(y); old_stps.append(s); ro.append(1.0 / ys)
    return dirs.at[slot].set(y), stps.at[slot].set(s), ro.at[slot].set(ro_new)


def _same(x):
    return x


def _two_loop(dirs, stps, ro, al, grad, h_diag, start, count, zeros, *, precision):
    """torch's two-loop recursion over the ``count`` pairs from ring slot
    ``start``; returns the direction and ``al``. Each value torch's ops hand on
    is kept apart (:func:`jaxblitz.compat.lazy.apart`) so that no product is
    contracted into the add that reads it: the bits of eager mode's op-by-op
    calls."""
    size = dirs.shape[0]

    def apart(v):
        return lazy.apart(_same, zeros, v)[0]

    def dot(a, b):
        return apart(jnp.matmul(a, b, precision=precision))

    def newest_first(k, carry):
        q, al = carry
        i = count - 1 - k  # torch's list index; the pair sits at ring slot j
        j = (start + i) % size
        a = apart(dot(stps[j], q) * ro[j])  # al[i] = old_stps[i].dot(q) * ro[i]
        q = apart(q + apart(dirs[j] * -a))  # q.add_(old_dirs[i], alpha=-al[i])
        return q, al.at[i].set(a)

    q, al = jax.lax.fori_loop(0, count, newest_first, (apart(-grad), al))
    r = apart(q * h_diag)  # torch.mul(q, H_diag)

    def oldest_first(i, r):
        j = (start + i) % size
        be = apart(dot(dirs[j], r) * ro[j])  # be_i = old_dirs[i].dot(r) * ro[i]
        return apart(r + apart(stps[j] * apart(al[i] - be)))

    return jax.lax.fori_loop(0, count, oldest_first, r), al


def _rows(dirs, stps, ro, al, slots, al_slots):
    """The rows at ``slots`` (oldest first) and ``al``'s at ``al_slots`` (its
    list indices) as torch's lists hold them."""
    n, m = slots.shape[0], al_slots.shape[0]
    return (
        [dirs[slots[i]] for i in range(n)],
        [stps[slots[i]] for i in range(n)],
        [ro[slots[i]] for i in range(n)],
        [al[al_slots[i]] for i in range(m)],
    )


def _stack(rows, *, size):
    return (
        jnp.zeros((size, *rows[0].shape), rows[0].dtype)
        .at[: len(rows)]
        .set(jnp.stack(rows))
    )


_alloc_jit = lazy.jit(_alloc, static_argnames=("size",))
_push_jit = lazy.jit(_push)
# eagerly, the old buffers are the history's alone: written in place, as torch's
# append is, not copied (history_size rows of the parameters' size) at each push
_push_in_place = jax.jit(_push, donate_argnums=(0, 1, 2))
_two_loop_jit = lazy.jit(_two_loop, static_argnames=("precision",))
_rows_jit = lazy.jit(_rows)
_stack_jit = lazy.jit(_stack, static_argnames=("size",))


def _index(i: int) -> np.int64:
    """``i`` as a program argument of its own: a recorded graph names its inputs
    by identity, and Python's small ints are shared objects, so two indices of
    equal value would make one input, and another graph, where they coincide."""
    return np.int64(i)


class History:
    """torch's ``old_dirs``, ``old_stps``, ``ro`` and ``al`` as ring buffers of
    ``size`` rows (``al`` in its list's order); ``lists`` are the list objects
    torch's state holds, refilled from the buffers by :meth:`export`."""

    def __init__(self, size: int, lists: tuple | None = None):
        self.size = size
        self.dirs: Any = None  # (size, numel) arrays once a pair is pushed
        self.stps: Any = None
        self.ro: Any = None  # (size,)
        self.al: Any = None
        self.start = 0  # the ring slot of the oldest pair
        self.count = 0  # pairs held
        # the entries of torch's al list set (it has none until the first two-loop
        # recursion makes it, [None] * history_size, and then fills its front)
        self.al_set = 0
        self.lists: tuple = lists if lists is not None else ([], [], [], None)
        self.shown = True  # the lists show the buffers
        # a ring slot -> the tensors export made of its pair: a pair keeps its
        # tensors while it is held, as torch's lists keep the pair's tensors
        self.tensors: dict[int, tuple] = {}
        self.exported: tuple = ((), (), ())  # what export put in the three lists

    def held_by(self, state: dict) -> bool:
        """Whether ``state`` holds this history's lists, as export left them
        (a list written to since is the user's edit: the lists are taken as
        they are)."""
        if any(
            state.get(k) is not v for k, v in zip(_KEYS, self.lists[:3], strict=True)
        ):
            return False
        if state.get("al") is not self.lists[3]:
            return False
        return not self.shown or all(
            len(now) == len(was) and all(map(is_, now, was))
            for now, was in zip(self.lists[:3], self.exported, strict=True)
        )

    @classmethod
    def adopt(cls, state: dict, size: int) -> History:
        """The history of torch's lists in ``state`` (a loaded one, edited, or
        none)."""
        lists = tuple(state.get(k) for k in (*_KEYS, "al"))
        if any(v is None for v in lists[:3]):
            return cls(size)
        history = cls(max(size, len(lists[0])), lists)
        history._load()
        return history

    def _load(self) -> None:
        """The buffers, of ``size`` rows, from the lists (oldest pair at row 0)."""
        lists = self.lists
        pairs = len(lists[0])
        self.start, self.count, self.al_set = 0, pairs, 0
        al = lists[3] or []
        while self.al_set < min(len(al), pairs) and al[self.al_set] is not None:
            self.al_set += 1  # (torch sets al's front: one entry per pair)
        self.dirs = self.stps = self.ro = self.al = None
        self.tensors = {}
        if pairs:
            with x64(True):
                bufs = list(_alloc_jit(lists[0][0]._value(), size=self.size))
                for k, rows in enumerate((*lists[:3], al[: self.al_set])):
                    if rows:
                        shape = bufs[k].shape[1:]
                        arrays = [r._value().reshape(shape) for r in rows]
                        bufs[k] = _stack_jit(arrays, size=self.size)
            self.dirs, self.stps, self.ro, self.al = bufs
            self.tensors = dict(enumerate(zip(*lists[:3], strict=True)))
        self.exported = tuple(tuple(v) for v in lists[:3])
        self.shown = True

    def push(self, y: TensorBase, s: TensorBase, ro: TensorBase, limit: int) -> None:
        """torch's ``old_dirs.append(y)``, with ``s`` and ``ro`` beside it, the
        oldest pair popped first where exactly ``limit`` pairs are held (torch's
        ``len(old_dirs) == history_size``: a history longer than a lowered
        ``history_size`` keeps growing)."""
        if self.count == limit:
            if not limit:
                raise IndexError("pop from empty list")  # torch: old_dirs.pop(0)
            self.start, self.count = (self.start + 1) % self.size, self.count - 1
        elif self.count == self.size:  # longer than the buffers: a row added
            self.export()
            self.size = self.count + 1
            self._load()
        with x64(True):
            if self.dirs is None:
                bufs = _alloc_jit(y._value(), size=self.size)
                self.dirs, self.stps, self.ro, self.al = bufs
            slot = (self.start + self.count) % self.size
            self.count += 1
            self.tensors.pop(slot, None)
            bufs = (self.dirs, self.stps, self.ro)
            args = (*bufs, y._value(), s._value(), ro._value(), _index(slot))
            owned = all(
                isinstance(b, jax.Array) and not isinstance(b, jax.core.Tracer)
                for b in bufs
            )
            if owned and not lazy.is_lazy():
                args = tuple(lazy.concrete(a) for a in args)
                self.dirs, self.stps, self.ro = _push_in_place(*args)
            else:
                self.dirs, self.stps, self.ro = _push_jit(*args)
        self.shown = False

    def direction(self, flat_grad: TensorBase, h_diag: Any) -> TensorBase:
        """torch's two-loop recursion: the L-BFGS direction from ``flat_grad``
        (``al`` kept); ``count`` must be positive."""
        precision = _precision.of("matmul", flat_grad, flat_grad)
        if isinstance(h_diag, TensorBase):
            h_diag = h_diag._value()
        with x64(True):
            grad = flat_grad._value()
            zeros = lazy.apart_zeros([grad, self.dirs])
            d, self.al = _two_loop_jit(
                self.dirs, self.stps, self.ro, self.al, grad, h_diag,
                _index(self.start), _index(self.count), zeros, precision=precision,
            )  # fmt: skip
        self.al_set = max(self.al_set, self.count)
        self.shown = False
        return TensorBase._wrap(d)

    def export(self) -> None:
        """Fill torch's lists from the buffers (the same list objects): the
        pairs pushed since the last export made into tensors, the others'
        tensors kept."""
        if self.shown:
            return
        slots = [(self.start + i) % self.size for i in range(self.count)]
        new = np.array([j for j in slots if j not in self.tensors], np.int64)
        al_slots = np.arange(self.al_set, dtype=np.int64)
        with x64(True):
            rows = _rows_jit(self.dirs, self.stps, self.ro, self.al, new, al_slots)
        made = ([TensorBase._wrap(a) for a in part] for part in rows)
        dirs, stps, ro, al = made
        pairs = zip(dirs, stps, ro, strict=True)
        self.tensors.update(zip(new.tolist(), pairs, strict=True))
        self.tensors = {j: self.tensors[j] for j in slots}  # the popped ones gone
        for k, target in enumerate(self.lists[:3]):
            target[:] = [self.tensors[j][k] for j in slots]
        if self.lists[3] is not None:
            self.lists[3][: len(al)] = al
        self.exported = tuple(tuple(v) for v in self.lists[:3])
        self.shown = True

    def make_al(self, length: int) -> list:
        """torch's ``state["al"] = [None] * history_size``."""
        self.lists = (*self.lists[:3], [None] * length)
        return self.lists[3]
