"""Blitz 4, "Train the network" (where the time goes): ``torch.profiler``.

``record_function`` names a span of work, as a context manager or a decorator,
with ``jax.profiler.TraceAnnotation``: the name appears in a JAX trace (for
example one taken with ``jax.profiler.trace(log_dir)`` and opened in TensorBoard
or Perfetto). ``schedule``, ``ProfilerActivity`` and ``ProfilerAction`` are
torch's.

``profile`` records compat's ops as torch's profiler records ATen's (the
recorder is :mod:`._profiling`, the results :mod:`._profiler_events`):
``key_averages()`` and its ``table()``, ``export_chrome_trace``, ``schedule``
with ``step()`` and ``on_trace_ready`` (``tensorboard_trace_handler``). Times
are the host's; ``jax.profiler.trace(log_dir)`` records the device's.
"""

from __future__ import annotations

import contextlib
import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import jax

from jaxblitz.compat import _profiler_events, _profiling
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
        self._event: list | None = None

    def __enter__(self) -> record_function:
        if _profiling.on:
            self._event: list | None = _profiling.begin(
                self.name, (), "user_annotation"
            )
        metadata = {} if self.args is None else {"args": self.args}
        self._annotation = jax.profiler.TraceAnnotation(self.name, **metadata)
        self._annotation.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        annotation, self._annotation = self._annotation, None
        if annotation is not None:
            annotation.__exit__(*exc)
        event, self._event = self._event, None
        if event is not None:
            _profiling.end(event)


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


class profile:  # noqa: N801 -- torch's name
    """torch's profiler: each op the user called (``aten::linear``), each backward
    node (``AddmmBackward0``) and each ``record_function`` span, timed on the
    host. In lazy mode ops are recorded, not run, when called: their events time
    the recording, and the work runs at the sync point, which is its own event
    (``compat::sync``). ``schedule`` and ``on_trace_ready`` as torch's; CPU
    activity only (a JAX trace, ``jax.profiler.trace(log_dir)``, shows the
    device's)."""

    def __init__(
        self,
        activities: Iterable[ProfilerActivity] | None = None,
        *,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[[Any], Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        **unused: Any,
    ) -> None:
        if with_flops:  # torch's table would have a FLOPs column compat cannot fill
            raise NotImplementedError(
                "profile(with_flops=True) is not supported by jaxblitz.compat: its "
                "events carry no FLOP counts"
            )
        self.activities = set(activities) if activities else supported_activities()
        self.record_steps = schedule is not None
        self.schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._events = _profiler_events.EventList((), profile_memory)
        self._step_span: record_function | None = None

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._transition(ProfilerAction.NONE, self.current_action)
        self._begin_step()

    def stop(self) -> None:
        self._end_step()
        self._transition(self.current_action, None)

    def step(self) -> None:
        """The next step begins: the schedule's action for it is taken."""
        self._end_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transition(prev, self.current_action)
        self._begin_step()

    def _recording(self, action: Any) -> bool:
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _transition(self, prev: Any, now: Any) -> None:
        if self._recording(prev):
            if prev is ProfilerAction.RECORD and self._recording(now):
                return  # the cycle goes on
            raw = _profiling.stop()
            self._events = _profiler_events.build(raw, self.profile_memory)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if self._recording(now):  # warm-up steps: nothing of theirs is kept
            _profiling.start(self.record_shapes, self.profile_memory)

    def _begin_step(self) -> None:
        if self.record_steps and _profiling.on:
            self._step_span = record_function(f"ProfilerStep#{self.step_num}")
            self._step_span.__enter__()

    def _end_step(self) -> None:
        span, self._step_span = self._step_span, None
        if span is not None:
            span.__exit__(None, None, None)

    def events(self) -> _profiler_events.EventList:
        return self._events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> _profiler_events.EventList:
        if group_by_stack_n:  # torch's rows by source location: no stacks here
            raise NotImplementedError(
                "key_averages(group_by_stack_n=...) is not supported by "
                "jaxblitz.compat: its events record no Python stacks"
            )
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        self._events.export_chrome_trace(path)

    @property
    def profiler(self) -> profile:  # torch: the autograd profiler underneath
        return self


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each cycle's Chrome trace to
    ``dir_name/<worker_name>.<ns>.pt.trace.json`` (TensorBoard's profile plugin
    reads the folder)."""

    def handler(prof: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler
