"""Blitz 3, "Neural Networks" (a defined Net, made faster or shipped): ``torch.jit``.

compat answers ``torch.jit`` as PyTorch does with TorchScript switched off
(``PYTORCH_JIT=0``, TorchScript's own debugging switch): ``script`` and ``trace``
return the function or module they are given, unchanged, so it runs exactly as
the original (the same parameters, ``state_dict``, ``train()``/``eval()``), with
PyTorch's deprecation warnings. Nothing is compiled here: ``torch.compile``
(:mod:`jaxblitz.compat.compile`) turns a training step into one XLA program, and
it is not used behind ``script``'s back, because a compiled step may not read
tensor values where a script could.

Where this differs from TorchScript switched on: a scripted module is its own
class, not a :class:`ScriptModule` (as with ``PYTORCH_JIT=0``); a traced
function follows the values on every call, where a trace records the example's
path (and warns with ``TracerWarning`` about value-dependent branches);
``freeze`` and ``optimize_for_inference`` accept any module, since ``script``
returns modules unchanged, and return it. TorchScript archives cannot be written
or read: ``save`` and ``load`` are refused by name, pointing at
``torch.save(model.state_dict())``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Final

from jaxblitz.compat import _not_offered
from jaxblitz.compat.nn.module import Module

__all__ = [
    "Attribute",
    "Error",
    "Final",
    "Future",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "ScriptWarning",
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "annotate",
    "export",
    "fork",
    "freeze",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "optimized_execution",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

_SWITCH = "Please switch to `torch.compile` or `torch.export`."
_USE_COMPILE = "Please use `torch.compile` instead."


def _deprecated(name: str, advice: str = _USE_COMPILE) -> None:
    warnings.warn(f"`torch.jit.{name}` is deprecated. {advice}", DeprecationWarning, 3)


class Error(RuntimeError):
    """torch.jit.Error: an error raised by TorchScript code."""


class TracerWarning(Warning):
    """torch.jit.TracerWarning (never given: compat's trace records nothing)."""


class ScriptWarning(Warning):
    """torch.jit's warning from compiled code."""


class ScriptModule(Module):
    """torch.jit.ScriptModule: a base class to subclass, as with ``PYTORCH_JIT=0``.

    ``script``/``trace`` return modules unchanged, so no module they return is one.
    """


class RecursiveScriptModule(ScriptModule):
    """The type torch's ``script(module)`` returns (for ``isinstance`` checks)."""


class TracedModule(ScriptModule):
    """The type torch's ``trace(module)`` returns (for ``isinstance`` checks)."""


class TopLevelTracedModule(TracedModule):
    """The type torch's ``trace(module)`` returns (for ``isinstance`` checks)."""


class ScriptFunction:
    """The type torch's ``script(function)`` returns (for ``isinstance`` checks)."""


def script(
    obj: Any,
    optimize: None = None,
    _frames_up: int = 0,
    _rcb: Any = None,
    example_inputs: Any = None,
) -> Any:
    """``obj`` itself, as torch's ``script`` with ``PYTORCH_JIT=0``."""
    _deprecated("script", _SWITCH)
    return obj


def script_method(fn: Callable) -> Callable:
    """``fn`` itself, as torch's ``script_method`` with ``PYTORCH_JIT=0``."""
    _deprecated("script_method", _SWITCH)
    return fn


def trace(
    func: Any,
    example_inputs: Any = None,
    optimize: None = None,
    check_trace: bool = True,
    check_inputs: Any = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    example_kwarg_inputs: Any = None,
    **kwargs: Any,
) -> Any:
    """``func`` itself, not run, as torch's ``trace`` with ``PYTORCH_JIT=0``: it
    follows the values on every call rather than the example's recorded path."""
    _deprecated("trace", _SWITCH)
    return func


def trace_module(mod: Module, inputs: Any = None, **kwargs: Any) -> Module:
    """``mod`` itself (see :func:`trace`)."""
    _deprecated("trace_method", _SWITCH)  # torch names it so
    return mod


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    return the_value


def Attribute(value: Any, type: Any) -> Any:  # noqa: N802 -- torch's name
    """``value``, as torch's ``Attribute`` outside TorchScript."""
    return value


def _mark(fn: Any, modifier: str) -> Any:
    # torch records the modifier on the function (its `_torchscript_modifier`);
    # a property's getter and setter carry it.
    for target in (fn.fget, fn.fset) if isinstance(fn, property) else (fn,):
        if target is not None:
            target._torchscript_modifier = modifier
    return fn


def export(fn: Callable) -> Callable:
    """``fn``, marked as torch marks a method compiled with its module."""
    return _mark(fn, "export")


def unused(fn: Any) -> Any:
    """``fn``, marked as torch marks a method left out of compilation."""
    return _mark(fn, "unused")


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore``, ``@ignore(drop=...)``: the function, marked, as torch's."""
    if callable(drop):  # used as a bare decorator
        return _mark(drop, "ignore")
    if not isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}"
        )
    drop_on_export = kwargs.pop("drop_on_export", None)
    if not (drop_on_export or drop):
        return lambda fn: _mark(fn, "ignore")
    option = "drop_on_export=True" if drop_on_export else "True"
    warnings.warn(
        f"ignore({option}) has been deprecated. TorchScript will now drop the "
        "function call on compilation. Use torch.jit.unused now. {}",
        FutureWarning,
        stacklevel=2,
    )
    return lambda fn: _mark(fn, "unused")


