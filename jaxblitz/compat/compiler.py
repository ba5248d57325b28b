"""Blitz 4 (train the network): ``torch.compiler`` -- the queries and switches
scripts use around ``torch.compile`` (``is_compiling``, ``disable``, ``reset``).

compat's ``torch.compile`` traces the whole step into one ``jax.jit`` program
(:mod:`jaxblitz.compat.compile`): it has no graph breaks, so a function disabled
with :func:`disable` and called inside a compiled step is traced with the rest,
as ``jax.jit`` traces Python; compiled on its own, it runs eagerly, as in torch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from jaxblitz.compat import _not_offered
from jaxblitz.compat import compile as _compile_module

__all__ = [
    "compile",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "reset",
]


def compile(*args: Any, **kwargs: Any) -> Any:
    """``torch.compiler.compile``: ``torch.compile``."""
    return _compile_module.compile(*args, **kwargs)


def is_compiling() -> bool:
    """True while ``torch.compile`` traces a step (its Python runs once, to
    build the program), False when the step or any other code runs eagerly."""
    return _compile_module.is_tracing()


def is_dynamo_compiling() -> bool:
    """compat's tracer stands in for TorchDynamo: :func:`is_compiling`."""
    return is_compiling()


def is_exporting() -> bool:
    """False: compat has no ``torch.export``."""
    return False


def reset() -> None:
    """Nothing process-wide to reset: each ``torch.compile``'d function keeps
    its own programs, dropped with it (torch clears TorchDynamo's caches)."""


def disable(
    fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None
) -> Any:
    """``torch.compiler.disable``: a decorator, or a wrapper of ``fn``, marking it
    as not to be compiled: ``torch.compile`` leaves it eager. Inside another
    compiled step it is traced with the step (the module doc says why)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if not callable(fn):
        raise AssertionError("fn must be callable")

    @functools.wraps(fn)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    disabled._torchdynamo_disable = True  # type: ignore[attr-defined]
    return disabled


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.compiler",
    _not_offered.each(
        """allow_in_graph assume_constant_result config cudagraph_mark_step_begin
        get_default_backend keep_portable_guards_unsafe keep_tensor_guards_unsafe
        list_backends load_cache_artifacts load_compiled_function
        nested_compile_region save_cache_artifacts set_default_backend
        set_enable_guard_collectives set_stance skip_all_guards_unsafe
        skip_guard_on_all_nn_modules_unsafe skip_guard_on_globals_unsafe
        skip_guard_on_inbuilt_nn_modules_unsafe substitute_in_graph
        wrap_numpy""",
        "TorchDynamo's and TorchInductor's controls: compat's torch.compile is "
        "jax.jit of the whole step, with no guards, backends or graph breaks",
    ),
)
