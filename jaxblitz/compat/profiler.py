"""Blitz 4, "Train the network" (where the time goes): ``torch.profiler``.

``record_function`` names a span of work, as a context manager or a decorator,
with ``jax.profiler.TraceAnnotation``: the name appears in a JAX trace (for
example one taken with ``jax.profiler.trace(log_dir)`` and opened in TensorBoard
or Perfetto). ``schedule``, ``ProfilerActivity`` and ``ProfilerAction`` are
torch's.

``profile`` is refused by name when it is made: what torch's profiler returns
(``key_averages()`` tables, its Chrome traces, an ``on_trace_ready`` callback that
receives the profiler) has no JAX counterpart. ``jax.profiler.trace(log_dir)``
around the steps records a trace of the same work instead.
"""

from __future__ import annotations

import contextlib
import enum
import warnings
from collections.abc import Callable
from typing import Any

import jax

from jaxblitz.compat.tensor import _dtype

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set[ProfilerActivity]:
    found = {ProfilerActivity.CPU}
    return (found | {ProfilerActivity.CUDA}) if _dtype.gpus() else found


class record_function(contextlib.ContextDecorator):  # noqa: N801 -- torch's name
    """A named span in JAX's trace (``jax.profiler.TraceAnnotation``); ``args``
    is kept with it as metadata."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._annotation: jax.profiler.TraceAnnotation | None = None

    def __enter__(self) -> record_function:
        metadata = {} if self.args is None else {"args": self.args}
        self._annotation = jax.profiler.TraceAnnotation(self.name, **metadata)
        self._annotation.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        annotation, self._annotation = self._annotation, None
        if annotation is not None:
            annotation.__exit__(*exc)


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """torch's schedule: each step's action (skip_first, then cycles of wait,
    warmup and active steps, ``repeat`` times or forever)."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        if mod_step < num_steps - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), "
            f"repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results",
            stacklevel=2,
        )
    return schedule_fn


_INSTEAD = (
    "torch's profiler results (key_averages() tables, its Chrome traces, the "
    "profiler given to on_trace_ready) have no JAX counterpart; wrap the steps in "
    "jax.profiler.trace(log_dir) to record a trace for TensorBoard or Perfetto, "
    "and name spans with torch.profiler.record_function"
)


class profile:  # noqa: N801 -- torch's name
    """Refused when made: see the module's docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"torch.profiler.profile is not supported by jaxblitz.compat: {_INSTEAD}"
        )


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable[[Any], None]:
    """The ``on_trace_ready`` handler torch's ``profile`` would call; compat's
    ``profile`` is refused, so it is never called."""

    def handler(prof: Any) -> None:
        raise NotImplementedError(
            "torch.profiler.tensorboard_trace_handler is not supported by "
            f"jaxblitz.compat: {_INSTEAD}"
        )

    return handler
