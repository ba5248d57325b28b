"""A backward pass that repeats, run as one XLA program.

Eager compat runs each node's VJP as its own small program (:mod:`.graph`): the
Blitz step's backward is 16 program calls, each with its dispatch and Python
bookkeeping. A training loop builds the same graph every step -- the same ops,
wired the same way, on arrays of the same shapes -- so once a graph's structure
has been seen :data:`REPEATS` times, one program running all of its VJPs in the
engine's order (:func:`jaxblitz.compat.autograd.fused.run_all`) is compiled on
the spare core (:func:`compat._warm.ahead`), while the loop goes on node by
node. From the step after it is ready, ``backward()`` calls that one program and
hands each leaf its gradient.

The program applies the very VJPs the node-by-node engine applies, in the same
order; only the number of calls changes (the Blitz's gradients come out equal
to the bit: tested). It costs the spare core one compilation (BENCHMARKS.md
gives its time), and a script that ends while it compiles waits for it at exit.

It is used only where the node-by-node engine would do nothing else
(:func:`jaxblitz.compat.autograd.fused.plan` says which graphs qualify).
Anything else, and any graph it has not seen often enough, takes the
node-by-node path unchanged. Off where compat's warm-ups are off (one core,
``JAXBLITZ_WARM=0``). Lazy mode records a qualifying backward as one call at
once instead (:func:`jaxblitz.compat.autograd.fused.record`).
"""

from __future__ import annotations

import concurrent.futures
from collections import OrderedDict

import jax
import numpy as np

from jaxblitz.compat import lazy
from jaxblitz.compat._eager import _warm
from jaxblitz.compat.autograd.fused import hand_over, intact, plan, run_all
from jaxblitz.compat.autograd.graph import Node
from jaxblitz.compat.tensor._dtype import x64

REPEATS = 32  # a graph seen this often is compiled as one program
_MAX_GRAPHS = 32  # structures remembered (least recently used dropped)

_cache: OrderedDict[tuple, list] = OrderedDict()  # key -> [count, future, ready]

_program = jax.jit(run_all, static_argnames=("structure", "guarded"))


def _signature(args: list) -> tuple | None:
    sig = []
    for a in args:
        if isinstance(a, jax.core.Tracer):
            return None  # inside torch.compile: its one program is the fused one
        if isinstance(a, jax.Array):
            sig.append((a.aval, a.committed))
        elif a is None or isinstance(a, (bool, int, float, complex)):
            sig.append(type(a))
        elif isinstance(a, np.ndarray):
            sig.append((a.shape, a.dtype))
        else:
            return None
    return tuple(sig)


def run(order: list[Node], retain_graph: bool) -> bool:
    """Run the backward of ``order`` (the engine's topological order, root first)
    as one program if it is ready for this graph, accumulating into the leaves'
    ``.grad`` (and freeing the graph, unless ``retain_graph``); returns whether it
    did. Counts the graph's repeats either way."""
    if not _warm.spare():
        return False
    planned = plan(order)
    if planned is None:
        return False
    structure, args, leaves, checked = planned
    sig = _signature(args)
    if sig is None:
        return False
    key = (structure, sig)
    entry = _cache.get(key)
    if entry is None:
        entry = _cache[key] = [0, None, False]
        if len(_cache) > _MAX_GRAPHS:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    if not entry[2]:
        future = entry[1]
        if future is None:
            entry[0] += 1
            if entry[0] >= REPEATS:  # compile it on the spare core, meanwhile
                zeros = lazy.apart_zeros(args)
                entry[1] = _warm.ahead(
                    _program, *zeros, *args, structure=structure, guarded=len(zeros)
                )
            return False
        if not future.done() or future.exception() is not None:
            return False
        entry[2] = True
    if not intact(checked):  # checked only here: a graph not run fused skips it
        return False
    zeros = lazy.apart_zeros(args)
    with x64(True):
        grads = _program(*zeros, *args, structure=structure, guarded=len(zeros))
    hand_over(order, leaves, grads, retain_graph)
    return True


def wait() -> None:
    """Let the fused programs being compiled finish (benchmarks and tests that
    measure the steady state)."""
    concurrent.futures.wait([e[1] for e in _cache.values() if e[1] is not None])


def clear() -> None:
    """Forget every graph seen (tests)."""
    _cache.clear()
