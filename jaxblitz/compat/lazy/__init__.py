"""Blitz 1-4 under compat: lazy execution (PyTorch/XLA's LazyTensor, over JAX).

In lazy mode compat records its work instead of running it. Every compiled call
compat makes (an op's forward, a backward node, an optimizer update, a write
through a view) goes through :func:`jit`; while lazy, the call is checked (its
output shapes and dtypes come from ``jax.eval_shape``, so shape and dtype
errors are raised at the op, as in eager mode) and appended to the pending
graph, and its outputs are :class:`LazyArray` placeholders. A *sync point* --
anything that needs a value on the host (``.item()``, ``print``, ``.numpy()``,
``bool(t)``, a value-dependent shape, ``torch.save``) or an explicit
:func:`sync` -- runs every pending call as **one** jitted program and gives
each placeholder that is still referenced its value.

The program is cached by the graph's structure: the recorded calls (function,
static arguments, input shapes and dtypes, which earlier output feeds which
input) and which outputs are still alive -- never values. A training loop
records the same calls every step, so it compiles once and then reuses the
program: PyTorch/XLA's ``mark_step`` without a ``mark_step``.

Values: the program calls the very same jitted functions, inlined into one XLA
program, and XLA may fuse across them, which can move a value's last bits (within
the differential suite's tolerances; the same bits run to run). On the CPU, where
lazy mode is the opt-in and eager mode's bits are the reference, every float a
call hands to a later call crosses as eager mode's programs receive their
inputs: XLA sees nothing of how it was made, and fuses none of the call that
made it into the call that reads it, so each call is compiled as eager mode
compiles it (no FMA across calls, no rewrite for a gradient's zeros, no input
computed again inside a matrix product). On a GPU or TPU the program fuses
freely: the guard's extra kernels cost more than the last bit is worth (see
BENCHMARKS.md).

The switch: by default (``auto``) compat is lazy where JAX's default backend is
a GPU or TPU, where one program a step saves a launch per op, and eager on the
CPU, where XLA runs each program on the calling thread and one program a step
gains nothing. ``JAXBLITZ_COMPAT_LAZY=1`` / ``0`` / ``auto`` before the first
op, or :func:`set_lazy` at any time, choose; eager mode (every call runs at
once, errors at the line that made them) is the reference in the tests.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxblitz.compat import _profiling
from jaxblitz.compat.tensor import _dtype, _meta

__all__ = [
    "LazyArray",
    "at_once_where_known",
    "check",
    "is_lazy",
    "jit",
    "metrics",
    "set_lazy",
    "sync",
]

# A loop that never reads a value still runs: the pending graph is flushed when it
# holds this many calls, before the next call that is the call it began with (so a
# loop's graphs begin at the same point of the loop and repeat one program), or at
# twice this many.
MAX_PENDING = 256

_state = threading.local()
_lock = threading.RLock()
_SWITCH = "JAXBLITZ_COMPAT_LAZY"
# JAXBLITZ_COMPAT_LAZY_WHY=1: count the user's lines that asked for values, and
# name the compat line beside the user's for an error found at the sync point.
_WHY = [bool(os.environ.get("JAXBLITZ_COMPAT_LAZY_WHY"))]


def _from_environment() -> bool | None:
    """``JAXBLITZ_COMPAT_LAZY``: 1 lazy, 0 eager; unset or ``auto``: None,
    decided at the first call by JAX's default backend (:func:`is_lazy`)."""
    value = os.environ.get(_SWITCH, "auto").strip().lower()
    if value in ("", "auto"):
        return None
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(
        f"{_SWITCH}={os.environ[_SWITCH]!r}: expected 1 (lazy), 0 (eager) or auto "
        "(lazy on a GPU or TPU, eager on the CPU)"
    )


_enabled: list = [_from_environment()]  # None: auto, not decided yet


def set_lazy(flag: bool | str = True) -> None:
    """Switch compat between lazy (record, run at sync points) and eager (run
    each call at once) execution; ``"auto"``: lazy where JAX's default backend
    is a GPU or TPU, eager on the CPU (the default). Pending work runs first."""
    if isinstance(flag, str) and flag != "auto":
        raise ValueError(f"set_lazy({flag!r}): expected True, False or 'auto'")
    sync()
    _enabled[0] = None if flag == "auto" else bool(flag)


def is_lazy() -> bool:
    """Whether compat records its work (True) or runs each call at once."""
    mode = _enabled[0]
    return _decide() if mode is None else mode


# Threads inside at_once_where_known (its count: 0, the common case, is checked
# first; the thread's own depth is in _state.at_once)
_AT_ONCE = [0]


@contextlib.contextmanager
def at_once_where_known() -> Any:
    """Inside, while lazy, a call whose inputs are all known runs at once (as
    eager mode runs it) and one with a pending input is recorded: torch's checks
    of values that compat makes with its ops (a distribution's parameters in
    their support) then raise at the op where the values are known, and at the
    next sync where they are pending, with no pending work run early."""
    depth = getattr(_state, "at_once", 0)
    _state.at_once = depth + 1
    with _lock:
        _AT_ONCE[0] += 1
    try:
        yield
    finally:
        _state.at_once = depth
        with _lock:
            _AT_ONCE[0] -= 1


