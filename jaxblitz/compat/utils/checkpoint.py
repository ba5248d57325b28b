"""``torch.utils.checkpoint``: activation checkpointing, with torch's arguments,
warnings and errors.

torch saves memory by keeping no activations of the checkpointed piece and
running it again during ``backward``; compat runs it once and keeps what its
backward needs, so the values and gradients are the same and the memory is
not saved. Where torch's reentrant variant (``use_reentrant=True``, the
default) gives no gradients -- no input requires grad -- compat runs the piece
without recording it, as torch's forward does."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from jaxblitz.compat.autograd.grad_mode import is_grad_enabled, no_grad
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


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
    kwargs.pop("preserve_rng_state", True)  # one run: the same random numbers
    if not use_reentrant:
        forward, _ = context_fn()
        with forward:
            return function(*args, **kwargs)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not noop_context_fn or debug is not False:
        raise ValueError(
            "Passing `context_fn` or `debug` is only supported when "
            "use_reentrant=False."
        )
    if not any(isinstance(a, TensorBase) and a.requires_grad for a in args):
        if is_grad_enabled():
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                stacklevel=2,
            )
        with no_grad():
            return function(*args)
    return function(*args)


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
