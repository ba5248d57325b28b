"""``torch.utils.checkpoint``: activation checkpointing, with torch's arguments,
warnings and errors, and its recomputation: the checkpointed piece runs again
during ``backward`` (the random generator's state put back first unless
``preserve_rng_state=False``), and the values it computes then are the ones
the gradient is computed from, as torch's.

The reentrant variant (``use_reentrant=True``, the default) is torch's
``CheckpointFunction``: an ``autograd.Function`` whose forward runs the piece
under ``no_grad`` and whose backward runs it again and back-propagates through
it. The non-reentrant variant records the piece as usual, each node noting
itself (:data:`jaxblitz.compat.autograd.graph.observers`); when ``backward``
first reaches one of the nodes torch would have saved tensors for, the piece
runs again and each node takes the arrays its recomputed twin saved. As
torch's, it stops once the last such node is recorded again (``early_stop``)
and checks that what was recomputed has the forward's shapes and dtypes
(``determinism_check``). compat keeps a node's inputs until its backward, so
no memory is saved: the behaviour is torch's, not the saving."""

from __future__ import annotations

import contextlib
import functools
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from jaxblitz.compat.autograd import graph
from jaxblitz.compat.autograd.function import Function
from jaxblitz.compat.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "CheckpointError",
    "checkpoint",
    "checkpoint_sequential",
    "noop_context_fn",
]


class CheckpointError(RuntimeError):
    """torch's error for a recomputation that does not match the forward."""


def noop_context_fn() -> tuple[Any, Any]:
    """torch's default ``context_fn``: no context for the forward or recompute."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_RECOMMENDED = (
    "use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)
_EXPLICIT = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed "
    "explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
    "will raise an exception. " + _RECOMMENDED
)
_EXPLICIT_SEQUENTIAL = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
    "should be passed explicitly. In version 2.9 we will raise an exception if "
    "use_reentrant is not passed. " + _RECOMMENDED
)


@contextlib.contextmanager
def _replayed_rng(state: Any) -> Iterator[None]:
    """The default generator at ``state`` (None: as it is), and back after."""
    from jaxblitz.compat.random import fork_rng
    from jaxblitz.compat.tensor.creation import set_rng_state

    with fork_rng(enabled=state is not None):
        if state is not None:
            set_rng_state(state)
        yield


def _rng_state(preserve: bool) -> Any:
    from jaxblitz.compat.tensor.creation import get_rng_state

    return get_rng_state() if preserve else None


def _detached(args: Iterable[Any]) -> tuple[Any, ...]:
    """torch's ``detach_variable``: tensors detached, requiring grad as before."""
    out = []
    for a in args:
        if isinstance(a, TensorBase):
            d = a.detach()
            d.requires_grad = a.requires_grad
            a = d
        out.append(a)
    return tuple(out)


# -- use_reentrant=True --------------------------------------------------------------