def _known(args: tuple, kwargs: dict) -> bool:
    """Whether this thread runs known calls at once and no input is pending."""
    if not getattr(_state, "at_once", 0):
        return False
    return not any(pending(v) for v in jax.tree.leaves((args, kwargs)))


def _decide() -> bool:
    """The automatic choice, made once: lazy where one program per step saves
    launches (a GPU or TPU), eager on the CPU, where XLA runs a program on the
    calling thread and one per step gains nothing (BENCHMARKS.md)."""
    _enabled[0] = jax.default_backend() != "cpu"
    return _enabled[0]


class _Counts(dict):
    def __missing__(self, key):
        return 0


_metrics = _Counts()  # calls, syncs, compiles, executes, reasons of syncs


def metrics(reset: bool = False) -> dict:
    """What the engine did: calls recorded, syncs (graphs run), compiles (cache
    misses), cache hits, inputs donated (buffers the program reused), calls run
    eagerly (inside a trace), and why it synced
    (the line of user code that asked for a value, counted)."""
    out = dict(_metrics)
    if reset:
        _metrics.clear()
    return out


class LazyArray:
    """A value that a pending call will compute: its shape and dtype now, its
    elements at the next sync point. Anything else asked of it syncs."""

    __slots__ = (
        "sig", "shape", "dtype", "weak_type", "value", "graph", "index",
        "committed", "where", "__weakref__",
    )  # fmt: skip

    def __init__(self, sig, graph, index, committed, where):
        self.sig, self.graph, self.index = sig, graph, index  # sig: shape, dtype, weak
        # read on every op that takes it: slots, not properties of sig
        self.shape, self.dtype, self.weak_type = sig
        self.value = None
        self.committed = committed  # as jit's output would be: any input was
        self.where = where  # the sharding of its deciding (or first) array input

    def devices(self) -> set:
        if self.where is None:
            return self.force().devices()
        return self.where.device_set

    @property
    def sharding(self) -> jax.sharding.Sharding:
        if self.where is not None and len(self.where.device_set) == 1:
            return self.where
        return self.force().sharding

    ndim = property(lambda self: len(self.sig[0]))
    size = property(lambda self: math.prod(self.sig[0]))

    def force(self) -> jax.Array:
        if self.value is None:
            _sync(self.graph, "a value was read")
        return self.value

    def __array__(self, dtype=None, copy=None):
        out = np.asarray(self.force())
        return out if dtype is None else out.astype(dtype)

    def __jax_array__(self):
        return self.force()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.force(), name)

    def __repr__(self) -> str:
        if self.value is not None:
            return repr(self.value)
        return f"LazyArray(shape={self.shape}, dtype={self.dtype}, pending)"

    # Arithmetic records (compat adds gradients with `+`), the rest syncs.
    def __add__(self, other):
        return _binary(_add, self, other)

    def __radd__(self, other):
        return _binary(_add, other, self)

    def __mul__(self, other):
        return _binary(_mul, self, other)

    def __rmul__(self, other):
        return _binary(_mul, other, self)

    def __sub__(self, other):
        return _binary(_sub, self, other)

    def __neg__(self):
        return jit_neg(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]


def _forcing(name: str) -> Callable:
    def method(self, *args):
        return getattr(self.force(), name)(*args)

    method.__name__ = name
    return method


# What Python asks of a value through its type, not __getattr__: computed first.
for _name in (
    "__bool__", "__int__", "__float__", "__complex__", "__index__", "__iter__",
    "__getitem__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__",
    "__matmul__", "__and__", "__or__", "__xor__", "__invert__", "__abs__",
    "__format__", "__hash__",
):  # fmt: skip
    setattr(LazyArray, _name, _forcing(_name))


def spec(x: Any) -> Any:
    """``x``, a pending value as its ``jax.ShapeDtypeStruct`` (to trace with)."""
    if type(x) is LazyArray and x.value is None:
        return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=x.weak_type)
    return concrete(x)


def current(x: Any) -> Any:
    """``x``, or the value of a pending value already computed."""
    return x.value if type(x) is LazyArray and x.value is not None else x


def concrete(x: Any) -> Any:
    """``x``'s value (syncing if pending); anything else as it is."""
    return x.force() if type(x) is LazyArray else x


def _add(x, y):
    return x + y


def _mul(x, y):
    return x * y


def _sub(x, y):
    return x - y


def _forms(sigs: list) -> tuple:
    """Input signatures as (shape, dtype) whether the input is pending or a
    value (their signatures differ: a graph's first call reads values)."""
    forms = []
    for sig in sigs:
        if type(sig) is not tuple:  # a Python scalar's type
            forms.append(sig)
        elif type(sig[0]) is tuple:  # pending (shape, dtype, weak), or NumPy's
            forms.append(sig[:2])
        else:  # a JAX array's (aval, sharding)
            forms.append((sig[0].shape, sig[0].dtype))
    return tuple(forms)


