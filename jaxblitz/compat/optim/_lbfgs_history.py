"""Blitz 3/4 (update the weights): ``torch.optim.LBFGS``'s curvature pairs, kept
in buffers of ``history_size`` rows.

torch keeps the pairs in Python lists (``old_dirs``, ``old_stps``, ``ro``) that
grow to ``history_size``, and runs the two-loop recursion as a ``dot`` and an
``add_`` per pair. Recorded lazily, each length of the history is another graph,
and so another compiled program, at every iteration until the history is full.
Here the pairs are rows of ``(history_size, numel)`` buffers written at a ring
index, and the two-loop recursion is one call, a ``lax.fori_loop`` over the pairs
held, both with the index and the count as arguments: one program for every
length. torch's lists (and ``al``) are made from the buffers when the state is
read (:meth:`History.export`), and the buffers from lists a loaded state holds
(:meth:`History.adopt`).
"""

from __future__ import annotations

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
        j = (start + count - 1 - k) % size
        a = apart(dot(stps[j], q) * ro[j])  # al[i] = old_stps[i].dot(q) * ro[i]
        q = apart(q + apart(dirs[j] * -a))  # q.add_(old_dirs[i], alpha=-al[i])
        return q, al.at[j].set(a)

    q, al = jax.lax.fori_loop(0, count, newest_first, (apart(-grad), al))
    r = apart(q * h_diag)  # torch.mul(q, H_diag)

    def oldest_first(i, r):
        j = (start + i) % size
        be = apart(dot(dirs[j], r) * ro[j])  # be_i = old_dirs[i].dot(r) * ro[i]
        return apart(r + apart(stps[j] * apart(al[j] - be)))

    return jax.lax.fori_loop(0, count, oldest_first, r), al


def _rows(dirs, stps, ro, al, slots, al_slots):
    """The rows at ``slots`` (oldest first) as torch's lists hold them."""
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
    ``size`` rows; ``lists`` are the list objects torch's state holds, refilled
    from the buffers by :meth:`export` when the state is read."""

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
        self.lists = lists if lists is not None else ([], [], [], None)
        self.shown = True  # the lists show the buffers

    @classmethod
    def adopt(cls, state: dict, size: int) -> History:
        """The history of torch's lists in ``state`` (a loaded one, or none)."""
        lists = tuple(state.get(k) for k in (*_KEYS, "al"))
        if any(v is None for v in lists[:3]):
            return cls(size)
        pairs = len(lists[0])
        history = cls(max(size, pairs), lists)  # type: ignore[arg-type]
        history.count = pairs
        al = lists[3] or []
        while history.al_set < min(len(al), pairs) and al[history.al_set] is not None:
            history.al_set += 1  # (torch sets al's front: one entry per pair)
        if pairs:
            with x64(True):
                bufs = list(_alloc_jit(lists[0][0]._value(), size=history.size))
                for k, rows in enumerate((*lists[:3], al[: history.al_set])):
                    if rows:
                        shape = bufs[k].shape[1:]
                        arrays = [r._value().reshape(shape) for r in rows]
                        bufs[k] = _stack_jit(arrays, size=history.size)
            history.dirs, history.stps, history.ro, history.al = bufs
        return history

    def push(self, y: TensorBase, s: TensorBase, ro: TensorBase, limit: int) -> None:
        """torch's ``old_dirs.append(y)`` (the oldest pair popped first where
        ``limit`` pairs are held), with ``s`` and ``ro`` beside it."""
        with x64(True):
            if self.dirs is None:
                bufs = _alloc_jit(y._value(), size=self.size)
                self.dirs, self.stps, self.ro, self.al = bufs
            if self.count >= limit:  # torch: old_dirs.pop(0), then append
                slot, self.start = self.start, (self.start + 1) % self.size
            else:
                slot = (self.start + self.count) % self.size
                self.count += 1
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
        """Fill torch's lists from the buffers (the same list objects)."""
        if self.shown:
            return
        slots = np.array(
            [(self.start + i) % self.size for i in range(self.count)], np.int64
        )
        al_slots = slots[: self.al_set]
        with x64(True):
            rows = _rows_jit(self.dirs, self.stps, self.ro, self.al, slots, al_slots)
        dirs, stps, ro, al = ([TensorBase._wrap(a) for a in part] for part in rows)
        self.lists[0][:] = dirs
        self.lists[1][:] = stps
        self.lists[2][:] = ro
        if self.lists[3] is not None:
            self.lists[3][: len(al)] = al
        self.shown = True

    def make_al(self, length: int) -> list:
        """torch's ``state["al"] = [None] * history_size``."""
        self.lists = (*self.lists[:3], [None] * length)
        return self.lists[3]
