"""Blitz 2, "autograd": the tape behind ``Tensor.backward()``, and a tensor's side
of it (:class:`AutogradMixin`: ``requires_grad``, ``grad_fn``, ``.data``).

Every differentiable op goes through one funnel, :func:`apply`: it runs a pure JAX
function ``fn`` (jitted, cached per ``fn``, static arguments and input
shapes/dtypes) and, when grad mode is on and an input requires grad, records a
:class:`Node` holding the inputs' arrays and their own grad_fns. ``backward()``
walks the nodes in reverse topological order and applies each node's
vector-Jacobian product -- derived by ``jax.vjp`` from that same ``fn`` inside one
jitted call (the forward is recomputed there, which XLA fuses) -- and accumulates
into the leaves' ``.grad``. No derivative is written by hand here.

Every op runs inside ``x64(True)`` (see :mod:`jaxblitz.compat.tensor._dtype`).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import re
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import numpy as np

from jaxblitz.compat import _profiling, lazy
from jaxblitz.compat._eager import _warm
from jaxblitz.compat._not_offered import NotOffered, refused
from jaxblitz.compat.autograd import _dual, anomaly_mode
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled, set_grad_enabled
from jaxblitz.compat.tensor import _dtype, _fresh_layout, _layout
from jaxblitz.compat.tensor._argparse import must_be
from jaxblitz.compat.tensor._dtype import call_x64, x64
from jaxblitz.compat.tensor._fresh_layout import ELEMENTWISE, follow_operands
from jaxblitz.compat.tensor._tensor_base import TensorBase, _from_numpy_copy

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

# ---------------------------------------------------------------------------
# Nodes (grad_fn)
# ---------------------------------------------------------------------------

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


_QUALIFIED = {  # what torch's name() says for its C++ nodes
    "AccumulateGrad": "torch::autograd::AccumulateGrad",
    "CopySlices": "torch::autograd::CopySlices",
}


# Called with each node as it is recorded, innermost last: how
# torch.utils.checkpoint (non-reentrant) finds the nodes of its region and their
# recomputed twins, in recording order (torch packs saved tensors in that order).
observers: list[Callable[[Node], None]] = []

_SEQUENCE = itertools.count()


class Node:
    """A recorded op: ``grad_fn``. Subclassed per torch name (``MulBackward0``)."""

    __slots__ = (
        "fn",
        "static",
        "saved",
        "inputs",
        "mask",
        "retained",
        "checks",
        "hooks",
        "prehooks",
        "posthooks",
        "seq",
        "__weakref__",
    )

    def __lt__(self, other: Node) -> bool:
        """Never: nodes of equal priority in :func:`_topological`'s ready queue
        (``(priority, node)`` entries) compare as equal, as in torch's queue."""
        return False

    def __init__(self, fn, static, saved, inputs, mask):
        self.seq = next(_SEQUENCE)  # torch's sequence_nr: the backward's order
        self.retained = None  # a tensor that called retain_grad()
        self.checks = ()  # what torch would have saved: see `_saved_checks`
        self.hooks = None  # hooks registered on the tensor this node made
        self.prehooks = self.posthooks = None  # grad_fn.register_(pre)hook
        self.fn = fn  # the pure JAX function of the forward, or a vjp callable
        self.static = static  # hashable keyword arguments of fn
        self.saved = saved  # the input arrays (None once freed)
        self.inputs = inputs  # per input: its Node, or None
        self.mask = mask  # per input: whether a gradient flows to it
        for observe in observers:  # (torch.utils.checkpoint's regions)
            observe(self)

    def name(self) -> str:
        name = type(self).__name__
        return _QUALIFIED.get(name, name)

    def register_prehook(self, hook: Callable) -> RemovableHandle:
        """``hook(grad_outputs) -> new grad_outputs or None``, before this node."""
        self.prehooks = hooks = self.prehooks or []
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(grad_inputs, grad_outputs) -> new grad_inputs or None``, after."""
        self.posthooks = hooks = self.posthooks or []
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def __getattr__(self, name: str) -> Any:
        # torch's view of what a node saved: grad_fn._saved_self, _saved_other,
        # _saved_result (and _saved_mat2, _saved_exponent where torch names so).
        if name.startswith("_saved_"):
            role = name.removeprefix("_saved_")
            for check in getattr(self, "checks", ()):
                where = check[6]
                if where is None or _role(type(self).__name__, where[0]) != role:
                    continue
                owner = check[2]() if check[2] is not None else None
                if owner is not None:
                    return owner
                t = TensorBase._wrap(None)
                t._s, t._view = where[1], where[3]
                return t
        if name.startswith("_raw_saved_"):
            raise NotOffered(
                f"{type(self).__name__}.{name} (a SavedTensor, for hooks on saved "
                f"tensors) is not supported by jaxblitz.compat: {_SAVED_HOOKS}"
            )
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((n, 0) for n in self.inputs)

    def apply_vjp(self, grad: jax.Array) -> Sequence[jax.Array | None]:
        saved = self.saved
        if saved is None:
            raise RuntimeError(_FREED)
        if self.checks and not _intact(self):
            _verify(self)
            saved = _current(self)
            result = _edited_result(self)
            if result is not None:  # its output edited through .data: as torch
                return [run(_result_vjp, result, grad, node=type(self).__name__)]
        if _warm.pending:  # its backward compiled on the spare core: wait for it
            _warm.wait_for(self)
        mask = self.mask
        grads = _bwd(*saved, grad=grad, fn=self.fn, static=self.static, mask=mask)
        if all(mask):  # (the usual case: one gradient per input)
            return list(grads)
        it = iter(grads)
        return [next(it) if m else None for m in mask]

    def release(self) -> None:
        # what it saved, and the storages' values it would check them against:
        # nothing keeps a freed graph's arrays alive (lazy mode donates them)
        self.saved = None
        self.checks = ()

    def _vjp_mask(self) -> tuple:
        return self.mask

    def apply_vjp_graph(self, grad: Tensor) -> list:
        """:meth:`apply_vjp` recorded on the tape (``create_graph=True``): each
        input's gradient is a Tensor whose own backward JAX derives from this
        node's VJP, so gradients can be differentiated again."""
        if self.saved is None:
            raise RuntimeError(_FREED)
        saved = self.saved
        if self.checks:
            _verify(self)
            saved = _current(self)
        n = len(self.mask)
        # The history of each input as recorded, not as ``grad(inputs=...)`` cut
        # it for this pass: a gradient still depends on every input it reads.
        nodes = uncut.get(id(self), self.inputs)
        static = self.static
        pre = dict(static).get("_pre")
        if pre:  # each input's gradient Tensor holds that input's own value
            static = tuple(kv for kv in static if kv[0] != "_pre")
            with x64(True):
                saved = [run(_t_fn, a) if i in pre else a for i, a in enumerate(saved)]
        uses = _vjp_uses(self, saved, grad, static)
        args = [
            TensorBase._wrap(a, requires_grad=True, grad_fn=node) if m and u else a
            for a, m, u, node in zip(saved[:n], self.mask, uses, nodes, strict=True)
        ]
        args += saved[n:]
        out, k = [], 0
        for m in self.mask:
            if not m:
                out.append(None)
                continue
            out.append(
                apply(
                    f"{self.name()}Backward",
                    _vjp_fn,
                    *args,
                    grad,
                    of=self.fn,
                    of_static=static,
                    mask=self._vjp_mask(),
                    k=k,
                )
            )
            k += 1
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"  # torch's