class _Graph:
    """The pending calls since the last sync."""

    def __init__(self):
        # per call: (its jit, (static args, treedef, input signatures), where each
        # input comes from: i >= 0 an earlier call's output i, else input -1 - i)
        self.key: list = []
        self.inputs: list = []  # concrete leaves, in first-use order
        self.input_ids: dict[int, int] = {}
        # per JAX array input, by id: (its index, signature, committed, sharding),
        # worked out once however many calls read it (a weight: forward,
        # backward and the optimizer's update)
        self.arrays: dict[int, tuple] = {}
        self.outs: list = []  # weakrefs to each output's LazyArray
        self.done = False  # run (by a sync in any thread): record no more here
        self.place = None  # the devices its committed inputs are on, if any
        self.lines: list = []  # per call, the user's line ((file, line), or _asker's)
        self.step_ends = 0  # returns of backward(), autograd.grad(), optimizer.step()
        self.begun: tuple = ()  # the first call's jit, static arguments, input forms
        # value checks found at the sync point (:func:`check`): per check, its
        # pending (found, first value found), its error and the user's line
        self.checks: list = []

    def forget(self, first: int) -> None:
        """Drop the inputs from ``first`` on (a call not recorded after all)."""
        for leaf in self.inputs[first:]:
            del self.input_ids[id(leaf)]
            self.arrays.pop(id(leaf), None)
        del self.inputs[first:]

    def input(self, leaf: Any) -> int:
        k = self.input_ids.get(id(leaf))
        if k is None:
            k = self.input_ids[id(leaf)] = len(self.inputs)
            self.inputs.append(leaf)
        return k


# A sharding as a small int for the keys: equal shardings, equal ints. JAX's
# shardings hash and compare in Python, a microsecond each; a recorded call's
# key would pay that for every committed input.
_TOKENS: dict[int, tuple] = {}  # id(sharding) -> (sharding, its int)
_EQUAL: dict = {}  # sharding -> its int


def _token(sharding: Any) -> int:
    known = _TOKENS.get(id(sharding))
    if known is not None and known[0] is sharding:
        return known[1]
    token = _EQUAL.setdefault(sharding, len(_EQUAL))
    if len(_TOKENS) >= 4096:  # shardings are few; the objects carrying them not
        _TOKENS.clear()
    _TOKENS[id(sharding)] = (sharding, token)
    return token


def _current() -> _Graph:
    graph = getattr(_state, "graph", None)
    if graph is None or graph.done:
        graph = _state.graph = _Graph()
    return graph


_ABSENT = object()  # a static argument not passed
_TRACED = object()  # _record's answer for a call on traced values
_META = object()  # _record's answer for a call on meta arrays
# JAX's concrete array type, learnt from the first array recorded: the common
# case then skips the abstract isinstance checks
_ARRAY: list = [None]
# Every distinct call recorded (its jit and (static args, treedef, input
# signatures)), numbered: a graph's key names calls by number, cheap to hash.
_CALLS: list = []
_SCALARS = (int, float, bool, complex)  # jit keys them on their type alone
# NumPy's scalars (an index passed as a program argument): immutable, keyed on
# their dtype as a 0-d array is
_NP_SCALARS = frozenset(
    (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.float32, np.float64)
)
_TREES: dict[int, Any] = {}  # n -> the treedef of ((n leaves), {})
_LEAF = jax.tree.structure(0)  # a call's output that is one array


def _flat(args: tuple) -> list | None:
    """``args`` as a list where each is a leaf JAX keeps as it is (an array, a
    pending value, a Python or NumPy number), else None (a pytree to walk)."""
    array = _ARRAY[0]
    for v in args:
        kind = type(v)
        if not (
            kind is LazyArray
            or kind is array
            or kind in _SCALARS
            or kind is np.ndarray
            or kind in _NP_SCALARS
        ):
            return None
    return list(args)


