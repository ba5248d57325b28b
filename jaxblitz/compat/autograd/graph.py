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

Every op runs inside ``x64(True)`` (see :mod:`jaxblitz.compat._dtype`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import jax

from jaxblitz.compat._dtype import x64
from jaxblitz.compat._tensor_base import TensorBase, _Storage
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled

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


class Node:
    """A recorded op: ``grad_fn``. Subclassed per torch name (``MulBackward0``)."""

    __slots__ = ("fn", "static", "saved", "inputs", "mask", "retained", "__weakref__")

    def __init__(self, fn, static, saved, inputs, mask):
        self.retained = None  # a tensor that called retain_grad()
        self.fn = fn  # the pure JAX function of the forward, or a vjp callable
        self.static = static  # hashable keyword arguments of fn
        self.saved = saved  # the input arrays (None once freed)
        self.inputs = inputs  # per input: its Node, or None
        self.mask = mask  # per input: whether a gradient flows to it

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((n, 0) for n in self.inputs)

    def apply_vjp(self, grad: jax.Array) -> Sequence[jax.Array | None]:
        if self.saved is None:
            raise RuntimeError(_FREED)
        grads = _bwd(
            *self.saved, grad=grad, fn=self.fn, static=self.static, mask=self.mask
        )
        it = iter(grads)
        return [next(it) if m else None for m in self.mask]

    def release(self) -> None:
        self.saved = None

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


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

    def apply_vjp(self, grad: jax.Array) -> Sequence[jax.Array | None]:
        if self.saved is None:
            raise RuntimeError(_FREED)
        grads = _bwd(
            *self.saved,
            grad=grad,
            fn=self.fn,
            static=self.static,
            mask=(*self.mask, False),
        )
        it = iter(grads)
        return [next(it) if m else None for m in self.mask]


_classes: dict[tuple[str, type[Node]], type[Node]] = {}


def node_class(name: str, base: type[Node] = Node) -> type[Node]:
    cls = _classes.get((name, base))
    if cls is None:
        cls = _classes[name, base] = type(name, (base,), {"__slots__": ()})
    return cls


# ---------------------------------------------------------------------------
# The funnel
# ---------------------------------------------------------------------------


def _fwd_impl(*args, fn, static):
    return fn(*args, **dict(static))


def _bwd_impl(*args, grad, fn, static, mask):
    kwargs = dict(static)

    def partial_fn(*diff):
        it = iter(diff)
        full = [next(it) if m else a for a, m in zip(args, mask, strict=True)]
        return fn(*full, **kwargs)

    diff_args = [a for a, m in zip(args, mask, strict=True) if m]
    _, vjp = jax.vjp(partial_fn, *diff_args)
    return vjp(grad)


_fwd = jax.jit(_fwd_impl, static_argnames=("fn", "static"))
_bwd = jax.jit(_bwd_impl, static_argnames=("fn", "static", "mask"))


def run(fn: Callable, *arrays: Any, **static: Any) -> jax.Array:
    """``fn(*arrays, **static)`` jitted and cached, in x64 mode, with no recording."""
    with x64(True):
        return _fwd(*arrays, fn=fn, static=tuple(static.items()))


def apply(name: str, fn: Callable, *args: Any, **static: Any):
    """The funnel: run ``fn`` on the args' arrays and record ``name`` for backward.

    ``args`` are Tensors or plain values (Python numbers, arrays); plain values get
    no gradient. Returns a new Tensor.
    """
    return _apply(name, None, fn, args, static)


def apply_saving(name: str, forward: Callable, fn: Callable, *args: Any, **static):
    """:func:`apply` for an op whose backward reuses an intermediate of its forward.

    ``forward(*arrays, **static)`` returns ``(out, residual)``; the backward is the
    VJP of ``fn(*arrays, residual, **static)``, which must compute ``out`` using
    ``residual`` where the forward built it, so nothing is computed twice.
    """
    return _apply(name, forward, fn, args, static)


def _apply(name, forward, fn, args, static):
    arrays = [a._data if isinstance(a, TensorBase) else a for a in args]
    items = tuple(static.items())
    with x64(True):
        out = _fwd(*arrays, fn=fn if forward is None else forward, static=items)
    if forward is not None:
        out, residual = out
        arrays.append(residual)
    if not is_grad_enabled():
        return TensorBase._wrap(out)
    mask = tuple(isinstance(a, TensorBase) and a.requires_grad_flag for a in args)
    if not any(mask):
        return TensorBase._wrap(out)
    inputs = tuple(a._node() if m else None for a, m in zip(args, mask, strict=True))
    base = Node if forward is None else ResidualNode
    node = node_class(name, base)(fn, items, arrays, inputs, mask)
    return TensorBase._wrap(out, requires_grad=True, grad_fn=node)


# ---------------------------------------------------------------------------
# backward
# ---------------------------------------------------------------------------


def _topological(root: Node) -> list[Node]:
    order, seen, stack = [], {id(root)}, [(root, iter(root.inputs))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(child.inputs)))
                break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]  # root first