# While ``autograd.grad(inputs=...)`` runs on a graph cut to the nodes it needs,
# each cut node's edges as recorded (see Node.apply_vjp_graph).
uncut: dict[int, tuple] = {}


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients to ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(None, (), (), (), ())
        self.variable = variable

    def release(self) -> None:
        pass


class ResidualNode(Node):
    """A node whose forward also saved an intermediate (the last ``saved`` array).

    Its backward is the VJP, derived by JAX, of ``fn(*inputs, residual)``; ``fn``
    reads the residual instead of recomputing it (conv2d: the im2col patches).
    """

    __slots__ = ()

    def _vjp_mask(self) -> tuple:
        return (*self.mask, False)

    def apply_vjp(self, grad: jax.Array) -> Sequence[jax.Array | None]:
        saved = self.saved
        if saved is None:
            raise RuntimeError(_FREED)
        if self.checks and not _intact(self):
            _verify(self)
            saved = _current(self)
        if _warm.pending:  # its backward compiled on the spare core: wait for it
            _warm.wait_for(self)
        mask = self.mask
        grads = _bwd(
            *saved,
            grad=grad,
            fn=self.fn,
            static=self.static,
            mask=(*mask, False),
        )
        if all(mask):  # (the usual case: one gradient per input)
            return list(grads)
        it = iter(grads)
        return [next(it) if m else None for m in mask]


_classes: dict[tuple[str, type[Node]], type[Node]] = {}


def node_class(name: str, base: type[Node] = Node) -> type[Node]:
    cls = _classes.get((name, base))
    if cls is None:
        cls = _classes[name, base] = type(name, (base,), {"__slots__": ()})
    return cls


# ---------------------------------------------------------------------------
# Version checks: what torch saves for backward must not change before it
# ---------------------------------------------------------------------------

# Our nodes keep the input arrays themselves (immutable), so a later in-place op
# could never corrupt a gradient here; torch saves tensors and refuses to use one
# that was modified since. To behave as torch does, each node records the version
# of what torch's node of that name saves (derivatives.yaml): (position saved,
# position that must require grad for it to be saved, or None), and "result".
# The ops declare theirs beside the op (ops._declare.saves, into this table); the
# nn layers' are here.
_SAVES: dict[str, tuple] = {
    "MseLossBackward0": ((0, None), (1, None)),
    "ConvolutionBackward0": ((0, 1), (1, 0)),
}


def register_saves(name: str, rule: tuple) -> None:
    """Record what torch's node ``name`` saves (see :data:`_SAVES`); the op
    modules declare theirs beside the op (``ops._declare.saves``)."""
    rule = tuple(rule)
    if _SAVES.setdefault(name, rule) != rule:
        raise ValueError(f"{name} saves {_SAVES[name]}, not {rule}")


