"""Blitz 4, "Train the network" (where the time goes): the recorder behind
``torch.profiler.profile`` -- one event per op the user called, per backward
node, per ``record_function`` span and per lazy sync, timed on the host.

The hot path: while no profiler records, compat's funnel (``graph.apply``)
reads :data:`on` and nothing else, and the entry points that autocast hooks
read ``_autocast.on`` as ever (the profiler sets it too, so those entry points
name the op the user called: ``aten::linear`` for ``F.linear``, not the matmul
inside). An op called inside another is part of it: torch shows the finer
ATen calls beneath, which compat's kernels do not have.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable
from typing import Any

on = False  # read by the funnel on every op: keep it a plain bool
record_shapes = False
profile_memory = False

# Each event: [name, start_ns, end_ns, parent event or None, input shapes,
# bytes of its results, kind ("cpu_op" or "user_annotation"), thread id]
events: list[list] = []
_open: list[list] = []  # the spans begun and not yet ended, innermost last
_ops = 0  # op spans open: ops called inside one are part of it

# torch's names where the funnel's node name says less than the user called
_USER_OPS = {
    "max_pool2d_with_indices": "max_pool2d",
    "max_pool3d_with_indices": "max_pool3d",
    "cross_entropy": "cross_entropy_loss",
}


@functools.cache
def aten_name(name: str) -> str:
    """``aten::max_pool2d`` for the node ``MaxPool2DWithIndicesBackward0`` (or
    the entry point ``max_pool2d``)."""
    if "::" in name:
        return name
    base = re.sub(r"Backward\d*$", "", name)
    base = re.sub(r"(\d)D", r"\1d", base)  # MaxPool2D -> MaxPool2d
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()
    return "aten::" + _USER_OPS.get(snake, snake)


def _shapes(args: tuple) -> list:
    return [list(a.shape) if hasattr(a, "element_size") else [] for a in args]


def _bytes(result: Any) -> int:
    if hasattr(result, "element_size"):
        return result.numel() * result.element_size()
    if isinstance(result, tuple | list):
        return sum(_bytes(r) for r in result)
    return 0


def begin(name: str, args: tuple = (), kind: str = "cpu_op") -> list:
    """Open a span; :func:`end` closes the innermost."""
    shapes = _shapes(args) if record_shapes else []
    parent = _open[-1] if _open else None
    event = [name, time.perf_counter_ns(), 0, parent, shapes, 0, kind, 0]
    event[7] = threading.get_ident()
    events.append(event)
    _open.append(event)
    return event


def end(event: list, result: Any = None) -> None:
    event[2] = time.perf_counter_ns()
    if profile_memory:
        event[5] = _bytes(result)
    while _open and _open.pop() is not event:
        pass  # a span left open inside (an exception went through it)


def timed(name: str, args: tuple, call: Callable, *a: Any, **kw: Any) -> Any:
    """``call(*a, **kw)`` as one op event named ``name``."""
    global _ops
    event = begin(name, args)
    _ops += 1
    result = None
    try:
        result = call(*a, **kw)
        return result
    finally:
        _ops -= 1
        end(event, result)


def op(name: str, args: tuple, call: Callable, *a: Any, **kw: Any) -> Any:
    """An op the user called, unless it runs inside another op."""
    if _ops or not on:
        return call(*a, **kw)
    return timed(aten_name(name), args, call, *a, **kw)


def backward(node: Any, grad: Any) -> Any:
    """A backward node's VJP as its event (``ReluBackward0``); compat's own
    nodes (the graph's root) are not torch's and go unrecorded."""
    name = node.name()
    if name.startswith("_"):
        return node.apply_vjp(grad)
    return timed(name, (), node.apply_vjp, grad)


def quiet(name: str, call: Callable, *a: Any) -> Any:
    """``call`` as one event with nothing inside recorded (a lazy sync: the
    pending ops ran as one program, timed here as a whole)."""
    global on
    event = begin(name)
    on = False
    try:
        return call(*a)
    finally:
        on = True
        end(event)


# autocast's refresh of its entry points' flag (which reads ``on`` too), set by
# that module when it loads: it calls this one, so no import circle
REFRESH: list = []


def start(shapes: bool, memory: bool) -> None:
    global on, record_shapes, profile_memory
    record_shapes, profile_memory = shapes, memory
    clear()
    on = True
    for refresh in REFRESH:
        refresh()


def stop() -> list[list]:
    """Stop recording; the finished events, in the order they began."""
    global on
    on = False
    for refresh in REFRESH:
        refresh()
    return clear()


def clear() -> list[list]:
    global events
    done = [e for e in events if e[2]]
    events = []
    _open.clear()
    return done