def run_backward(
    root: Node,
    grad: jax.Array,
    retain_graph: bool = False,
    inputs: Sequence[Any] | None = None,
) -> dict[int, jax.Array]:
    """Propagate ``grad`` from ``root`` into the leaves (or collect ``inputs``)."""
    collect = {id(t._node()): None for t in inputs} if inputs is not None else None
    grads: dict[int, jax.Array] = {id(root): grad}
    with x64(True):
        for node in _topological(root):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if isinstance(node, AccumulateGrad):
                if collect is not None:
                    if id(node) in collect:
                        collect[id(node)] = g
                    continue
                node.variable._accumulate(g)
                continue
            if collect is not None and id(node) in collect:
                collect[id(node)] = g
            if node.retained is not None and collect is None:
                node.retained._accumulate(g)
            for child, cg in zip(node.inputs, node.apply_vjp(g), strict=True):
                if child is None or cg is None:
                    continue
                prev = grads.get(id(child))
                grads[id(child)] = cg if prev is None else prev + cg
            if not retain_graph:
                node.release()
    return collect or {}


# ---------------------------------------------------------------------------
# A tensor's autograd state
# ---------------------------------------------------------------------------


class AutogradMixin(TensorBase):
    """``requires_grad``, ``grad_fn``, ``retain_grad``, ``.data``/``detach`` and the
    in-place write that keeps the graph valid. (``backward`` is Tensor's own.)"""

    __slots__ = ()

    @property
    def requires_grad(self) -> bool:
        return self.requires_grad_flag

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        if not flag and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you "
                "want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
        self.requires_grad_flag = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Node | None:
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    def _node(self) -> Node:
        if self._grad_fn is not None:
            return self._grad_fn
        if self._acc is None:
            self._acc = AccumulateGrad(self)
        return self._acc

    def _accumulate(self, g: jax.Array) -> None:
        if self._hooks:
            for hook in self._hooks:
                out = hook(TensorBase._wrap(g))
                g = g if out is None else out._data
        if self.grad is None:
            self.grad = TensorBase._wrap(g)
        else:
            with x64(True):
                self.grad = TensorBase._wrap(self.grad._data + g)

    def retain_grad(self) -> None:
        if self._grad_fn is not None:
            self._grad_fn.retained = self

    def register_hook(self, hook) -> None:
        self._hooks = [*(self._hooks or []), hook]

    @property
    def data(self) -> Tensor:
        # torch: shares storage, not tracked by autograd.
        t = TensorBase._wrap(None)
        t._s = self._s
        return t

    @data.setter
    def data(self, other: Tensor) -> None:
        self._s = _Storage(other._data)

    def detach(self) -> Tensor:
        return self.data

    def detach_(self) -> Tensor:
        self._grad_fn, self.requires_grad_flag = None, False
        return self

    # -- in-place writes ---------------------------------------------------------
    def _check_inplace(self) -> None:
        if self.requires_grad_flag and self._grad_fn is None and is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )

    def _inplace(self, result: Tensor) -> Tensor:
        """Make ``result`` (computed from ``self``) this tensor's value and history."""
        own = self.dtype
        if result.dtype is not own:
            if result.dtype.is_floating_point and not own.is_floating_point:
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
        self._set_data(result._data)
        if result._grad_fn is not None:
            self._grad_fn, self.requires_grad_flag = result._grad_fn, True
        return self