def _saved_checks(name, args, mask, out, rule=None) -> tuple:
    """The checks of what torch's node ``name`` saves (``rule``: its entry of
    :data:`_SAVES`, where the caller has it) for an op on ``args`` with ``mask``
    that made ``out``: per saved tensor, ``(version counter, version then, a
    reference to it or None, the name of its grad_fn, its shape, its dtype,
    where its elements are)``."""
    checks = []
    for position, needs in _SAVES.get(name, ()) if rule is None else rule:
        if needs is not None and not mask[needs]:
            continue
        if position == "result":
            s = out._s
            where = ("result", s, s.pending, out._view)
            checks.append((out._vc, 0, None, name, out._shape(), out.dtype, where))
            continue
        t = args[position]
        if isinstance(t, TensorBase):
            node = t._grad_fn
            fn = node.name() if node is not None else None
            # Where to look at backward time (torch reads a saved tensor's storage
            # then, so an edit through `.data`, which the version misses, shows).
            s, vc = t._s, t._vc
            where = (position, s, s.pending, t._view)
            checks.append((vc, vc[0], weakref.ref(t), fn, t._shape(), t.dtype, where))
    return tuple(checks)


def _current(node: Node) -> list:
    """The node's saved arrays, with any saved input whose storage was written
    without a version bump (through ``.data``) read again, as torch would."""
    saved = node.saved
    for check in node.checks:
        where, owner = check[6], check[2] and check[2]()
        if where is not None and where[0] == "result":
            continue
        if where is not None and owner is not None and owner._s is not where[1]:
            where = (where[0], owner._s, None, owner._view)  # `.data = other`
        if where is None or where[1].pending is where[2]:
            continue
        if where[1].pending is None and where[2] is None:
            continue  # NumPy's memory then and now: no write to see
        position, storage, _, view = where  # (moved to the host: read it again)
        if position in dict(node.static).get("_pre", ()):
            view = _layout.transposed_block(view)  # handed over untransposed
            if view == _layout.identity(storage.shape):  # (see _operands)
                view = None
        t = TensorBase._wrap(None)
        t._s, t._view = storage, view
        saved = list(saved)
        saved[position] = t._data
    return saved


def _intact(node: Node) -> bool:
    """Whether nothing the node's checks watch changed since it was recorded: no
    version moved on, no saved storage replaced (``.data = other``) or written
    without a version bump. Then :func:`_verify`, :func:`_current` and
    :func:`_edited_result` would pass the saved arrays on as they are; where this
    answers False, they decide."""
    for check in node.checks:
        if check[0][0] != check[1]:
            return False
        where = check[6]
        if where is None:
            continue
        storage = where[1]
        if storage.pending is not where[2]:
            return False
        ref = check[2]
        if ref is not None and where[0] != "result":
            owner = ref()
            if owner is not None and owner._s is not storage:
                return False
    return True


# The VJPs of the ops whose backward torch computes from their result, written
# in the result: used only when that result was edited through `.data` (no
# version bump) before backward, where torch's gradient reads the edited values.
_RESULT_VJPS = {
    "ExpBackward0": lambda r, g: g * r,
    "Expm1Backward0": lambda r, g: g * (r + 1),
    "TanhBackward0": lambda r, g: g * (1 - r * r),
    "SigmoidBackward0": lambda r, g: g * r * (1 - r),
    "SqrtBackward0": lambda r, g: g / (2 * r),
    "RsqrtBackward0": lambda r, g: -0.5 * g * r**3,
    "ReluBackward0": lambda r, g: jax.numpy.where(r <= 0, jax.numpy.zeros_like(g), g),
    "TanBackward0": lambda r, g: g * (1 + r * r),
    "ReciprocalBackward0": lambda r, g: -g * r * r,
}


def _result_vjp(result: Any, grad: Any, *, node: str) -> Any:
    """:data:`_RESULT_VJPS`' rule of ``node``, as a program (recorded while lazy)."""
    return _RESULT_VJPS[node](result, grad)


def _unedited(where: tuple) -> bool:
    """A result whose storage is NumPy's now (read with ``.numpy()``, or one
    element written on the host): unedited if it still holds the saved values."""
    saved = where[2]
    if saved is None:
        return True  # NumPy's memory then and now: no write to see
    # (the storage's whole array then, against its whole host copy now)
    return np.array_equal(
        np.asarray(lazy.concrete(saved)), where[1].numpy, equal_nan=True
    )


def _edited_result(node: Node) -> jax.Array | None:
    """The node's output as it is now, if it was written since the forward
    without a version bump (through ``.data``); else None."""
    for check in node.checks:
        where = check[6]
        if where is None or where[0] != "result":
            continue
        storage = where[1]
        if storage.pending is where[2] or (
            storage.pending is None and _unedited(where)
        ):
            return None
        name = type(node).__name__
        if name not in _RESULT_VJPS:
            raise NotImplementedError(
                f"backward through {name} after its output was edited through "
                ".data is not supported by jaxblitz.compat"
            )
        t = TensorBase._wrap(None)
        t._s, t._view = storage, where[3]
        return t._data
    return None


def _verify(node: Node) -> None:
    for counter, version, ref, fn, shape, dt, *_ in node.checks:
        if counter[0] == version:
            continue
        if ref is not None:  # an input: torch names its current grad_fn
            t = ref()
            fn = (
                fn if t is None else (None if t._grad_fn is None else t._grad_fn.name())
            )
        which = "" if fn is None else f", which is output 0 of {_op_name(fn)},"
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified "
            f"by an inplace operation: [torch.{dt.scalar_type}Tensor "
            f"[{', '.join(map(str, shape))}]]{which} is at version {counter[0]}; "
            f"expected version {version} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )


def _op_name(node_name: str) -> str:
    """torch's name of a node's op in messages: ``ExpBackward0`` -> ``Exp``."""
    return re.sub(r"Backward\d*$", "", node_name)


# ---------------------------------------------------------------------------
# The funnel
# ---------------------------------------------------------------------------


