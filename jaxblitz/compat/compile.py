"""Blitz 4, "Train the network": ``torch.compile`` -- the loop body as one XLA program.

    step = torch.compile(step)        # the Blitz's step, unchanged

    def step(inputs, labels):
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss

The first call traces the step with the modules' parameters, buffers and grads,
the optimizers' state and hyperparameters and the generator's key swapped for
tracers (:mod:`jaxblitz.compat._functionalize`), and compiles it with ``jax.jit``,
donating that state; later calls run the program and write the new state back.
A program is reused until input shapes/dtypes, the modules or optimizers, their
tensors, ``train()``/``eval()`` or grad mode change. A changed ``lr`` is an input,
not a reason to recompile.

Where this differs from torch: the step must not need tensor values while it is
traced (``.item()``, ``print(tensor)``, ``if tensor:``); that is a
:class:`CompileError` naming the cause, or, with ``eager_fallback=True``, a warning
and an eager step (torch would insert a graph break). Returned tensors are values:
``backward()`` belongs inside the step. Python side effects (appending to a list,
changing ``lr`` inside the step) run at tracing only, as in ``jax.jit``.
"""

from __future__ import annotations

import contextlib
import functools
import types
import warnings
from collections.abc import Callable
from typing import Any

import jax

from jaxblitz.compat import lazy
from jaxblitz.compat._functionalize import Frame, GradRead
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.optim import Optimizer
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TracedValueError

__all__ = ["CompileError", "CompiledFunction", "compile"]


class CompileError(RuntimeError):
    """The step needs something a traced program cannot give; the message says what."""


# A value needed where no Tensor method could name it (JAX's own errors).
_CONCRETE = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
)


_UNNAMED = ("reading a tensor's value", "keep tensor values inside the step", "")


def _message(fn_name: str, err: BaseException) -> str:
    """What needed a value (and where: a :class:`TracedValueError` says), and why."""
    what, todo, where = _UNNAMED
    if isinstance(err, TracedValueError):
        what, todo, where = err.what, err.todo, err.where
    return (
        f"torch.compile cannot compile {fn_name}: {what}{where} needs a tensor's "
        "value, and inside a compiled step tensors have none yet -- the whole step "
        f"is traced once into one XLA program. To fix it, {todo}. Or run this step "
        f"eagerly: torch.compile({fn_name}, eager_fallback=True)."
    )


def discover(fn: Any, args: tuple, kwargs: dict) -> tuple[list, list]:
    """The modules and optimizers ``fn`` receives, closes over or names globally."""
    found: dict[int, Any] = {}
    seen: set[int] = set()

    def visit(obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > 3:
            return
        seen.add(id(obj))
        if isinstance(obj, Module | Optimizer):
            found.setdefault(id(obj), obj)
        elif isinstance(obj, list | tuple):
            for item in obj:
                visit(item, depth + 1)
        elif isinstance(obj, dict):
            for item in obj.values():
                visit(item, depth + 1)
        elif isinstance(obj, types.MethodType):
            visit(obj.__self__, depth)
            visit(obj.__func__, depth)
        elif isinstance(obj, types.FunctionType):
            names = obj.__code__.co_names
            for name in names:  # globals the body names, and helpers they call
                if name in obj.__globals__:
                    visit(obj.__globals__[name], depth + 1)
            for cell in obj.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    visit(cell.cell_contents, depth + 1)
            visit(obj.__defaults__ or (), depth + 1)
        elif hasattr(obj, "func") and hasattr(obj, "keywords"):  # functools.partial
            visit([obj.func, obj.args, obj.keywords], depth)
        elif depth == 0 and hasattr(obj, "__dict__") and not isinstance(obj, type):
            visit(dict(vars(obj)), depth + 1)  # a callable object's attributes

    visit(fn, 0)
    visit([args, kwargs], 0)
    modules = [m for m in found.values() if isinstance(m, Module)]
    return modules, [o for o in found.values() if isinstance(o, Optimizer)]


_TRACING: list[bool] = []  # one entry per step being traced, nested or not


@contextlib.contextmanager
def tracing() -> Any:
    """Marks a step being traced (``torch.compiler.is_compiling()``)."""
    _TRACING.append(True)
    try:
        yield
    finally:
        _TRACING.pop()


def is_tracing() -> bool:
    return bool(_TRACING)


class _Entry:
    """One compiled program: a cache entry for one structure of the state."""

    def __init__(self, fn: Callable, free: bool):
        self.fn, self.free, self.frame = fn, free, None
        self.result_spec: Any = None
        self.jitted = jax.jit(self._program, donate_argnums=0)
        self.programs = 0  # traces that finished, each compiled into a program

    def _program(self, donated: tuple, kept: tuple):
        frame = self.frame
        with frame.swapped(donated, kept, self.free) as (args, kwargs), tracing():
            result = self.fn(*args, **kwargs)
            state = frame.collect(self.free)
            leaves, treedef = jax.tree.flatten(result)
            arrays, kinds = [], []
            for leaf in leaves:
                if isinstance(leaf, Tensor):
                    arrays.append(leaf._data)
                    kinds.append(Tensor)
                elif isinstance(leaf, jax.Array):
                    arrays.append(leaf)
                    kinds.append(jax.Array)
                else:  # a Python constant of the trace
                    kinds.append(leaf)
        self.result_spec = treedef, kinds
        self.programs += 1
        return state, arrays

    def __call__(self, frame: Frame):
        self.frame = frame
        try:
            with x64(True):
                state, arrays = self.jitted(*frame.inputs(self.free))
        finally:
            self.frame = None  # hold no objects between calls
        frame.write_back(state)
        treedef, kinds = self.result_spec
        it = iter(arrays)
        leaves = [
            Tensor._wrap(next(it)) if k is Tensor else next(it) if k is jax.Array else k
            for k in kinds
        ]
        return jax.tree.unflatten(treedef, leaves)


class CompiledFunction:
    """``torch.compile(fn)``: call it like ``fn``; see the module doc."""

    def __init__(self, fn: Callable, eager_fallback: bool = False):
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.eager_fallback = eager_fallback
        self.eager = False  # set once the step could not be compiled (fallback)
        self.traces = 0  # Python traces, including ones that were not kept
        self._cache: dict[tuple, _Entry] = {}

    @property
    def compilations(self) -> int:
        """How many XLA programs were compiled for this function so far."""
        return sum(e.programs for e in self._cache.values())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.eager:
            return self.fn(*args, **kwargs)
        # The program donates the arrays it updates: pending work that reads
        # them (lazy mode) runs first.
        lazy.sync()
        frame = Frame(*discover(self.fn, args, kwargs), args, kwargs)
        entry = self._cache.get((frame.key, "free")) if frame.free_ok else None
        if entry is None:
            entry = self._cache.get((frame.key, frame.grad_mask))
        if entry is not None:
            return entry(frame)
        return self._compile(frame, args, kwargs)

    def _compile(self, frame: Frame, args: tuple, kwargs: dict) -> Any:
        # First try a program that ignores the grads the step was given (it calls
        # zero_grad() before backward()); it then serves every later call whether
        # or not .grad is set. If the step reads them, key on which grads exist.
        variants = [("free", True)] if frame.free_ok else []
        variants.append((frame.grad_mask, False))
        for tag, free in variants:
            entry = _Entry(self.fn, free)
            self.traces += 1
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", "Some donated buffers")
                    out = entry(frame)
            except GradRead:
                continue
            except _CONCRETE as err:
                message = _message(getattr(self.fn, "__name__", "step"), err)
                if not self.eager_fallback:
                    raise CompileError(message) from err
                warnings.warn(
                    message + " Running it eagerly (eager_fallback=True).",
                    RuntimeWarning,
                    stacklevel=3,
                )
                self.eager = True
                return self.fn(*args, **kwargs)
            self._cache[(frame.key, tag)] = entry
            return out
        raise AssertionError("unreachable: only the 'free' variant has stand-ins")


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "xla",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
    eager_fallback: bool = False,
) -> Any:
    """``torch.compile(fn)``: one ``jax.jit`` program for a torch-style step.

    Works as a call or a decorator (``@torch.compile`` or
    ``@torch.compile(eager_fallback=True)``). ``fullgraph``, ``dynamic``,
    ``backend``, ``mode`` and ``options`` are accepted for torch's signature and
    ignored: the whole step is always one program, specialised to its shapes.

    Args:
      model: the step function (or a module, for a compiled forward).
      disable: return ``model`` unchanged (torch's switch).
      eager_fallback: when the step cannot be traced, warn and run it eagerly
        from then on instead of raising :class:`CompileError`.
    """

    def wrap(fn: Callable) -> Any:
        # torch.compiler.disable'd: torch runs it eagerly, so it stays as it is
        off = disable or getattr(fn, "_torchdynamo_disable", False)
        return fn if off else CompiledFunction(fn, eager_fallback)

    return wrap if model is None else wrap(model)
