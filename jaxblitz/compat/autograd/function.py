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

As in torch, ``Function.apply`` runs ``forward`` with grad mode off and then wires
its outputs into the graph; the ``ctx`` is the node itself (``out.grad_fn``, of a
class named ``<Function>Backward``). What torch does there (``THPFunction_apply``
and ``PyNode::apply``) is done here step for step: the ``setup_context`` style,
``needs_input_grad``, ``save_for_backward`` with torch's version checks (through
:func:`jaxblitz.compat.autograd.graph._verify`), ``mark_dirty`` (the in-place
write is recorded as compat records any other: :meth:`AutogradMixin._inplace`),
``mark_non_differentiable``, ``set_materialize_grads``, outputs that are inputs or
views of them, several outputs, non-tensor outputs; and on the way back torch's
checks of what ``backward`` returns (count, trailing ``None``, shapes summed to the
input's when they broadcast, dtypes cast).
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
import weakref
from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.autograd import _dual, _function_func, _function_jvp
from jaxblitz.compat.autograd.grad_mode import is_grad_enabled, no_grad
from jaxblitz.compat.autograd.graph import _FREED, Node, _verify, plus
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "once_differentiable",
]


# ---------------------------------------------------------------------------
# ctx
# ---------------------------------------------------------------------------


class FunctionCtx:
    """What ``forward`` / ``setup_context`` tell autograd through ``ctx``.

    As in torch, these only record their arguments; ``Function.apply`` checks and
    uses them once ``forward`` has returned.
    """

    def save_for_backward(self, *tensors: Any) -> None:
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        for tensor in tensors:
            if not (isinstance(tensor, TensorBase) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Any) -> None:
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Any) -> None:
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call, and the ``ctx`` its methods got.

    Subclassed per Function as ``<Function>Backward`` (see :func:`_node_class`).
    ``inputs``/``mask`` are per tensor argument (None / False where it does not
    require grad); ``saved`` is None once the graph is freed.
    """

    _forward_cls: type[Function]

    def _start(self, cls: type[Function], args: tuple, executable: bool) -> None:
        tensors = [a for a in args if isinstance(a, TensorBase)]
        inputs = tuple(
            t._node() if executable and t.requires_grad else None for t in tensors
        )
        Node.__init__(self, None, (), (), inputs, tuple(n is not None for n in inputs))
        self._forward_cls = cls
        self.needs_input_grad = tuple(
            isinstance(a, TensorBase) and a.requires_grad for a in args
        )
        self._is_tensor = tuple(isinstance(a, TensorBase) for a in args)
        # torch's input metadata: what a returned gradient must fit
        self._input_meta = tuple((tuple(t.shape), t.dtype) for t in tensors)
        self._outputs: tuple = ()  # per output: (shape, dtype), None if no tensor
        self._direct: int | None = None  # the one output whose grad_fn is self
        self._saved_entries: tuple | None = None

    @property
    def saved_tensors(self) -> tuple:
        forward = self.__dict__.get("_in_jvp")
        if forward is not None:  # inside jvp: what save_for_forward saved
            return forward
        if self.saved is None:
            raise RuntimeError(_FREED)
        entries = self._saved_entries
        if entries is None:  # forward has not returned yet
            return ()
        if self.checks:
            _verify(self)
        return tuple(_unpack(self, e) for e in entries)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.saved_tensors

    def apply_vjp(self, grad: Any) -> list:
        with no_grad():
            return self._backward(grad, graph=False)

    def apply_vjp_graph(self, grad: Any) -> list:
        """``create_graph=True``: ``backward`` runs with grad mode on (the engine's
        doing), on Tensors, and what it computes stays on the tape."""
        return self._backward(grad, graph=True)

    def _backward(self, grad: Any, graph: bool) -> list:
        """Call the user's ``backward`` with one gradient per output (arrays
        come in and go out, or with ``graph`` Tensors)."""
        if self.saved is None:
            raise RuntimeError(_FREED)
        by_output = grad if isinstance(grad, _OutputGrads) else {self._direct: grad}
        materialize = self.__dict__.get("materialize_grads", True)
        grad_outputs = []
        for i, meta in enumerate(self._outputs):
            g = by_output.get(i)
            if g is None and meta is not None and materialize:
                g = jnp.zeros(meta[0], meta[1].np)
            if g is not None and not isinstance(g, TensorBase):
                g = TensorBase._wrap(g)
            grad_outputs.append(g)
        result = _user_backward(self._forward_cls)(self, *grad_outputs)
        return self._check_grads(result, graph)

    def _check_grads(self, result: Any, graph: bool) -> list:
        """torch's checks of what ``backward`` returned; then per tensor input its
        gradient (an array, or with ``graph`` a Tensor), or None."""
        result = result if isinstance(result, tuple) else (result,)
        expected = len(self._is_tensor)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]  # extra trailing Nones are allowed
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})"
            )
        grads = []
        for position, (g, is_tensor) in enumerate(
            zip(result, self._is_tensor, strict=True)
        ):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than "
                        f"None at position {position + 1}, but the corresponding "
                        "forward input was not a Variable"
                    )
                continue
            if g is not None and not isinstance(g, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {_tp_name(g)})")
            grads.append(g)
        out = []
        for index, (g, needed, (shape, dtype)) in enumerate(
            zip(grads, self.mask, self._input_meta, strict=True)
        ):
            if g is None or not needed:
                out.append(None)
                continue
            got = tuple(g.shape)
            if got != shape:
                if not _expandable(shape, got):
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at "
                        f"index {index} - got {list(got)} but expected shape "
                        f"compatible with {list(shape)}"
                    )
                axes = _summed_axes(shape, got)
                g = g.sum(dim=axes, keepdim=True).reshape(shape)
            if g.dtype != dtype:
                g = g.to(dtype)
            out.append(g if graph else g._value())  # pending: recorded on
        return out

    def release(self) -> None:
        self.saved = None
        self._saved_entries = None


class _OutputGrads(dict):
    """The gradients reaching a Function's outputs, by output index. What the
    nodes of a multi-output Function's outputs pass on; summed as the engine sums
    gradients."""

    def __add__(self, other: _OutputGrads) -> _OutputGrads:
        total = _OutputGrads(self)
        for i, g in other.items():
            total[i] = g if i not in total else plus(total[i], g)
        return total


class FunctionOutput(Node):
    """The ``grad_fn`` of one output of a Function with several differentiable
    outputs: hands its gradient, tagged with its index, to the Function's node.

    torch gives every output the Function's node itself; the engine here keeps one
    gradient per node, so each output has this node in front of it. It answers as
    the Function's node does (``name()``, ``next_functions``, ``saved_tensors``,
    attributes put on ``ctx``); only ``a.grad_fn is b.grad_fn`` differs.
    """

    __slots__ = ("function", "index")

    def __init__(self, function: BackwardCFunction, index: int):
        super().__init__(None, (), (), (function,), (True,))
        self.function, self.index = function, index
        self.seq = function.seq  # torch's one node for all of the outputs

    def name(self) -> str:
        return self.function.name()

    @property
    def next_functions(self) -> tuple:
        return self.function.next_functions

    def apply_vjp(self, grad: Any) -> list:
        return [_OutputGrads({self.index: grad})]

    apply_vjp_graph = apply_vjp

    def release(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name in ("function", "index") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.function, name)


_node_classes: dict[type, tuple[type, type]] = {}


def _node_class(cls: type) -> tuple[type[BackwardCFunction], type[FunctionOutput]]:
    # torch names the node "<FunctionName>Backward".
    classes = _node_classes.get(cls)
    if classes is None:
        name = cls.__dict__.get("_node_name", f"{cls.__name__}Backward")
        classes = (
            type(name, (BackwardCFunction,), {"__module__": __name__}),
            type(name, (FunctionOutput,), {"__slots__": (), "__module__": __name__}),
        )
        _node_classes[cls] = classes
    return classes


def _tp_name(value: Any) -> str:
    """The name torch's C++ messages give a Python object's type (``tp_name``)."""
    kind = type(value)
    if kind.__flags__ & (1 << 9) or kind.__module__ == "builtins":  # a heap type
        return kind.__name__
    return f"{kind.__module__}.{kind.__name__}"


def _expandable(shape: tuple, to: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (torch's ``is_expandable_to``)."""
    if len(shape) > len(to):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], to[::-1], strict=False))


def _summed_axes(shape: tuple, got: tuple) -> tuple[int, ...]:
    """The axes of a gradient of shape ``got`` to sum for an input of ``shape``
    (torch's ``sum_to``)."""
    lead = len(got) - len(shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and got[lead + i] != 1
    )


def _user_backward(cls: type) -> Any:
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not "
            "allowed. You should only implement one of them."
        )
    return vjp if vjp is not Function.vjp else backward


# ---------------------------------------------------------------------------
# saved tensors
# ---------------------------------------------------------------------------


def _save(node: BackwardCFunction, args: tuple, outputs: tuple) -> None:
    """Keep ``ctx.to_save`` as torch's SavedVariables: inputs and intermediates as
    they are, outputs as a new handle each time; and their versions, checked on
    every ``saved_tensors`` (a leaf or intermediate is named by no node, an input
    by its grad_fn then, an output by this Function)."""
    entries, checks = [], []
    for position, t in enumerate(node.__dict__.get("to_save", ())):
        if t is None:
            entries.append(None)
            continue
        if not isinstance(t, TensorBase):
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{position} is of type {_tp_name(t)}"
            )
        shape = tuple(t.shape)
        if any(t is o for o in outputs):
            fn = t._grad_fn
            entries.append(("output", t.detach(), fn))
            name = None if fn is None else node.name()
            checks.append((t._vc, t._vc[0], None, name, shape, t.dtype))
            continue
        entries.append(("tensor", t))
        fn = t._grad_fn.name() if t._grad_fn is not None else None
        checks.append((t._vc, t._vc[0], weakref.ref(t), fn, shape, t.dtype))
    node._saved_entries = tuple(entries)
    node.checks = tuple(checks)


def _unpack(node: BackwardCFunction, entry: Any) -> Any:
    if entry is None:
        return None
    if entry[0] == "tensor":
        return entry[1]
    _, data, grad_fn = entry
    t = data.detach()  # a new handle on the output's elements and version counter
    t._grad_fn, t.requires_grad_flag = grad_fn, grad_fn is not None
    return t


# ---------------------------------------------------------------------------
# Function
# ---------------------------------------------------------------------------


class Function:
    """Subclass with static ``forward`` and ``backward``; call ``Cls.apply(...)``.

    ``forward(ctx, *args)``, or ``forward(*args)`` with
    ``setup_context(ctx, inputs, output)``; ``backward(ctx, *grad_outputs)``
    returns one gradient (or None) per argument of ``forward``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd "
            "functions are all static, so you should invoke them on the class "
            "itself. Instantiating an autograd function will raise an error in a "
            "future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html"
            "#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use "
            "it with forward mode AD."
        )

    # torch.func: batch forward itself under vmap (:mod:`._function_func`)
    generate_vmap_rule = False

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the "
            "vmap staticmethod or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        setup = cls.setup_context is not Function.setup_context
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        args = _positional(cls.forward, args, kwargs, skip=0 if setup else 1)
        if _function_func.transformed(args):  # inside a torch.func transform
            return _function_func.apply(cls, args)
        executable = is_grad_enabled() and any(
            isinstance(a, TensorBase) and a.requires_grad for a in args
        )
        node_cls, _ = _node_class(cls)
        ctx = node_cls.__new__(node_cls)
        ctx._start(cls, args, executable)
        dual = _dual.live() and any(_dual.tangent(a) is not None for a in args)
        with no_grad(), _dual.off():  # torch: forward sees no tangents
            if setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        result = _wrap_outputs(cls, ctx, args, output, executable)
        if dual:  # the outputs' tangents are what the Function's jvp says
            _function_jvp.attach(cls, ctx, args, result)
        return result


def _positional(forward: Any, args: tuple, kwargs: dict, skip: int) -> tuple:
    """Keyword arguments of ``apply`` put in their places in ``forward``'s
    signature, as torch does (every place up to the last one given filled)."""
    if not kwargs:
        return tuple(args)
    params = list(inspect.signature(forward).parameters.values())[skip:]
    names = [
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    slots: dict[int, Any] = {}
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        index = names.index(name)
        if index < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        slots[index] = value
    full = list(args)
    for index in range(len(args), max(slots) + 1):
        if index not in slots:
            raise TypeError(
                f"forward() missing required argument: '{names[index]}' "
                f"(position {index})"
            )
        full.append(slots[index])
    return tuple(full)


def _wrap_outputs(
    cls: type, ctx: BackwardCFunction, args: tuple, raw: Any, executable: bool
) -> Any:
    """torch's ``process_outputs``: the outputs of ``forward`` joined to the graph."""
    single = not isinstance(raw, tuple)
    raw_outputs = (raw,) if single else raw
    outputs = list(raw_outputs)
    tensors = [a for a in args if isinstance(a, TensorBase)]
    dirty = ctx.__dict__.get("dirty_tensors", ())
    for t in dirty:
        if not isinstance(t, TensorBase):
            raise RuntimeError("mark_dirty can only accept variables, but argument ")
    non_diff = ctx.__dict__.get("non_differentiable", ())
    for t in non_diff:
        if not isinstance(t, TensorBase):
            raise RuntimeError(
                "mark_non_differentiable only accepts variable arguments, but got "
            )

    def among(t: Any, group: Any) -> bool:
        return any(t is g for g in group)

    kinds = []  # per output: None (not a tensor), "off", "dirty", "input", "new"
    for out in outputs:
        if not isinstance(out, TensorBase):
            kinds.append(None)
        elif not (
            executable and not among(out, non_diff) and out.dtype.is_floating_point
        ):
            kinds.append("off")
        elif among(out, dirty):
            kinds.append("dirty")
        elif among(out, tensors):
            kinds.append("input")
        else:
            kinds.append("new")
    differentiable = [i for i, k in enumerate(kinds) if k not in (None, "off")]
    # torch bumps the version of each dirty tensor; for one that joins the graph,
    # the write `_rebase` records is that bump
    for t in dirty:
        if not (executable and any(t is outputs[i] for i in differentiable)):
            t._vc[0] += 1

    _, output_cls = _node_class(cls)
    direct = len(differentiable) == 1
    for i, kind in enumerate(kinds):
        out = outputs[i]
        if kind is None:
            continue
        if kind == "off":
            if not out.requires_grad:
                if among(out, tensors) and not among(out, dirty):
                    outputs[i] = _alias(out)
            elif among(out, tensors):
                outputs[i] = out.detach()
            elif not out._is_view():
                out.detach_()
            continue
        edge = ctx if direct else output_cls(ctx, i)
        if kind == "dirty":
            outputs[i] = _rebase(out, edge, tensors, len(outputs))
            continue
        if kind == "input":
            out = outputs[i] = _alias(out)
        out._grad_fn, out.requires_grad_flag = edge, True
        if out._is_view():
            _forbid_inplace(out, i, ctx.name())
    returned = sum(1 for out in raw_outputs if among(out, dirty))
    if returned != len({id(t) for t in dirty}):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not "
            "returned as output. The inputs that are modified inplace must all "
            "be outputs of the Function."
        )
    if executable:
        ctx._outputs = tuple(
            (tuple(o.shape), o.dtype) if isinstance(o, TensorBase) else None
            for o in outputs
        )
        ctx._direct = differentiable[0] if direct else None
        _save(ctx, args, outputs)
    return outputs[0] if single else tuple(outputs)


