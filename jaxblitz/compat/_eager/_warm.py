"""Blitz 4's first step, compiled ahead on a spare core.

Every op of a compat step runs its own small XLA program, compiled the first
time its shapes are seen: the first training step compiles the forward's
programs as they run, then the backward's and the optimizer's. The backward's
and the optimizer's programs are known earlier -- a backward program as soon as
its forward op is recorded, the optimizer's when the optimizer is built -- so
while the forward runs, one background thread calls them once on zeros of the
right shapes and dtypes: that compiles them into the same jit caches the real
calls use, on the other core. The real call waits for its warm-up (no program is
compiled twice) and then finds it ready.

Only until the first backward pass has finished (:func:`done`): later steps
reuse the programs, and checking for new shapes would cost every op a little.
Off on a one-core machine and with ``JAXBLITZ_WARM=0``. A warm-up that fails is
ignored: the real call then compiles (and raises) as it would have.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import from_host

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_spare = (os.cpu_count() or 1) > 1 and os.environ.get("JAXBLITZ_WARM", "1") != "0"
_active = _spare


def spare() -> bool:
    """Whether a spare core compiles ahead (not on one core, nor with
    ``JAXBLITZ_WARM=0``): for the first step's warm-ups and for
    :func:`ahead`."""
    return _spare


def active() -> bool:
    """Whether warm-ups are still being made (until the first backward is done;
    never while compat is lazy: a lazy step compiles as one program)."""
    return _active and not lazy.is_lazy()


def done() -> None:
    """The first backward pass has run: no more warm-ups (those of nodes whose
    backward has not run are forgotten: their real call compiles if need be)."""
    global _active
    _active = False
    pending.clear()


def zeros(like: jax.Array) -> jax.Array:
    """Zeros with ``like``'s shape, dtype and placement, compiling nothing."""
    return from_host(np.zeros(like.shape, like.dtype), like)


def traced(arrays: Any) -> bool:
    """Whether any of ``arrays`` is a tracer (inside ``torch.compile``: the real
    program is compiled there, nothing to warm)."""
    return any(isinstance(a, jax.core.Tracer) for a in arrays)


_seen: set = set()
_MAX_SEEN = 512  # then stop: a script that never calls backward()
# A node's backward warm-up, by the node's id: kept here, not on the autograd
# tape, until the node's backward waits for it (:func:`wait_for`).
pending: dict[int, concurrent.futures.Future] = {}


def wait_for(node: Any) -> None:
    """Let ``node``'s backward warm-up finish, if it has one (no second compile)."""
    future = pending.pop(id(node), None)
    if future is not None:
        wait(future)


def backward(bwd: Callable, node: Any, arrays: list, out: jax.Array) -> None:
    """Warm up ``node``'s backward program (``bwd``, compat's jitted VJP) for the
    arrays it saved and a cotangent like ``out``, once per op and shapes."""
    if traced((out, *arrays)):
        return
    mask = node._vjp_mask()
    key = (
        node.fn,
        node.static,
        mask,
        tuple((type(a), np.shape(a), getattr(a, "dtype", None)) for a in arrays),
        out.shape,
        out.dtype,
    )
    if key in _seen:
        return
    _seen.add(key)
    if len(_seen) > _MAX_SEEN:
        done()
    future = submit(
        bwd, *arrays, grad=zeros(out), fn=node.fn, static=node.static, mask=mask
    )
    if future is not None:
        pending[id(node)] = future


# (future, call, whether submit()'s: a first-step warm-up, not ahead()'s)
_stack: list[tuple[concurrent.futures.Future, Callable, bool]] = []
_lock = threading.Lock()


def submit(program: Callable, /, *args: Any, **kwargs: Any):
    """Call ``program(*args, **kwargs)`` (jitted) on the background thread, in x64
    mode as compat's ops run; returns a Future, or None when inactive.

    The newest warm-up runs first: backward needs the last op's program first,
    and ``step()`` (warmed when its optimizer is built) needs its last.
    """
    if not _active:
        return None
    return _enqueue(program, args, kwargs, first_step=True)


def ahead(program: Callable, /, *args: Any, **kwargs: Any):
    """:func:`submit` at any time, not only before the first backward: a program
    compiled on the spare core for later steps (compat's fused backward,
    ``autograd._fused``). None where there is no spare core."""
    if not _spare:
        return None
    return _enqueue(program, args, kwargs, first_step=False)


def _enqueue(program: Callable, args: tuple, kwargs: dict, first_step: bool):
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="jaxblitz-warm"
        )

    def call():
        with x64(True):
            jax.block_until_ready(program(*args, **kwargs))

    future: concurrent.futures.Future = concurrent.futures.Future()
    with _lock:
        _stack.append((future, call, first_step))
    _pool.submit(_run_newest)
    return future


def _run_newest() -> None:
    with _lock:
        if not _stack:  # taken by a waiting thread (wait)
            return
        entry = _stack.pop()
    _run(*entry)


def _run(future: concurrent.futures.Future, call: Callable, *_: Any) -> None:
    if future.set_running_or_notify_cancel():
        try:
            call()
        except Exception as err:  # noqa: BLE001 -- the real call will raise it
            future.set_exception(err)
        else:
            future.set_result(None)


def wait(future: concurrent.futures.Future | None) -> None:
    """Let ``future``'s warm-up finish; its failure is ignored (see the module).

    The waiting thread does not sit idle: a warm-up not yet started it runs
    itself -- ``future``'s own first, else the oldest of the first step's
    (the spare core takes the newest), which the step needs later anyway. At
    the first backward, both cores then compile its remaining programs, not the
    spare one alone.
    """
    if future is None:
        return
    while not future.done():
        with _lock:
            mine = [e for e in _stack if e[0] is future]
            # never a program compiled ahead for later steps (ahead()): it may
            # take seconds that this step does not need
            queued = [e for e in _stack if e[2]]
            entry = (mine or queued or [None])[0]
            if entry is not None:
                _stack.remove(entry)
        if entry is None:
            concurrent.futures.wait([future])
            return
        _run(*entry)