def _transposed(args: Sequence[Any], kwargs: dict) -> Sequence[Any]:
    """``args`` with those at ``kwargs.pop("_pre")`` transposed: the 2-D views
    :func:`_operands` handed over as their storage's array."""
    pre = kwargs.pop("_pre", ())
    if not pre:
        return args
    return [a.T if i in pre else a for i, a in enumerate(args)]


def _fwd_impl(*args, fn, static):
    kwargs = dict(static)
    args = _transposed(args, kwargs)
    return fn(*args, **kwargs)


def _bwd_impl(*args, grad, fn, static, mask):
    kwargs = dict(static)
    args = _transposed(args, kwargs)

    def partial_fn(*diff):
        it = iter(diff)
        full = [next(it) if m else a for a, m in zip(args, mask, strict=True)]
        return fn(*full, **kwargs)

    diff_args = [a for a, m in zip(args, mask, strict=True) if m]
    _, vjp = jax.vjp(partial_fn, *diff_args)
    return vjp(grad)


_USES: dict[tuple, tuple[bool, ...]] = {}


def _vjp_uses(
    node: Node, saved: Sequence[Any], grad: Tensor, static: tuple
) -> tuple[bool, ...]:
    """Which of ``node``'s inputs its VJP reads (so the gradient depends on them):
    found once per op and shapes by walking the VJP's jaxpr back from its outputs.
    A sum's gradient reads no input, so it does not require grad, as in torch."""
    mask = node._vjp_mask()
    saved = [lazy.spec(a) for a in saved]
    shapes = tuple((jax.numpy.shape(a), jax.numpy.result_type(a)) for a in saved)
    key = (node.fn, static, mask, shapes, tuple(grad.shape), grad.dtype.name)
    uses = _USES.get(key)
    if uses is None:

        def vjp(*args):
            return _bwd_impl(
                *args[:-1], grad=args[-1], fn=node.fn, static=static, mask=mask
            )

        with x64(True):
            jaxpr = jax.make_jaxpr(vjp)(*saved, lazy.spec(grad._value())).jaxpr
        needed = {v for v in jaxpr.outvars if type(v).__name__ != "Literal"}
        for eqn in reversed(jaxpr.eqns):
            if any(v in needed for v in eqn.outvars):
                needed.update(v for v in eqn.invars if type(v).__name__ != "Literal")
        uses = _USES[key] = tuple(v in needed for v in jaxpr.invars[: len(node.mask)])
    return uses


def _t_fn(x):
    return x.T


def _vjp_fn(*args, of, of_static, mask, k):
    *saved, grad = args
    return _bwd_impl(*saved, grad=grad, fn=of, static=of_static, mask=mask)[k]


_fwd = lazy.jit(_fwd_impl, static_argnames=("fn", "static"))
_bwd = lazy.jit(_bwd_impl, static_argnames=("fn", "static", "mask"))


def run(fn: Callable, *arrays: Any, **static: Any) -> jax.Array:
    """``fn(*arrays, **static)`` jitted and cached, in x64 mode, with no recording."""
    return call_x64(_fwd, *arrays, fn=fn, static=tuple(static.items()))


_fresh_layout.RUN.append(run)


def apply(name: str, fn: Callable, *args: Any, **static: Any):
    """The funnel: run ``fn`` on the args' arrays and record ``name`` for backward.

    ``args`` are Tensors or plain values (Python numbers, arrays); plain values get
    no gradient. Returns a new Tensor.
    """
    if _profiling.on:  # (the one flag read while no profiler records)
        return _profiling.op(name, args, _apply, name, None, fn, args, static)
    return _apply(name, None, fn, args, static)


def apply_saving(name: str, forward: Callable, fn: Callable, *args: Any, **static):
    """:func:`apply` for an op whose backward reuses an intermediate of its forward.

    ``forward(*arrays, **static)`` returns ``(out, residual)``; the backward is the
    VJP of ``fn(*arrays, residual, **static)``, which must compute ``out`` using
    ``residual`` where the forward built it, so nothing is computed twice. With
    nothing to record (no grad mode, no input requiring grad) only ``out`` is
    computed and kept.
    """
    if _profiling.on:
        return _profiling.op(name, args, _apply, name, forward, fn, args, static)
    return _apply(name, forward, fn, args, static)


@functools.cache
def _value_of(forward: Callable) -> Callable:
    """``forward`` of :func:`apply_saving` without its residual, one function per
    ``forward`` (a static argument of the jitted call): with no backward to come,
    the program does not output what only the backward would read."""
    return functools.partial(_first_output, forward)


def _first_output(forward: Callable, *args: Any, **static: Any) -> Any:
    return forward(*args, **static)[0]


_ASK = object()  # a view's flag in _operands: _view_requires says, in grad mode