def _alias(t: TensorBase) -> TensorBase:
    """An input returned as it is: torch returns a view of it made in no_grad."""
    with no_grad():
        return t.view_as(t)


def _rebase(out: Any, edge: Node, inputs: list, n_outputs: int) -> Any:
    """``ctx.mark_dirty``: ``out`` was written in place by forward; its history
    becomes this Function (on a view, through the base, as any in-place write)."""
    if out.requires_grad_flag and out._grad_fn is None and out._base is None:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )
    if not any(out is t for t in inputs):
        warnings.warn(
            "ctx.mark_dirty() received a tensor that was not an input. Only input "
            "Tensors that have been mutated should be passed to ctx.mark_dirty().",
            stacklevel=4,
        )
    if out._is_view() and n_outputs > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another "
            "Tensor, your Function cannot return more than one Tensor. This is not "
            "supported by the current autograd engine. You should either make sure "
            "the input is not a view (using .clone() for example) or make your "
            "Function only return one Tensor (potentially splitting it into two "
            "Functions: one doing the inplace that returns a single Tensor and a "
            "second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change."
        )
    out._check_inplace()  # a view of a leaf that requires grad
    out.grad, out._hooks, out._acc = None, None, None
    out._inplace(TensorBase._wrap(out._value(), requires_grad=True, grad_fn=edge))
    return out