class jit:  # noqa: N801 -- used as jax.jit is
    """``jax.jit(fun, static_argnames=...)`` whose calls are recorded while lazy.

    Static arguments must be passed by keyword. A call is run at once where
    eager, inside a JAX trace (``torch.compile``), or where x64 is off.
    """

    def __init__(self, fun: Callable, static_argnames: tuple[str, ...] = ()):
        self.fun = fun
        self.static_argnames = tuple(static_argnames)
        self.jitted = jax.jit(fun, static_argnames=self.static_argnames)
        self._avals: dict = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        mode = _enabled[0]
        if not (_decide() if mode is None else mode):
            try:
                return self.jitted(*args, **kwargs)
            except (TypeError, ValueError):
                # values made while lazy, held since (an optimizer's state): as
                # arrays (checked only on failure: eager calls pay nothing)
                leaves = jax.tree.leaves((args, kwargs))
                if _meta.has_meta(leaves):  # meta operands: shapes, no values
                    return self.meta(args, kwargs, leaves)
                if not any(type(v) is LazyArray for v in leaves):
                    raise
                return self.eager(*args, **kwargs)
        if _AT_ONCE[0] and _known(args, kwargs):
            return self.eager(*args, **kwargs)
        return self.record(args, kwargs)

    def eager(self, *args: Any, **kwargs: Any) -> Any:
        """Run now, whatever the mode (pending inputs sync first)."""
        args, kwargs = jax.tree.map(concrete, (args, kwargs))
        try:
            return self.jitted(*args, **kwargs)
        except TypeError:
            leaves = jax.tree.leaves((args, kwargs))
            if not _meta.has_meta(leaves):
                raise
            return self.meta(args, kwargs, leaves)

    def meta(self, args: tuple, kwargs: dict, leaves: list) -> Any:
        """The call on meta operands: its outputs' shapes and dtypes as meta
        arrays, from the function run abstractly; nothing runs or is recorded."""
        return _meta.call(self.fun, args, dict(kwargs), self.static_argnames, leaves)

    def record(self, args: tuple, kwargs: dict) -> Any:
        static = tuple([kwargs.pop(k, _ABSENT) for k in self.static_argnames])
        leaves = _flat(args) if not kwargs else None
        if leaves is None:
            leaves, treedef = jax.tree.flatten((args, kwargs))
        else:  # positional leaves only (compat's own calls): no pytree walk
            treedef = _TREES.get(len(leaves))
            if treedef is None:
                treedef = _TREES[len(leaves)] = jax.tree.structure((args, {}))
        if jax.config.jax_enable_x64:
            with _lock:
                out = self._record(static, leaves, treedef)
            if out is not _TRACED:
                if out is _META:  # meta operands: nothing recorded
                    kwargs.update(
                        (k, v)
                        for k, v in zip(self.static_argnames, static, strict=True)
                        if v is not _ABSENT
                    )
                    return self.meta(args, kwargs, leaves)
                return out
        # inside a trace (torch.compile), or outside compat's x64 ops: now
        _metrics["eager calls"] += 1
        args, kwargs = jax.tree.unflatten(treedef, [concrete(v) for v in leaves])
        return self.jitted(*args, **kwargs, **self._static(static))

    def _record(self, static: tuple, leaves: list, treedef: Any) -> Any:
        graph = _current()
        refs, sigs, committed, where = [], [], False, None
        first, arrays = len(graph.inputs), graph.arrays
        for v in leaves:
            kind = type(v)
            if kind is LazyArray:
                if v.value is not None:
                    v = v.value
                    kind = type(v)
                elif v.graph is not graph:  # pending in another thread's graph
                    v = v.force()
                    kind = type(v)
                else:
                    refs.append(v.index)
                    sigs.append(v.sig)
                    if v.committed and not committed:  # a committed one decides
                        committed, where = True, v.where
                    elif where is None:
                        where = v.where
                    continue
            if kind is _ARRAY[0]:
                known = arrays.get(id(v))
                if known is None:
                    c, sharding = v.committed, v.sharding
                    sig = (v.aval, _token(sharding) if c else None)
                    known = arrays[id(v)] = (graph.input(v), sig, c, sharding)
                k, sig, c, sharding = known
                sigs.append(sig)
                refs.append(-1 - k)
                if c and not committed:  # a committed one decides
                    committed, where = True, sharding
                elif where is None:
                    where = sharding
                continue
            if kind in _SCALARS:
                sigs.append(kind)
            elif kind in _NP_SCALARS:
                sigs.append(((), v.dtype, kind))
            elif kind is np.ndarray:  # the caller's array may change before the sync
                v = np.array(v)
                sigs.append((v.shape, v.dtype, kind))
            elif isinstance(v, jax.core.Tracer):  # a trace: run at once, unrecorded
                graph.forget(first)
                return _TRACED
            elif isinstance(v, jax.Array):
                if _ARRAY[0] is None and hasattr(v, "aval"):
                    _ARRAY[0] = kind
                c = v.committed
                sigs.append((v.aval, _token(v.sharding) if c else None))
                if c and not committed:
                    committed, where = True, v.sharding
                elif where is None:
                    where = v.sharding
            elif kind is _meta.MetaArray:  # (a type _flat never passes)
                graph.forget(first)
                return _META
            else:
                sigs.append((np.shape(v), np.result_type(v), kind))
            refs.append(-1 - graph.input(v))
        place = where if committed else None  # what decides the device
        if graph.key and place is not graph.place and place != graph.place:
            # work on another device: what is pending there runs first, as its
            # own program (one program runs on one device)
            graph.forget(first)
            _sync(graph, "work moved to another device")
            return self._record(static, leaves, treedef)
        graph.place = place
        call = (static, treedef, tuple(sigs))
        known = self._avals.get(call)
        if known is None:
            sigs, tree, inexact = self._shapes(leaves, treedef, static)
            known = self._avals[call] = (sigs, tree, len(_CALLS))
            _CALLS.append((self, call, inexact))
        out_sigs, out_tree, call_id = known
        pending = len(graph.key)
        if not pending:
            graph.begun = (self, static, _forms(sigs))
        elif pending >= MAX_PENDING and (
            pending >= 2 * MAX_PENDING or graph.begun == (self, static, _forms(sigs))
        ):  # cut where this graph began in its loop: the next holds the same calls
            graph.forget(first)
            _sync(graph, "the pending graph reached its size cap")
            return self._record(static, leaves, treedef)
        base = len(graph.outs)
        outs = []
        for j, sig in enumerate(out_sigs):
            lazy = LazyArray(sig, graph, base + j, committed, where)
            graph.outs.append(weakref.ref(lazy))
            outs.append(lazy)
        graph.key.append((call_id, tuple(refs)))
        graph.lines.append(_asker() if _WHY[0] else _made_at())
        _metrics["calls"] += 1
        if out_tree is _LEAF:
            return outs[0]
        return jax.tree.unflatten(out_tree, outs)

    def __getattr__(self, name: str) -> Any:  # lower, trace, ...: jax.jit's
        if name == "jitted":
            raise AttributeError(name)
        return getattr(self.jitted, name)

    def _static(self, static: tuple) -> dict:
        return {
            k: v
            for k, v in zip(self.static_argnames, static, strict=True)
            if v is not _ABSENT
        }

    def _shapes(self, leaves, treedef, static):
        """The call's output signatures and tree, and which outputs a program
        keeps apart from the calls that read them (:func:`_inexact`), from one
        trace of it."""
        specs = [
            jax.ShapeDtypeStruct(v.shape, v.dtype, weak_type=v.weak_type)
            if type(v) is LazyArray
            else v
            for v in leaves
        ]
        args, kwargs = jax.tree.unflatten(treedef, specs)
        bound = self._static(static)
        out = jax.eval_shape(
            lambda *a, **k: self.jitted(*a, **k, **bound), *args, **kwargs
        )
        out_leaves, out_tree = jax.tree.flatten(out)
        if out_tree == _LEAF:
            out_tree = _LEAF  # one array out: returned without unflattening
        sigs = [(o.shape, o.dtype, o.weak_type) for o in out_leaves]
        return sigs, out_tree, _inexact(out_leaves)

    def run(self, call: tuple, leaves: list) -> list:
        """The recorded ``call`` on ``leaves`` (inside the graph's program)."""
        static, treedef, _ = call
        args, kwargs = jax.tree.unflatten(treedef, leaves)
        return jax.tree.leaves(self.jitted(*args, **kwargs, **self._static(static)))

    def __repr__(self) -> str:
        return f"compat.lazy.jit({getattr(self.fun, '__name__', self.fun)})"