def _operands(
    args: Sequence[Any],
) -> tuple[list, tuple[int, ...], list, bool, bool]:
    """The arrays of ``args`` for an op's program, and the positions of those
    passed as the row-major block they transpose, to be transposed inside it: a
    2-D tensor's ``t()`` (``F.linear``'s weight), so XLA folds the transpose into
    the op (a dot reads its operand transposed) instead of a program of its own
    writing the transposed copy. Always so for such a view (:func:`_untransposed`),
    whether its value was read before, its storage lives in NumPy (``.numpy()``
    was called) or its block is part of a larger storage: the same values always
    go through the same program, so give the same bits.

    Then, per arg, what the op's mask holds for it in grad mode: a tensor's
    ``requires_grad_flag`` where set; ``_ASK`` for a view without it (whether it
    requires grad through its base is for :func:`_view_requires` to say, once
    every operand is read); else False. Then whether any arg is ``_ASK``, and
    whether any is a view (not a whole row-major storage)."""
    arrays, pre, flags, ask, viewed = [], [], [], False, False
    for i, a in enumerate(args):
        if not isinstance(a, TensorBase):
            arrays.append(a)
            flags.append(False)
            continue
        view = a._view
        if view is None:
            arrays.append(a._value())
        else:
            viewed = True
            block = None if a._as is not None else _untransposed(a)
            if block is not None:
                arrays.append(block)
                pre.append(i)
            else:
                arrays.append(a._value())
        flag = a.requires_grad_flag
        if flag:
            flags.append(flag)
        elif a._base is None:
            flags.append(False)
        else:
            flags.append(_ASK)
            ask = True
    return arrays, tuple(pre), flags, ask, viewed


def _untransposed(a: TensorBase) -> Any:
    """For a 2-D view that is ``t()`` of a row-major block of its storage, that
    block's elements (the view's transpose), in the block's shape; else None.
    A whole storage is handed over as it is; a block elsewhere in a larger one
    (a parameter made by ``vector_to_parameters``, a slice of a flat buffer) is
    read out, so the op runs the same program on the same values either way."""
    s, view = a._s, a._view
    block = _layout.transposed_block(view)
    if block is None:
        return None
    if block == _layout.identity(s.shape):
        if s.numpy is not None:
            return _from_numpy_copy(s.numpy)
        s.exclusive = False  # handed out, as TensorBase._data does
        return lazy.current(s.pending)
    if s.numpy is not None:
        return _from_numpy_copy(_layout.numpy_view(s.numpy, block))
    with x64(True):
        return _layout.read(lazy.current(s.pending), layout=block)


def _apply(name, forward, fn, args, static):
    arrays, pre, flags, ask, viewed = _operands(args)
    items = tuple(static.items())
    if pre:
        items += (("_pre", pre),)
    mask = False
    if is_grad_enabled():
        if ask:  # (in order, as ever)
            flags = [
                _view_requires(a) if f is _ASK else f
                for a, f in zip(args, flags, strict=True)
            ]
        mask = tuple(flags)
    recording = mask and any(mask)
    if recording:
        run = fn if forward is None else forward
    else:  # nothing to record: the value alone
        run = fn if forward is None else _value_of(forward)
    out = call_x64(_fwd, *arrays, fn=run, static=items)
    live = _dual.state  # (inline of _dual.live(): every op reads it)
    tans = _dual.tangents(args) if live[0] is not None and live[1] else None
    if tans is not None:  # a dual input: the tangent, by JAX's jvp of the value
        value = fn if forward is None else _value_of(forward)
        primals = list(arrays)
    if not recording:
        result = TensorBase._wrap(out)
        if viewed and fn in ELEMENTWISE:  # torch: strides that follow the inputs'
            result = follow_operands(result, fn, args, static.get("dt"))
        if tans is not None:
            _dual.propagate(name, value, primals, items, tans, result)
        return result
    if forward is not None:
        out, residual = out
        arrays.append(residual)
    inputs = tuple([a._node() if m else None for a, m in zip(args, mask, strict=True)])
    node = node_class(name, Node if forward is None else ResidualNode)(
        fn, items, arrays, inputs, mask
    )
    if _warm.active():  # compile its backward on the spare core meanwhile
        _warm.backward(_bwd, node, arrays, out)
    result = TensorBase._wrap(out, requires_grad=True, grad_fn=node)
    if viewed and fn in ELEMENTWISE:  # (before what it saves of its result)
        follow_operands(result, fn, args, static.get("dt"))
    rule = _SAVES.get(name)
    if rule is not None:
        node.checks = _saved_checks(name, args, mask, result, rule)
    if tans is not None:
        _dual.propagate(name, value, primals, items, tans, result)
    return result


def _view_requires(view: Any) -> bool:
    """Whether a view requires grad: its history remade if its base changed in
    place (``_stale``), or, as torch's views, where its base does -- a view made
    under ``no_grad`` (or before its base required grad) is a leaf that
    requires grad, and gradients reaching it are dropped (``_accumulate``)."""
    return view._stale() or view._base.requires_grad_flag


def record(name: str, fn: Callable, source: Tensor, **static: Any) -> Node:
    """The node ``apply(name, fn, source, **static)`` would record, without
    running ``fn``: for a view's history, whose value is read from storage."""
    items = tuple(static.items())
    node = node_class(name)(fn, items, [source._value()], (source._node(),), (True,))
    return node


class _Like(NamedTuple):
    """What :func:`_warm.zeros` reads of a cotangent not made yet."""

    shape: tuple[int, ...]
    dtype: Any
    committed: bool
    sharding: Any


def record_view(
    name: str, fn: Callable, source: Tensor, shape: tuple[int, ...], **static: Any
) -> Node:
    """:func:`record` for a view made without computing its value (a 2-D
    ``t()``: see :func:`_operands`), its backward program warmed on the spare
    core as :func:`apply` warms an op's; ``shape``: the view's."""
    node = record(name, fn, source, **static)
    if _warm.active():
        array = node.saved[0]
        like = _Like(
            shape,
            array.dtype,
            getattr(array, "committed", False),
            getattr(array, "sharding", None),
        )
        _warm.backward(_bwd, node, node.saved, like)
    return node


