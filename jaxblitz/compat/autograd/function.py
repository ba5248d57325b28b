"""Blitz 2 (extending autograd): ``torch.autograd.Function`` with a hand-written
backward -- the only place in compat where a derivative is written by hand.

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * (x > 0)
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat._tensor_base import TensorBase
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled, no_grad
from jaxblitz.compat.autograd.graph import _FREED, Node


class FunctionCtx:
    """The ``ctx`` handed to ``forward`` and ``backward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self._saved: tuple | None = ()
        self._freed = False

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise RuntimeError(_FREED)
        return self._saved

    def mark_non_differentiable(self, *tensors: Any) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


class _FunctionNode(Node):
    __slots__ = ("ctx", "cls", "positions")

    def apply_vjp(self, grad):
        if self.ctx._freed:
            raise RuntimeError(_FREED)
        with no_grad():
            grads = self.cls.backward(self.ctx, TensorBase._wrap(grad))
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(self.ctx.needs_input_grad):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {len(self.ctx.needs_input_grad)}, got {len(grads)})"
            )
        out = []
        for position in self.positions:
            g = grads[position]
            out.append(None if g is None else g._data)
        return out

    def release(self) -> None:
        self.ctx._freed = True


class Function:
    """Subclass with static ``forward(ctx, ...)`` and ``backward(ctx, grad)``."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any) -> Any:
        needs = tuple(isinstance(a, TensorBase) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not (is_grad_enabled() and any(needs)):
            return out
        if not isinstance(out, TensorBase):
            raise NotImplementedError(
                "jaxblitz.compat's Function supports one output Tensor; got "
                f"{type(out).__name__}"
            )
        positions = tuple(i for i, n in enumerate(needs) if n)
        inputs = tuple(args[i]._node() for i in positions)
        node_cls = _function_class(cls)
        node = node_cls(None, (), (), inputs, tuple(True for _ in positions))
        node.ctx, node.cls, node.positions = ctx, cls, positions
        return TensorBase._wrap(out._data, requires_grad=True, grad_fn=node)


_classes: dict[type, type] = {}


def _function_class(cls: type) -> type:
    # torch names the node "<FunctionName>Backward".
    node_cls = _classes.get(cls)
    if node_cls is None:
        node_cls = type(f"{cls.__name__}Backward", (_FunctionNode,), {"__slots__": ()})
        _classes[cls] = node_cls
    return node_cls