def _neg(x):
    return -x


jit_neg = jit(_neg)


def _binary(op, x, y):
    return _ops[op](x, y)


_ops = {op: jit(op) for op in (_add, _mul, _sub)}

_programs: dict = {}  # structure -> jitted program


def pending(x: Any) -> bool:
    """Whether ``x`` is a value that pending work will compute (lazy mode)."""
    return type(x) is LazyArray and x.value is None


def _first_found(*arrays: Any, find: Callable, static: tuple) -> tuple:
    """Whether ``find`` marks any element; the first marked element's value and
    its position (in the flattened marks)."""
    marked, values = find(*arrays, **dict(static))
    values = jax.numpy.ravel(jax.numpy.broadcast_to(values, marked.shape))
    marked = jax.numpy.ravel(marked)
    if not marked.size:
        zero = jax.numpy.zeros((), jax.numpy.int64)
        return jax.numpy.zeros((), bool), jax.numpy.zeros((), values.dtype), zero
    first = jax.numpy.argmax(marked)
    return jax.numpy.any(marked), values[first], first


_checker = jit(_first_found, static_argnames=("find", "static"))


def check(
    find: Callable, arrays: list, error: Callable[[Any, int], Exception], **static: Any
) -> None:
    """A check of values that are pending, made where they are computed:
    ``find(*arrays, **static)`` returns a boolean array marking the elements that
    are wrong and an array (of its shape, or broadcast to it) of the values to
    name; it is recorded with the work, and at the next sync point, if it marked
    any, ``error(first marked value, its position in the flattened marks)`` is
    raised there, naming the user's line
    that recorded it (as PyTorch's asynchronous CUDA asserts surface late).
    ``find`` must be a module-level function (it keys the program); ``static``
    hashable. Values already known are checked at once."""
    with _dtype.x64(True):  # as compat's calls run (call_x64)
        found, value, where = _checker(
            *arrays, find=find, static=tuple(sorted(static.items()))
        )
    if pending(found):
        graph = found.graph
        graph.checks.append((found, (value, where), error, graph.lines[-1]))
    elif bool(found):
        raise error(np.asarray(value).item(), int(where))


def _raise_found(graph: _Graph) -> None:
    """Raise the first of ``graph``'s checks that found a wrong value."""
    checks, graph.checks = graph.checks, []
    founds = jax.device_get([found.value for found, _, _, _ in checks])
    for (_, (value, where), error, line), bad in zip(checks, founds, strict=True):
        if bad:
            e = error(np.asarray(value.value).item(), int(where.value))
            made = "" if line is None else f" at {_where(line)}"
            raise type(e)(
                f"{e} (found when compat's pending work ran: the op was recorded"
                f"{made}; run with jaxblitz.compat.lazy.set_lazy(False) to raise "
                "it at that line)"
            )