# ---------------------------------------------------------------------------
# backward
# ---------------------------------------------------------------------------


def _topological(root: Node) -> list[Node]:
    """The nodes below ``root`` in the order torch's engine runs them: a node is
    ready once every node that feeds it has run, and of the ready ones the one
    made last (highest sequence number) runs first, a leaf's AccumulateGrad
    before any. The queue is a binary heap as torch's (``std::priority_queue``),
    so nodes of equal priority come out in the order its sifting leaves them:
    the order in which hooks see gradients is torch's. (Its entries are
    ``(priority, node)``: priorities tie only between AccumulateGrad nodes,
    which compare as equal, so the heap orders by priority alone.)"""
    deps: dict[Node, int] = {}
    seen, stack = {root}, [root]
    while stack:
        for child in stack.pop().inputs:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    order, ready = [], [(0, root)]
    push, pop, first = heapq.heappush, heapq.heappop, -math.inf
    while ready:
        node = pop(ready)[1]
        order.append(node)
        for child in node.inputs:
            if child is None:
                continue
            left = deps[child] - 1
            deps[child] = left
            if not left:  # a leaf's AccumulateGrad as soon as it is ready
                push(
                    ready,
                    (first if isinstance(child, AccumulateGrad) else -child.seq, child),
                )
    return order  # root first


def plus(a: Any, b: Any) -> Any:
    """``a + b`` for two gradients, recorded while either is pending: a
    :class:`~jaxblitz.compat.lazy.LazyArray`'s ``+`` records the sum, a JAX
    array's would compute the pending one first (a sync). Float addition is
    commutative, so the order changes no bit."""
    if type(b) is lazy.LazyArray and type(a) is not lazy.LazyArray:
        return b + a
    return a + b


def run_backward(
    root: Node,
    grad: jax.Array,
    retain_graph: bool = False,
    inputs: Sequence[Any] | None = None,
    create_graph: bool = False,
    order: list[Node] | None = None,
) -> dict[int, Any]:
    """Propagate ``grad`` from ``root`` into the leaves (or collect ``inputs``).

    With ``create_graph`` the gradients are Tensors recorded on the tape (so they
    can be differentiated again), else plain arrays. ``order``: ``root``'s
    :func:`_topological` order, where the caller has it already.
    """
    collect = {id(t._node()): None for t in inputs} if inputs is not None else None
    if create_graph and not isinstance(grad, TensorBase):
        grad = TensorBase._wrap(grad)
    # by node (each node hashes as itself): the gradient summed so far
    grads: dict[Node, Any] = {root: grad}
    take, get = grads.pop, grads.get
    free = not (retain_graph or create_graph)  # torch's default for both
    anomaly = anomaly_mode._state  # is_anomaly_enabled(), asked per node
    with x64(True), set_grad_enabled(create_graph):
        for node in order or _topological(root):
            g = take(node, None)
            if g is None:
                continue
            if isinstance(node, AccumulateGrad):
                if collect is not None:
                    if id(node) in collect:
                        collect[id(node)] = g
                    continue
                if _profiling.on:
                    _profiling.timed(node.name(), (), node.variable._accumulate, g)
                else:
                    node.variable._accumulate(g)
                continue
            if node.hooks:
                g = _run_hooks(node.hooks, g)
            if node.prehooks:
                g = _run_node_hooks(node.prehooks, g, None)
            if collect is not None:
                if id(node) in collect:
                    collect[id(node)] = g
            elif node.retained is not None:
                node.retained._accumulate(g)
            if create_graph:
                if not hasattr(node, "apply_vjp_graph"):
                    raise NotImplementedError(
                        f"create_graph=True through {node.name()} (a custom "
                        "autograd.Function) is not supported by jaxblitz.compat"
                    )
                vjps = node.apply_vjp_graph(g)
            elif _profiling.on:  # torch's event for the node: ReluBackward0
                vjps = _profiling.backward(node, g)
            else:
                vjps = node.apply_vjp(g)
            if anomaly["on"]:
                anomaly_mode.check(node.name(), vjps)
            if node.posthooks:
                vjps = _run_node_hooks(node.posthooks, vjps, g)
            for child, cg in zip(node.inputs, vjps, strict=True):
                if child is None or cg is None:
                    continue
                prev = get(child)
                grads[child] = cg if prev is None else plus(prev, cg)
            if free:
                node.release()
    _warm.done()
    return collect or {}


def _role(node_name: str, position: Any) -> str:
    """torch's name for what a node saved at ``position`` (``_saved_<role>``)."""
    if position == "result":
        return "result"
    if node_name == "AddmmBackward0":  # (input, mat1, mat2)
        return ("self", "mat1", "mat2")[position]
    if position == 0:
        return "self"
    return {"MmBackward0": "mat2", "PowBackward1": "exponent"}.get(node_name, "other")


def _run_node_hooks(hooks: list, grads: Any, outputs: Any) -> Any:
    """grad_fn hooks: prehooks see ``(grad_output,)`` (``outputs`` None); hooks
    see ``(grad_inputs, (grad_output,))``. A tuple returned replaces the grads."""
    tensor = lambda a: (
        a if a is None or isinstance(a, TensorBase) else TensorBase._wrap(a)
    )  # noqa: E731
    array = lambda a: a if a is None or not isinstance(a, TensorBase) else a._value()  # noqa: E731
    single = outputs is None
    seen = (tensor(grads),) if single else tuple(tensor(g) for g in grads)
    for hook in list(hooks):
        out = hook(seen) if single else hook(seen, (tensor(outputs),))
        if out is not None:
            seen = tuple(out)
    keep = isinstance(
        grads if single else next((g for g in grads if g is not None), None), TensorBase
    )
    result = [g if keep else array(g) for g in seen]
    return result[0] if single else result