def script_if_tracing(fn: Callable) -> Callable:
    """``fn``: compat never traces, so it is never scripted."""
    return fn


class Future:
    """torch.Future for a call that has already run: ``wait``/``value`` give its
    result."""

    def __init__(self, result: Any = None) -> None:
        self._result = result

    def done(self) -> bool:
        return True

    def wait(self) -> Any:
        return self._result

    value = wait

    def then(self, callback: Callable[[Future], Any]) -> Future:
        return Future(callback(self))

    def add_done_callback(self, callback: Callable[[Future], Any]) -> None:
        callback(self)


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Runs ``func(*args, **kwargs)`` at once, as torch's eager ``fork`` does; its
    error is raised here."""
    _deprecated("fork")
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    _deprecated("wait")
    return future.wait()


def freeze(
    mod: Module,
    preserved_attrs: list[str] | None = None,
    optimize_numerics: bool = True,
) -> Module:
    """``mod`` itself: compat's modules have no TorchScript graph to fold."""
    _deprecated("freeze")
    _check_module("freeze", mod)
    return mod


def optimize_for_inference(
    mod: Module, other_methods: list[str] | None = None
) -> Module:
    """``mod`` itself: compat's modules have no TorchScript graph to optimise."""
    _deprecated("optimize_for_inference")
    _check_module("optimize_for_inference", mod)
    return mod


def _check_module(name: str, mod: Any) -> None:
    if not isinstance(mod, Module):
        raise RuntimeError(
            f"{'Freezing' if name == 'freeze' else name} expects a ScriptModule as "
            "input. Please use torch.jit.script or torch.jit.trace to script your "
            "'nn.Module'."
        )


class optimized_execution:  # noqa: N801 -- torch's name
    """A context manager that changes nothing (no TorchScript executor to tune)."""

    def __init__(self, should_optimize: bool) -> None:
        pass

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


fuser = optimized_execution  # torch.jit.fuser("fuser1") likewise changes nothing

_ARCHIVE = (
    "compat cannot {} TorchScript archives (compiled TorchScript programs); save "
    "the weights with torch.save(model.state_dict(), path) and load them into the "
    "model's class with model.load_state_dict(torch.load(path))"
)


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Refused: see the module's docstring."""
    raise NotImplementedError(
        "torch.jit.save is not supported by jaxblitz.compat: "
        + _ARCHIVE.format("write")
    )


def load(
    f: Any, map_location: Any = None, _extra_files: Any = None, **kwargs: Any
) -> Any:
    """Refused: see the module's docstring."""
    raise NotImplementedError(
        "torch.jit.load is not supported by jaxblitz.compat: " + _ARCHIVE.format("read")
    )


_NOT_OFFERED = (
    "CompilationUnit",
    "interface",
    "isinstance",
    "export_opnames",
    "set_fusion_strategy",
    "enable_onednn_fusion",
    "onednn_fusion_enabled",
    "strict_fusion",
    "last_executed_optimized_graph",
    "run_frozen_optimizations",
    "save_jit_module_to_flatbuffer",
    "jit_module_from_flatbuffer",
)


def __getattr__(name: str) -> Any:
    if name in _NOT_OFFERED:
        raise _not_offered.refusal(
            f"torch.jit.{name} is not supported by jaxblitz.compat: compat runs "
            "modules and functions as written, with no TorchScript compiler",
            __name__,
        )
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