# A compile storm: the pending work has another structure at nearly every sync
# (shapes that vary from step to step, or values read at varying places), so
# nearly every sync compiles a program that no later sync runs again. When
# STORM_SHARE of the last STORM_SYNCS syncs compiled, a warning says so (once a
# process), with the time spent. JAXBLITZ_COMPAT_LAZY_STORM=N looks at the last N
# syncs instead; 0 never warns.
def _storm_syncs() -> int:
    """``JAXBLITZ_COMPAT_LAZY_STORM``: how many syncs to look at (default 32)."""
    value = os.environ.get("JAXBLITZ_COMPAT_LAZY_STORM", "32").strip() or "0"
    if not value.isdigit():
        raise ValueError(
            f"JAXBLITZ_COMPAT_LAZY_STORM={value!r}: expected a whole number of "
            "syncs to look at (0: never warn of a compile storm)"
        )
    return int(value)


STORM_SYNCS = _storm_syncs()
STORM_SHARE = 0.75
_storm: dict = {"recent": [], "compiles": 0, "seconds": 0.0, "said": False}


def _synced(compiled: bool, seconds: float = 0.0) -> None:
    """Count a sync (``compiled``: it compiled its program, ``seconds`` its
    first run, compile included) and warn once of a compile storm."""
    if _storm["said"] or STORM_SYNCS <= 0:
        return
    recent = _storm["recent"]
    recent.append(compiled)
    if len(recent) > STORM_SYNCS:
        del recent[0]
    if not compiled:
        return
    _storm["compiles"] += 1
    _storm["seconds"] += seconds
    new = sum(recent)
    if len(recent) < STORM_SYNCS or new < STORM_SHARE * STORM_SYNCS:
        return
    _storm["said"] = True
    warnings.warn(
        f"compat's lazy mode compiled a new program at {new} of the last "
        f"{STORM_SYNCS} syncs ({_storm['compiles']} programs, "
        f"{_storm['seconds']:.1f} s with their first runs): the pending work has "
        "had another structure at nearly every sync (shapes that vary from step to "
        "step, such as sequence lengths, or values read at varying places), and "
        "until structures repeat, each compiles as one program. Eager mode runs op "
        "by op without these compiles (jaxblitz.compat.lazy.set_lazy(False), or "
        "JAXBLITZ_COMPAT_LAZY=0); JAXBLITZ_COMPAT_LAZY_WHY=1 and lazy.metrics() "
        "count which lines sync.",
        stacklevel=_user_level(),
    )