def _run_hooks(hooks: list, g: Any) -> Any:
    """Each hook sees the gradient as a Tensor; one it returns replaces it."""
    tensor = isinstance(g, TensorBase)
    for hook in list(hooks):
        out = hook(g if tensor else TensorBase._wrap(g))
        if out is not None:
            g = out if tensor else out._value()
    return g


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out again."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


# ---------------------------------------------------------------------------
# A tensor's autograd state
# ---------------------------------------------------------------------------


class AutogradMixin(TensorBase):
    """``requires_grad``, ``grad_fn``, ``retain_grad``, ``.data``/``detach`` and the
    in-place write that keeps the graph valid. (``backward`` is Tensor's own.)"""

    __slots__ = ()

    @property
    def requires_grad(self) -> bool:
        if self._base is None:
            return self.requires_grad_flag
        if self.__dict__.get("_no_grad_view"):  # its history is never remade
            return self.requires_grad_flag or self._base.requires_grad_flag
        # _view_requires, called from here (function._forbid_inplace: asking
        # this raises nothing)
        return self._stale() or self._base.requires_grad_flag

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if type(flag) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        self._set_requires_grad(
            flag, "only Tensors of floating point and complex dtype"
        )

    def _set_requires_grad(self, flag: bool, who: str) -> None:
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError(f"{who} can require gradients")
        if not flag and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you "
                "want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
        self.requires_grad_flag = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if type(requires_grad) is not bool:
            raise must_be("requires_grad_", "requires_grad", "bool", requires_grad, 1)
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype")
        return self

    @property
    def grad_fn(self) -> Node | None:
        if self._base is not None:
            self._stale()
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def _node(self) -> Node:
        if self._base is not None:
            self._stale()
        if self._grad_fn is not None:
            return self._grad_fn
        if self._acc is None:
            self._acc = AccumulateGrad(self)
        return self._acc

    def _stale(self) -> bool:
        """For a view: remake its history if its base changed in place since.

        As torch does, the new history reads this view's elements out of the
        base's (``AsStridedBackward0``). True if the view now requires grad.
        """
        base = self._base
        if self._gv == self._vc[0]:
            return self.requires_grad_flag
        no_grad_view = self.__dict__.get("_no_grad_view")
        if no_grad_view:  # torch: its history cannot be remade
            raise RuntimeError(
                f"{_no_grad_view_made(no_grad_view)} in no_grad mode and its base or "
                "another view of its base has been modified inplace with grad mode "
                f"enabled. {_NO_GRAD_ADVICE}"
            )
        if base._grad_fn is None:
            return self.requires_grad_flag
        self._grad_fn = record(
            "AsStridedBackward0", _read_fn, base, layout=self._place()
        )
        self.requires_grad_flag, self._gv = True, self._vc[0]
        return True

    def _accumulate(self, g: Any) -> None:
        if self._base is not None and not self.requires_grad_flag:
            return  # a view without history (see _view_requires): torch drops it
        self._add_to_grad(g)
        hooks = self.__dict__.get("_post_accumulate_hooks")
        for hook in list(hooks) if hooks else ():
            result = hook(self)
            if result is None or result is self:  # torch lets the tensor back
                continue
            if not isinstance(result, TensorBase):
                raise TypeError(
                    f"expected Variable, but hook returned '{type(result).__name__}'"
                )
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(tensor)`` after this leaf's gradient is added to ``.grad``."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        hooks = self.__dict__.setdefault("_post_accumulate_hooks", [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def _add_to_grad(self, g: Any) -> None:
        if self._hooks:
            g = _run_hooks(self._hooks, g)
        if isinstance(g, TensorBase):  # create_graph: .grad keeps its history
            self.grad = g if self.grad is None else self.grad + g
            return
        if self.grad is None:
            self.grad = TensorBase._wrap(g)
        else:  # into the same tensor, as torch: references to .grad see it
            with x64(True):
                self.grad._set_data(plus(self.grad._value(), g))

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError(
                "can't retain_grad on Tensor that has requires_grad=False"
            )
        if self._grad_fn is not None:
            self._grad_fn.retained = self

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return node is not None and node.retained is self

    def register_hook(self, hook) -> RemovableHandle:
        """Call ``hook(grad)`` with this tensor's gradient during backward; what it
        returns (if not None) replaces the gradient. ``handle.remove()`` undoes."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        node = self.grad_fn
        if node is None:  # a leaf: run before accumulating into .grad
            self._hooks = hooks = self._hooks or []
        else:
            node.hooks = hooks = node.hooks or []
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    @property
    def data(self) -> Tensor:
        # torch: the same elements, not tracked by autograd, with a version
        # counter of its own (writes through .data are not checked).
        t = TensorBase._wrap(None)
        t._share(self)
        return t

    @data.setter
    def data(self, other: Tensor) -> None:
        self._share(other)

    def detach(self) -> Tensor:
        t = self.data
        t._vc = self._vc  # unlike .data, shares the version counter
        return t

    def detach_(self) -> Tensor:
        self._grad_fn, self.requires_grad_flag = None, False
        return self

    # -- in-place writes ---------------------------------------------------------
    def _check_inplace(self) -> None:
        if is_grad_enabled():
            base = self._base
            if self.requires_grad_flag and self._grad_fn is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad is being used in an in-place "
                    "operation."
                )
            if (
                base is not None
                and base.requires_grad_flag
                and base._grad_fn is None
                and not self.__dict__.get("_no_grad_view")  # _inplace_view's error
            ):
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an "
                    "in-place operation."
                )
        view = self._view
        if view is not None and _layout.has_overlap(view):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to "
                "tensor refers to a single memory location. Please clone() the "
                "tensor before performing the operation."
            )

    def _inplace(self, result: Tensor) -> Tensor:
        """Make ``result`` (computed from ``self``) this tensor's value and history."""
        own = self.dtype
        if result.dtype is not own:
            if not _dtype.can_cast(result.dtype, own):
                raise RuntimeError(
                    f"result type {result.dtype.scalar_type} can't be cast to the "
                    f"desired output type {own.scalar_type}"
                )
            result = result.to(own)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast "
                f"shape {list(result.shape)}"
            )
        base = self._base
        if (
            base is not None
            and is_grad_enabled()
            and (result.requires_grad_flag or base.requires_grad_flag)
        ):
            self._inplace_view(base, result)
        else:
            self._set_data(result._value())
            if result._grad_fn is not None:
                self._grad_fn, self.requires_grad_flag = result._grad_fn, True
        node = result._grad_fn
        if node is not None and node.checks:
            # What this op saved of `self` (its input, or its result, which is now
            # `self`) is what `self` holds after the write, as for torch's
            # in-place ops: later writes are checked against that.
            now = self._vc[0]
            node.checks = tuple(
                (self._vc, now, *rest[:4], _resaved(rest[4]))
                if counter is result._vc or (rest[4] is not None and rest[4][0] == 0)
                else (counter, v, *rest)
                for counter, v, *rest in node.checks
            )
        if _dual.live():  # the written elements' tangent is the result's
            _dual.written(self, result)
        return self

    def _inplace_view(self, base: Tensor, result: Tensor) -> Tensor:
        """torch's in-place op on a view under autograd: the base's history becomes
        ``CopySlices`` (the old base with ``result`` written into this view's
        elements) and this view's history reads them back out of it."""
        multi = self.__dict__.get("_multi_view")
        if multi is not None:
            raise RuntimeError(
                f"Output {multi[1]} of {_op_name(multi[0])} is a view and is being "
                "modified inplace. This view is the output of a function that returns "
                "multiple views. Such functions do not allow the output views to be "
                "modified inplace. You should replace the inplace operation by an "
                "out-of-place one."
            )
        no_grad_view = self.__dict__.get("_no_grad_view")
        if no_grad_view:
            raise RuntimeError(
                f"{_no_grad_view_made(no_grad_view)} in no_grad mode and is being "
                f"modified inplace with grad mode enabled. {_NO_GRAD_ADVICE}"
            )
        if base._view is not None:
            raise NotImplementedError(
                "an in-place op with autograd on a view of a tensor whose own layout "
                "is not row-major (from_numpy of a strided array, or after t_()) is "
                "not supported; clone() the base first"
            )
        old = TensorBase._wrap(
            base._value(), requires_grad=base.requires_grad_flag, grad_fn=base._grad_fn
        )
        new = apply("CopySlices", _write_fn, old, result, layout=self._place())
        base._set_data(new._data)
        base._grad_fn, base.requires_grad_flag = new._grad_fn, True
        if base._s.numpy is None:
            self._cache = (base._s.pending, result._value())
        self._gv = -1  # stale: `_stale` makes the AsStridedBackward0 history
        self._stale()
        return self


