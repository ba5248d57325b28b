"""Blitz 4, "Train the network", as a pure function: the compat state swapped out.

The functionalisation behind :func:`jaxblitz.compat.compile`. Everything a torch
training step reads and writes -- module parameters and buffers, their ``.grad``,
optimizer state and hyperparameters, the global generator's key and the step's
input tensors -- is gathered into pytrees of arrays (:class:`Frame`). While
``jax.jit`` traces the step, the *same* compat objects hold tracers instead
(:meth:`Frame.swapped`), so the tape, ``backward()`` and ``optimizer.step()`` run
unchanged; what they leave behind is returned from the program
(:meth:`Frame.collect`) and written back after each call (:meth:`Frame.write_back`).

Structure -- which tensors, shapes, dtypes, ``requires_grad``, train/eval flags,
grad mode -- is the cache key; values are program inputs.
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.optim.optimizer import with_hyper as _with_hyper
from jaxblitz.compat.tensor import Tensor, _dtype, creation
from jaxblitz.compat.tensor._tensor_base import _from_numpy_copy, _Storage


class GradRead(Exception):
    """A step read a ``.grad`` it did not set itself (no ``zero_grad()`` first)."""


_UNSET = object()


class _GradStandIn(_Storage):
    """The storage of a stand-in ``.grad``: reading it raises :class:`GradRead`."""

    __slots__ = ()

    @property
    def pending(self):
        value = _Storage.pending.__get__(self)
        if value is _UNSET:
            raise GradRead
        return value

    @pending.setter
    def pending(self, value):
        _Storage.pending.__set__(self, value)


def _array(storage: _Storage) -> jax.Array:
    return storage.array if storage.numpy is None else _from_numpy_copy(storage.numpy)


def _owned(storage: _Storage) -> jax.Array:
    """The storage's array, safe to donate: a copy unless the storage is exclusive.

    compat shares arrays between storages (copy_, load_state_dict, .data = ...) and
    hands them out (torch.functional), and a donated array is deleted: only one
    that a program wrote and nothing has read since is donated as it is.
    """
    if storage.numpy is not None:
        return _from_numpy_copy(storage.numpy)
    if storage.exclusive:
        return storage.array
    return jax.numpy.array(storage.array, copy=True)


def _store(storage: _Storage, array: jax.Array) -> None:
    """Write a program's output (a fresh array, held by nothing else) back."""
    n = storage.numpy
    if n is not None and n.shape == array.shape and n.dtype == array.dtype:
        n[...] = np.asarray(array)  # shared with NumPy: write through, as eager does
    else:
        storage.array, storage.numpy, storage.exclusive = array, None, True


def _kept(out: Any) -> bool:
    # `()` in the program's outputs: the step left this piece as it was.
    return type(out) is tuple and not out


def _spec(t: Tensor) -> tuple:
    s = t._s
    a = s.array if s.numpy is None else s.numpy
    return a.shape, a.dtype, t.requires_grad_flag, t._view, t._as