class CheckpointFunction(Function):
    """torch's reentrant checkpoint, step for step."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args):
        if not any(a.requires_grad for a in args if isinstance(a, TensorBase)):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                stacklevel=2,
            )
        ctx.run_function = run_function
        ctx.rng_state = _rng_state(preserve_rng_state)
        ctx.arguments = [None if isinstance(a, TensorBase) else a for a in args]
        ctx.tensor_indices = [
            i for i, a in enumerate(args) if isinstance(a, TensorBase)
        ]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        from jaxblitz.compat.autograd import backward

        inputs = list(ctx.arguments)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        with _replayed_rng(ctx.rng_state):
            detached = _detached(inputs)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, TensorBase):
            outputs = (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads, strict=False)
            if isinstance(o, TensorBase) and o.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not "
                "necessary"
            )
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(
            d.grad if isinstance(d, TensorBase) else None for d in detached
        )


# -- use_reentrant=False -------------------------------------------------------------


class _StopRecomputation(Exception):  # noqa: N818 -- torch's, less its suffix
    """Raised as the last node torch would save for is recorded again."""


@contextlib.contextmanager
def _observing(observe: Callable[[graph.Node], None]) -> Iterator[None]:
    graph.observers.append(observe)
    try:
        yield
    finally:
        graph.observers.remove(observe)


# torch's nodes that save no tensor (shapes and scalars at most): reaching one
# recomputes nothing. Read off torch's grad_fns' ``_saved_*`` attributes.
_SAVES_NOTHING = frozenset(
    {
        "AddBackward0",
        "CatBackward0",
        "CloneBackward0",
        "ConstantPadNdBackward0",
        "ExpandBackward0",
        "FlipBackward0",
        "MeanBackward0",
        "MeanBackward1",
        "NegBackward0",
        "PermuteBackward0",
        "RepeatBackward0",
        "RollBackward0",
        "RsubBackward1",
        "SelectBackward0",
        "SignBackward0",
        "SliceBackward0",
        "SplitBackward0",
        "SqueezeBackward1",
        "StackBackward0",
        "SubBackward0",
        "SumBackward0",
        "SumBackward1",
        "TBackward0",
        "ToCopyBackward0",
        "TransposeBackward0",
        "UnsqueezeBackward0",
        "ViewBackward0",
    }
)


def _saves(node: graph.Node) -> bool:
    """Whether torch's node of this name saves a tensor here (one of a name
    compat knows neither way is taken to save one, as most do)."""
    name = type(node).__name__
    if name in graph._SAVES:
        return bool(node.checks)
    return name not in _SAVES_NOTHING


def _metadata(node: graph.Node) -> list[tuple]:
    return [(tuple(a.shape), a.dtype) for a in node.saved or () if hasattr(a, "shape")]


class _Region:
    """A checkpointed piece's nodes, and how to recompute and swap their arrays."""

    def __init__(self, recompute: Callable[[], None], early_stop: bool, check: bool):
        self.recompute_fn, self.early_stop, self.check = recompute, early_stop, check
        self.nodes: list[weakref.ref] = []  # every node recorded, in order
        self.last = -1  # position of the last node torch saves for
        self.waiting: set[int] = set()  # the saving nodes not yet run backward

    def record(self, node: graph.Node) -> None:
        if not isinstance(node, graph.AccumulateGrad):
            self.nodes.append(weakref.ref(node))

    def close(self) -> None:
        """After the forward: hook the nodes torch saves for."""
        hook = self.before_backward
        for i, ref in enumerate(self.nodes):
            node = ref()
            if node is not None and _saves(node):
                self.last = i
                node.register_prehook(functools.partial(hook, ref))

    def before_backward(self, ref: weakref.ref, grads: Any) -> None:
        node = ref()
        if node is None or node.saved is None:
            return  # freed by an earlier backward: the node's own error follows
        key = id(node)
        if not self.waiting:  # the first of this backward: recompute
            forward = [ref() for ref in self.nodes]
            self.swap(forward, self.recomputed())
            self.waiting = {id(n) for n in forward[: self.last + 1] if n and _saves(n)}
        self.waiting.discard(key)

    def recomputed(self) -> list[graph.Node]:
        made: list[graph.Node] = []

        def observe(node: graph.Node) -> None:
            if isinstance(node, graph.AccumulateGrad):
                return
            made.append(node)
            if self.early_stop and len(made) > self.last:
                raise _StopRecomputation

        with contextlib.suppress(_StopRecomputation), _observing(observe):
            self.recompute_fn()
        return made

    def swap(self, forward: list, again: list) -> None:
        wanted = self.last + 1
        if len(again) < wanted:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of ops saving tensors during forward: {wanted}\n"
                f"Number of ops saving tensors during recomputation: {len(again)}"
            )
        if not self.early_stop and len(again) > len(forward):
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during "
                "recomputation than during the original forward pass."
            )
        for i, (old, new) in enumerate(zip(forward[:wanted], again, strict=False)):
            if old is None or old.saved is None:
                continue  # gone, or run already by this backward
            same = type(old) is type(new) and len(old.saved) == len(new.saved)
            if same and self.check:
                same = _metadata(old) == _metadata(new)
            if not same:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following "
                    "tensors have different metadata than during the forward pass.\n"
                    f"op at position {i}: {old.name()}\n"
                    f"saved metadata: {_metadata(old)}\n"
                    f"recomputed metadata: {_metadata(new)}\n"
                )
            old.saved, old.checks = new.saved, new.checks


def _without_reentrant(
    function: Callable[..., Any],
    preserve: bool,
    context_fn: Callable[[], tuple[Any, Any]],
    determinism_check: str,
    debug: bool,
    early_stop: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    if debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        raise NotImplementedError(
            "torch.utils.checkpoint: debug=True (torch's operator logs of the "
            "forward and the recomputation) is not supported by jaxblitz.compat"
        )
    if determinism_check not in ("default", "none"):
        raise ValueError(
            "determinism_check should be one of ['default', 'none'], but got "
            f"{determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    state = _rng_state(preserve)
    if not is_grad_enabled():
        return function(*args, **kwargs)
    inputs = _detached(args)

    def recompute() -> None:
        with _replayed_rng(state), enable_grad(), recompute_context:
            function(*inputs, **kwargs)

    region = _Region(recompute, early_stop, determinism_check == "default")
    suppressed = True
    with _observing(region.record), forward_context:
        out = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn "
            "suppressed an exception raised during the checkpointed forward. This "
            "is not supported because checkpoint cannot return a value for a "
            "failed forward."
        )
    region.close()
    return out


# -- the entry points ----------------------------------------------------------------


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, as torch's checkpoint computes it."""
    if use_reentrant is None:
        warnings.warn(_EXPLICIT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when "
                "use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    return _without_reentrant(
        function,
        preserve,
        context_fn,
        determinism_check,
        debug,
        early_stop,
        args,
        kwargs,
    )


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,  # noqa: A002 -- torch's name
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """The modules (or callables) of ``functions`` applied in turn to ``input``,
    checkpointed ``segments`` pieces at a time as torch's."""
    if use_reentrant is None:
        warnings.warn(_EXPLICIT_SEQUENTIAL, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from jaxblitz.compat.nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions) if isinstance(functions, Iterable) else functions

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(  # noqa: A001
            run(start, end),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run(end + 1, len(functions) - 1)(input)