_NO_GRAD_ADVICE = (  # torch's words
    "Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both "
    "inside the no_grad block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)


def _no_grad_view_made(how: Any) -> str:
    """How torch's messages name a view made under no_grad (``how`` True) or a
    view of one (``how`` its node's name)."""
    if how is True:
        return "A view was created"
    return f"Output 0 of {_op_name(how)} is a view of a view which was created"


def _resaved(where: tuple | None) -> tuple | None:
    # An in-place op's node keeps what it read before its own write.
    return None if where is None else (*where[:2], where[1].pending, where[3])


def _read_fn(x, *, layout):
    return _layout.read(x, layout=layout)


def _write_fn(x, value, *, layout):
    return _layout.write(x, value, layout=layout)


# torch.autograd.graph's hooks on saved tensors, refused by name: a pack hook
# would be called on other tensors, a different number of times, than torch's.
_SAVED_HOOKS = (
    "compat's tape keeps the inputs of each op, from which JAX derives its "
    "backward, not the tensors torch saves; pack and unpack hooks would see other "
    "tensors, a different number of times. To trade compute for memory, use "
    "torch.utils.checkpoint"
)
saved_tensors_hooks = refused("torch.autograd.graph.saved_tensors_hooks", _SAVED_HOOKS)
save_on_cpu = refused("torch.autograd.graph.save_on_cpu", _SAVED_HOOKS)
disable_saved_tensors_hooks = refused(
    "torch.autograd.graph.disable_saved_tensors_hooks", _SAVED_HOOKS
)
allow_mutation_on_saved_tensors = refused(
    "torch.autograd.graph.allow_mutation_on_saved_tensors", _SAVED_HOOKS
)