_VIEW_ADVICE = (
    "This view was created inside a custom Function (or because an input was "
    "returned as-is) and the autograd logic to handle view+inplace would override "
    "the custom backward associated with the custom Function, leading to incorrect "
    "gradients. This behavior is forbidden. You can fix this by cloning the output "
    "of the custom Function."
)


def _forbid_inplace(out: Any, index: int, node_name: str) -> None:
    """An output that is a view: as in torch, neither it nor its base may be
    written in place afterwards (that would replace the custom backward).

    The view's own in-place handling (``_inplace_view``, ``_stale``) is replaced
    on this tensor only, with torch's errors.
    """
    op = node_name.removesuffix("Backward")
    out._gv = out._vc[0]
    ref = weakref.ref(out)

    def inplace_view(base: Any, result: Any) -> Any:
        raise RuntimeError(
            f"Output {index} of {op} is a view and is being modified inplace. "
            + _VIEW_ADVICE
        )

    def stale() -> bool:
        t = ref()
        # torch checks on grad_fn (and on use in an op), not on requires_grad
        asked = sys._getframe(1).f_code.co_name
        if t is not None and t._gv != t._vc[0] and asked != "requires_grad":
            raise RuntimeError(
                f"Output {index} of {op} is a view and its base or another view of "
                "its base has been modified inplace. " + _VIEW_ADVICE
            )
        return True if t is None else t.requires_grad_flag

    out.__dict__["_inplace_view"] = inplace_view
    out.__dict__["_stale"] = stale


# ---------------------------------------------------------------------------
# once_differentiable
# ---------------------------------------------------------------------------


def once_differentiable(fn: Any) -> Any:
    """A ``backward`` that is not itself differentiable: run with grad mode off.

    Where grad mode is on in a backward (``create_graph=True``) and a gradient
    coming in requires grad, torch returns gradients whose own backward raises
    "trying to differentiate twice ..." (:class:`_DelayedError`); so does compat.
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not is_grad_enabled():
            return outputs
        requires_grad = any(
            isinstance(arg, TensorBase) and arg.requires_grad for arg in args
        )
        if not requires_grad:
            return outputs
        single = not isinstance(outputs, tuple)

        def fake_requires_grad(v: Any) -> Any:
            if v is not None:
                v = v.detach()
                v.requires_grad = True
            return v

        return _DelayedError.apply(
            *(fake_requires_grad(v) for v in ((outputs,) if single else outputs))
        )

    return wrapper


class _DelayedError(Function):
    """torch's ``DelayedError`` node: aliases of a ``@once_differentiable``
    backward's gradients, whose own backward raises."""

    _node_name = "torch::autograd::Error"

    @staticmethod
    def forward(ctx: Any, *fakes: Any) -> Any:
        outs = tuple(None if v is None else v.detach() for v in fakes)
        return outs[0] if len(outs) == 1 else outs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable"
        )


_function_func.FUNCTION.append(Function)