def _user_level() -> int:
    """The ``stacklevel`` that names the first frame of the caller's own code
    (outside compat) for a warning issued from here."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


# Same bits as eager mode. Eager mode runs each call as its own program, which
# knows nothing of its inputs but their shapes and reads them from memory. In
# one program XLA sees how a call's inputs were made and compiles the call for
# it: it may fuse a multiply of one call into an add of the next and contract
# the two into an FMA (one rounding: XLA's CPU compiler always allows it, LLVM's
# GPU backends too), rewrite an add of a gradient that is zero but at one
# element (NLLLoss's) into an add at that element alone, after a product it no
# longer contracts, or compute an input again inside the kernel that reads it
# (an optimizer's new weight inside the next backward's matrix product), where
# its own multiply-add is no longer contracted. Each moves a value by an ulp.
# So each float a call hands to a later call comes out of a conditional whose
# branch depends on an argument (:func:`_kept_apart`): the later call is
# compiled as eager mode compiles it, on an input it knows nothing of, read from
# memory.
_UINTS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_ZEROS: list = []  # one zero of each of those, made once


def _exact(place: Any) -> bool:
    """Whether a program placed by ``place`` (a committed input's sharding, or
    None: JAX's default device) keeps products apart (:func:`_opaque`): on the
    CPU, where lazy mode is the opt-in and eager mode's bits are the reference;
    not on a GPU or TPU, where the guard's extra kernels cost more than the last
    bit is worth and the program is free to fuse."""
    if place is None:
        return jax.default_backend() == "cpu"
    return next(iter(place.device_set)).platform == "cpu"


def _zeros() -> tuple:
    if not _ZEROS:
        with _dtype.x64(True):
            _ZEROS.append(
                tuple(jax.device_put(np.zeros((), u)) for u in _UINTS.values())
            )
    return _ZEROS[0]


def _opaque(value: Any, zeros: tuple) -> Any:
    """``value``, bit for bit, through an op XLA cannot see through: its bits
    OR a zero the program receives as an argument (not XOR: ``(x ^ z) ^ z``,
    a value guarded twice, folds to ``x`` in LLVM whatever ``z`` is)."""
    dt = np.dtype(value.dtype)
    if dt.kind == "c":  # each part on its own
        parts = (jax.lax.real(value), jax.lax.imag(value))
        real, imag = (_opaque(part, zeros) for part in parts)
        return jax.lax.complex(real, imag)
    if dt.itemsize not in _UINTS:
        return value
    uint = _UINTS[dt.itemsize]
    zero = zeros[list(_UINTS).index(dt.itemsize)]
    bits = jax.lax.bitcast_convert_type(value, uint) | zero
    return jax.lax.bitcast_convert_type(bits, dt)


def apart_zeros(arrays: list) -> tuple:
    """What :func:`apart` needs, for one call that runs what would be several
    recorded calls (a whole backward pass: :mod:`jaxblitz.compat.autograd.fused`)
    on ``arrays``: the zeros to pass it as arguments where a program on them
    keeps products apart (:func:`_exact`; the first committed array decides, as
    in :meth:`jit._record`), else () (on a GPU or TPU, or inside a trace)."""
    if any(isinstance(a, jax.core.Tracer) for a in arrays):
        # inside a trace (torch.compile's one program, free to fuse): no guard,
        # and no device zeros captured as the trace's constants
        return ()
    place = None
    for a in arrays:
        kind = type(a)
        if kind is LazyArray and a.value is not None:
            a = a.value
            kind = type(a)
        if kind is LazyArray:
            if a.committed:
                place = a.where
                break
        elif kind is _ARRAY[0] and a.committed:
            place = a.sharding
            break
    return _zeros() if _exact(place) else ()


def apart(fun: Callable, zeros: tuple, *args: Any) -> list:
    """``fun(*args)``'s outputs (a list of arrays, inside a trace), each float
    kept apart from what reads it as a program keeps those of a recorded call
    of ``fun`` (:func:`_opaque`), so that one call running what would be several
    recorded calls gives their bits. With no ``zeros`` (:func:`apart_zeros`:
    not on the CPU), as they are."""
    outs = jax.tree.leaves(fun(*args))
    if not zeros:
        return outs
    return _kept_apart(outs, _inexact(outs), zeros)


def _kept_apart(outs: list, kept: list, zeros: tuple) -> list:
    """``outs``, those ``kept`` handed on as a program of their own would hand
    them: out of a branch XLA cannot tell from the other, one returning them as
    they are, the other through :func:`_opaque` (the branch taken depends on an
    argument, a zero). XLA then knows nothing of their elements, computes each
    once, where the call computes it, and fuses none of the call's ops into the
    ops that read them."""
    chosen = [v for v, k in zip(outs, kept, strict=True) if k]
    chosen = jax.lax.cond(
        zeros[1] == 0,
        lambda vs: vs,
        lambda vs: [_opaque(v, zeros) for v in vs],
        chosen,
    )
    it = iter(chosen)
    return [next(it) if k else v for v, k in zip(outs, kept, strict=True)]


def _inexact(outs: list) -> tuple[bool, ...]:
    """Per output (``outs``: values or shapes), whether a program keeps it apart
    from the calls that read it (:func:`_kept_apart`): a float or complex value.
    Integers need no guard: what XLA makes of them is exact."""
    return tuple(jax.numpy.issubdtype(o.dtype, jax.numpy.inexact) for o in outs)


def _program(key: tuple) -> Callable:
    calls, live, donate, count, exact = key
    kept = [k for k in range(count) if k not in set(donate)]
    # the values a later call reads: those are kept apart (an output read by
    # no call leaves the program as XLA writes it)
    read = {i for _, refs in calls for i in refs if i >= 0} if exact else set()

    def program(donated, rest, zeros):
        inputs: list = [None] * count
        for k, v in zip(donate, donated, strict=True):
            inputs[k] = v
        for k, v in zip(kept, rest, strict=True):
            inputs[k] = v
        values: list = []
        for call_id, refs in calls:
            fn, call, inexact = _CALLS[call_id]
            leaves = [values[i] if i >= 0 else inputs[-1 - i] for i in refs]
            base = len(values)
            outs = fn.run(call, leaves)
            apart_ = [f and base + j in read for j, f in enumerate(inexact)]
            values.extend(_kept_apart(outs, apart_, zeros) if any(apart_) else outs)
        return [values[i] for i in live]

    return jax.jit(program, donate_argnums=0)


# An input array nothing else refers to (the graph's list and getrefcount's
# argument: 2) can be read by no one after the sync: its buffer is given to the
# program (donated) where an output of its shape and dtype can take it over, as
# an optimizer step's new parameters take over the old ones'.
_UNREFERENCED = 2


def _donatable(inputs: list, lazies: list) -> tuple[int, ...]:
    free: dict = {}
    for lazy in lazies:
        sig = lazy.sig[:2]
        free[sig] = free.get(sig, 0) + 1
    donate = []
    for k in range(len(inputs)):
        v = inputs[k]
        if (
            not isinstance(v, jax.Array)
            or sys.getrefcount(inputs[k]) > _UNREFERENCED + 1
        ):
            continue  # (+1: the name v)
        sig = (v.shape, v.dtype)
        if free.get(sig, 0):
            free[sig] -= 1
            donate.append(k)
    return tuple(donate)


def sync() -> None:
    """Run all pending work now (``torch.cuda.synchronize()`` calls it too)."""
    graph = getattr(_state, "graph", None)
    if graph is not None and graph.key:
        _sync(graph, "sync()")


# A loop that reads no value each step (it prints every 100 steps, or never) is cut
# at its steps' ends: the pending work runs once it spans this many returns of
# ``backward()``, ``autograd.grad()`` or ``optimizer.step()``. Every later program
# then holds the same steps and reuses one compiled program, and each stays small:
# XLA's compile time grows faster than a program's length where a step's state
# feeds the next.
STEP_ENDS = 3


def step_end() -> None:
    """Mark the end of ``backward()``, ``autograd.grad()`` or ``optimizer.step()``
    (a step boundary, PyTorch/XLA's ``mark_step`` made automatic); see
    :data:`STEP_ENDS`."""
    graph = getattr(_state, "graph", None)
    if graph is None or graph.done or not graph.key:
        return
    graph.step_ends += 1
    if graph.step_ends >= STEP_ENDS:
        _sync(graph, "steps ended with no value read")


_PACKAGE = str(Path(__file__).parent.parent)  # jaxblitz/compat
_ENGINE = (str(Path(__file__).parent), str(Path(_PACKAGE) / "_tensor_base.py"))
MAX_PROGRAMS = 256  # structures kept compiled (oldest dropped first)


def _made_at() -> tuple | None:
    """(file, line) of the user's code making the call being recorded: the first
    frame outside compat, found without building a traceback, kept for an error
    the program raises at the sync point."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_PACKAGE):
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def _where(line: Any) -> str:
    if type(line) is tuple:
        return f"{Path(line[0]).name}:{line[1]}"
    return str(line)


def _asker() -> str:
    """``user.py:12 via compat/ops/__init__.py:34``: the user's line that asked for a
    value, and the compat line that needed it (``JAXBLITZ_COMPAT_LAZY_WHY=1``)."""
    inner = None
    for frame, lineno in traceback.walk_stack(None):
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE):
            where = f"{Path(filename).name}:{lineno}"
            return where if inner is None else f"{where} via {inner}"
        if inner is None and not filename.startswith(_ENGINE):
            inner = f"{Path(filename).relative_to(_PACKAGE)}:{lineno}"
    return inner or "compat"


def _sync(graph: _Graph, reason: str) -> None:
    if _profiling.on and not graph.done and graph.key:  # its own profiler event
        _profiling.quiet("compat::sync", _sync, graph, reason)
        return
    with _lock:
        if getattr(_state, "graph", None) is graph:
            _state.graph = None
        if graph.done or not graph.key:
            return
        graph.done = True
        live, lazies = [], []
        for i, ref in enumerate(graph.outs):
            lazy = ref()
            if lazy is not None and lazy.value is None:
                live.append(i)
                lazies.append(lazy)
        _metrics["syncs"] += 1
        if _WHY[0]:
            _metrics[f"sync at {_asker()}: {reason}"] += 1
        donate = _donatable(graph.inputs, lazies)
        _metrics["donated"] += len(donate)
        exact = _exact(graph.place)
        key = (tuple(graph.key), tuple(live), donate, len(graph.inputs), exact)
        program = _programs.get(key)
        fresh = program is None
        if fresh:
            _metrics["compiles"] += 1
            if len(_programs) >= MAX_PROGRAMS:
                del _programs[next(iter(_programs))]
            program = _programs[key] = _program(key)
        else:
            _metrics["cache hits"] += 1
            _synced(False)
        try:
            inputs, chosen = graph.inputs, set(donate)
            donated = [inputs[k] for k in donate]
            rest = [v for k, v in enumerate(inputs) if k not in chosen]
            with _dtype.x64(True):  # uncommitted inputs: on the CPU, as torch's
                if fresh:  # compiles: a donation XLA could not use costs
                    start = time.perf_counter()
                    with warnings.catch_warnings():  # nothing but this warning
                        warnings.filterwarnings("ignore", "Some donated buffers")
                        values = program(donated, rest, _zeros())
                    _synced(True, time.perf_counter() - start)
                else:
                    values = program(donated, rest, _zeros())
        except Exception as e:  # noqa: BLE001 -- named below, then re-raised
            raise _located(graph, e) from e
        for lazy, value in zip(lazies, values, strict=True):
            lazy.value = value
            lazy.graph = None
        if graph.checks:
            _raise_found(graph)


def _located(graph: _Graph, error: Exception) -> Exception:
    """``error`` of a graph's program, naming the recorded call that raises it
    when run alone (each pending call is run again, one program each)."""
    if any(isinstance(v, jax.Array) and v.is_deleted() for v in graph.inputs):
        # inputs handed to the program (donated) are gone: nothing to run again
        return type(error)(
            f"{error} (in compat's pending work of {len(graph.key)} calls, run as "
            "one program; run with jaxblitz.compat.lazy.set_lazy(False) to raise "
            "it at the line that made it)"
        )
    values: list = []
    with _dtype.x64(True):
        for n, (call_id, refs) in enumerate(graph.key):
            fn, call, _ = _CALLS[call_id]
            leaves = [values[i] if i >= 0 else graph.inputs[-1 - i] for i in refs]
            try:
                values.extend(fn.run(call, leaves))
            except Exception as e:  # noqa: BLE001
                static = dict(zip(fn.static_argnames, call[0], strict=True))
                what = static.get("fn", fn.fun)
                name = getattr(what, "__name__", repr(what))
                line = graph.lines[n] if n < len(graph.lines) else None
                made = "" if line is None else f", made at {_where(line)}"
                return type(e)(
                    f"{e} (in compat's pending work: call {n + 1} of "
                    f"{len(graph.key)}, {name}{made}; run with jaxblitz.compat.lazy"
                    ".set_lazy(False) to raise it at that line)"
                )
    return error