class Frame:
    """One call's compat state: the key, the program inputs, and the write-back."""

    def __init__(self, modules: list, optimizers: list, args: tuple, kwargs: dict):
        self.optimizers = optimizers
        self.leaves, self.treedef = jax.tree.flatten((args, kwargs))
        tensors: list[Tensor] = []
        index: dict[int, int] = {}

        def track(t: Tensor) -> int:
            if id(t) not in index:
                index[id(t)] = len(tensors)
                tensors.append(t)
            return index[id(t)]

        subs = [sub for m in modules for sub in m.modules()]
        for sub in subs:
            for store in (sub._parameters, sub._buffers):
                for t in store.values():
                    if t is not None:
                        track(t)
        groups = tuple(
            tuple(tuple(track(p) for p in g["params"]) for g in opt.param_groups)
            for opt in self.optimizers
        )
        n_state = len(tensors)
        leaf_key = []
        for leaf in self.leaves:
            if isinstance(leaf, Tensor):
                leaf_key.append(("T", track(leaf), *_spec(leaf)))
            elif isinstance(leaf, jax.Array | np.ndarray | np.generic):
                leaf_key.append(("A", leaf.shape, leaf.dtype))
            else:
                try:
                    leaf_key.append((type(leaf), leaf, hash(leaf)))
                except TypeError:
                    leaf_key.append(("id", id(leaf)))
        self.tensors = tensors
        self.orig_s = [t._s for t in tensors]
        self.storages: list[_Storage] = []
        sidx: dict[int, int] = {}
        layout = []
        for i, t in enumerate(tensors):
            if i == n_state:
                self.n_donated = len(self.storages)
            if id(t._s) not in sidx:
                sidx[id(t._s)] = len(self.storages)
                self.storages.append(t._s)
            layout.append(sidx[id(t._s)])
        if n_state == len(tensors):
            self.n_donated = len(self.storages)
        self.n_state = n_state
        self.grads = [t.grad for t in tensors]
        self.free_ok = all(
            g is None
            for t, g in zip(tensors, self.grads, strict=True)
            if not t.requires_grad_flag
        )
        statics = tuple(
            (
                id(opt),
                tuple(tuple(g[k] for k in opt._static) for g in opt.param_groups),
                tuple(tuple(opt.derived(g).items()) for g in opt.param_groups),
            )
            for opt in self.optimizers
        )
        self.key = (
            self.treedef,
            tuple(leaf_key),
            tuple(id(t) for t in tensors[:n_state]),
            tuple(_spec(t) for t in tensors[:n_state]),
            tuple(layout),
            groups,
            statics,
            tuple(sub.training for sub in subs),
            is_grad_enabled(),
            _dtype.get_default_dtype(),
        )
        self.grad_mask = tuple(g is not None for g in self.grads)

    # -- program inputs ------------------------------------------------------------
    def inputs(self, free: bool) -> tuple[tuple, tuple]:
        """``(donated, kept)``: state the program consumes, and read-only inputs."""
        arrays = tuple(_owned(s) for s in self.storages[: self.n_donated])
        grads = (
            ()
            if free
            else tuple(None if g is None else _owned(g._s) for g in self.grads)
        )
        self.absent, states = [], []
        for opt in self.optimizers:
            opt._sync_state()  # edits made through `optimizer.state` first
            for group in opt.param_groups:
                params = group["params"]
                self.absent.extend(p not in opt._optax_states for p in params)
                states.extend(opt._states(group, params))
        # state a lazy step made (computed: `compile` syncs first), as arrays
        states = [jax.tree.map(lazy.concrete, st) for st in states]
        # step() sets Optax's injected hyperparameters from the group on every
        # update and never reads the stored ones: they stay out of the program
        # (no input or output buffers) and go back unchanged after the call.
        self.hyper_kept = [getattr(st, "hyperparams", None) for st in states]
        states = [
            st if h is None else _with_hyper(st, None)
            for st, h in zip(states, self.hyper_kept, strict=True)
        ]
        # step() keeps a group's scalar state (step counts) as one array for all
        # its parameters (optim.optimizer._update_shared); a buffer is donated once.
        seen: set[int] = set()

        def once(x: Any) -> Any:
            if id(x) in seen:
                return jax.numpy.array(x, copy=True)
            seen.add(id(x))
            return x

        states = jax.tree.map(once, states)
        hyper = tuple(
            tuple(float(g[k]) for k in opt._hyper.values())
            for opt in self.optimizers
            for g in opt.param_groups
        )
        kept = (
            tuple(_array(s) for s in self.storages[self.n_donated :]),
            tuple(x for x in self.leaves if isinstance(x, jax.Array | np.ndarray)),
            hyper,
            creation.default_generator._key,
        )
        return (arrays, grads, tuple(states)), kept

    # -- inside the trace ----------------------------------------------------------
    @contextlib.contextmanager
    def swapped(self, donated: tuple, kept: tuple, free: bool):
        """Put the tracers into the compat objects; restore the originals after."""
        arrays, grads, states = donated
        input_arrays, leaf_arrays, hyper, key = kept
        saved_storages = [(s.array, s.numpy, s.exclusive) for s in self.storages]
        saved = [(t._s, t._view, t.grad, t._grad_fn) for t in self.tensors]
        saved_states = [dict(opt._optax_states) for opt in self.optimizers]
        saved_groups = [[dict(g) for g in opt.param_groups] for opt in self.optimizers]
        generator = creation.default_generator
        saved_key = generator._key
        grad_storages = [g._s for g in self.grads if g is not None and not free]
        saved_grad_storages = [(s.array, s.numpy, s.exclusive) for s in grad_storages]
        try:
            for s, a in zip(self.storages, (*arrays, *input_arrays), strict=True):
                s.array, s.numpy = a, None
            self.tracers = list(input_arrays)
            for t in self.tensors[self.n_state :]:
                t._grad_fn = None  # the step's inputs are leaves of its graph
            self.stand_ins = [None] * len(self.tensors)
            for i, t in enumerate(self.tensors):
                if free and t.requires_grad_flag:
                    g = Tensor._wrap(None)
                    g._s = _GradStandIn(_UNSET)
                    t.grad = self.stand_ins[i] = g
                elif not free and grads[i] is not None:
                    _Storage.__init__(t.grad._s, grads[i])
            states = [  # dtype-only stand-ins: step() overwrites them from `hyper`
                st
                if h is None
                else st._replace(
                    hyperparams={k: np.zeros((), v.dtype) for k, v in h.items()}
                )
                for st, h in zip(states, self.hyper_kept, strict=True)
            ]
            self.state_in = list(states)
            it = iter(states)
            for opt in self.optimizers:
                for group in opt.param_groups:
                    for p in group["params"]:
                        opt._optax_states[p] = next(it)
            it = iter(hyper)
            for opt in self.optimizers:
                # what the update is built for (SGD: momentum != 0), from the
                # values before the tracers go in, as the program's key has them
                opt._traced_derived = {id(g): opt.derived(g) for g in opt.param_groups}
                for group in opt.param_groups:
                    group.update(zip(opt._hyper.values(), next(it), strict=True))
            generator._key = key
            it = iter(leaf_arrays)
            leaves = [
                next(it) if isinstance(x, jax.Array | np.ndarray) else x
                for x in self.leaves
            ]
            yield jax.tree.unflatten(self.treedef, leaves)
        finally:
            for s, (a, n, e) in zip(self.storages, saved_storages, strict=True):
                s.array, s.numpy, s.exclusive = a, n, e
            for s, (a, n, e) in zip(grad_storages, saved_grad_storages, strict=True):
                s.array, s.numpy, s.exclusive = a, n, e
            for t, (s, view, g, fn) in zip(self.tensors, saved, strict=True):
                t._s, t._view, t.grad, t._grad_fn = s, view, g, fn
            for opt, states_, groups in zip(
                self.optimizers, saved_states, saved_groups, strict=True
            ):
                opt._optax_states.clear()
                opt._optax_states.update(states_)
                opt.__dict__.pop("_traced_derived", None)
                for group, before in zip(opt.param_groups, groups, strict=True):
                    group.update({k: before[k] for k in opt._hyper.values()})
            generator._key = saved_key

    def collect(self, free: bool) -> tuple:
        """What the step left in the compat objects, as the program's outputs."""
        arrays = tuple(s.array for s in self.storages[: self.n_donated])
        inputs = tuple(
            () if s.array is a else s.array
            for s, a in zip(self.storages[self.n_donated :], self.tracers, strict=True)
        )
        replaced = tuple(
            None if t._s is s else (t._s.array, t._view)
            for t, s in zip(self.tensors, self.orig_s, strict=True)
        )
        grads = []
        for i, t in enumerate(self.tensors):
            g = t.grad
            if g is None:
                grads.append(None)
            elif g is self.stand_ins[i]:
                grads.append(())  # untouched stand-in: keep the grad as it was
            elif not free and g is self.grads[i]:
                grads.append({"same": g._data})
            else:
                grads.append({"new": g._data})
        states, it = [], iter(zip(self.state_in, self.absent, strict=True))
        for opt in self.optimizers:
            for group in opt.param_groups:
                for p in group["params"]:
                    state_in, absent = next(it)
                    state = opt._optax_states.get(p)
                    if absent and state is state_in:
                        state = ()
                    elif hasattr(state, "hyperparams"):
                        state = state._replace(hyperparams=None)
                    states.append(state)
        key = creation.default_generator._key
        # Donated inputs pair with outputs of the same shape in order, so the
        # outputs follow the inputs' order (params, optimizer state, ...): the new
        # grads then get fresh buffers instead of the momentum buffers' (copies).
        return arrays, tuple(states), inputs, replaced, tuple(grads), key

    # -- after the call --------------------------------------------------------------
    def write_back(self, out: tuple) -> None:
        arrays, states, inputs, replaced, grads, key = out
        for s, a in zip(self.storages, (*arrays, *inputs), strict=True):
            if not _kept(a):
                _store(s, a)
        for t, r in zip(self.tensors, replaced, strict=True):
            if r is not None:  # `.data = ...` in the step: a storage of its own
                t._s, t._view, t._cache = _Storage(r[0]), r[1], None
                t._s.exclusive = True
        for t, old, g in zip(self.tensors, self.grads, grads, strict=True):
            if g is None:
                t.grad = None
            elif _kept(g):
                continue
            elif "same" in g:  # the step accumulated into the grad it was given
                _store(old._s, g["same"])
            else:
                t.grad = Tensor._wrap(g["new"])
                t.grad._s.exclusive = True
        it = iter(zip(states, self.hyper_kept, strict=True))
        for opt in self.optimizers:
            for group in opt.param_groups:
                for p in group["params"]:
                    state, hyper = next(it)
                    if not _kept(state):
                        if hyper is not None:
                            state = _with_hyper(state, hyper)
                        opt._optax_states[p] = state
                opt._state_view.stepped(group["params"], group)
        creation.default_generator._key = key
