"""A backward pass that repeats, run as one XLA program.

Eager compat runs each node's VJP as its own small program (:mod:`.graph`): the
Blitz step's backward is 16 program calls, each with its dispatch and Python
bookkeeping. A training loop builds the same graph every step -- the same ops,
wired the same way, on arrays of the same shapes -- so once a graph's structure
has been seen :data:`REPEATS` times, one program running all of its VJPs in the
engine's order is compiled on the spare core (:func:`compat._warm.ahead`), while
the loop goes on node by node. From the step after it is ready, ``backward()``
calls that one program and hands each leaf its gradient.

The program applies the very VJPs the node-by-node engine applies
(``graph._bwd_impl`` of each node's ``fn``), in the same order, summing the
gradients that meet at a node in the same order; only the number of calls
changes (the Blitz's gradients come out equal to the bit: tested). It costs the
spare core one compilation (BENCHMARKS.md gives its time), and a script that
ends while it compiles waits for it at exit.

It is used only where the node-by-node engine would do nothing else: every node
a plain recorded op (no custom ``autograd.Function``, no module backward hook),
no hooks on tensors or nodes, no ``retain_grad``, nothing saved modified in
place or freed, no ``inputs=`` or ``create_graph``. Anything else, and any graph
it has not seen often enough, takes the node-by-node path unchanged. Off where
compat's warm-ups are off (one core, ``JAXBLITZ_WARM=0``).
"""

from __future__ import annotations

import concurrent.futures
from collections import OrderedDict
from typing import Any

import jax
import numpy as np

from jaxblitz.compat._eager import _warm
from jaxblitz.compat.autograd.graph import (
    AccumulateGrad,
    Node,
    ResidualNode,
    _bwd_impl,
    _current,
    _edited_result,
    _verify,
)
from jaxblitz.compat.tensor._dtype import x64

REPEATS = 32  # a graph seen this often is compiled as one program
_MAX_GRAPHS = 32  # structures remembered (least recently used dropped)

_ROOT = "root"
_cache: OrderedDict[tuple, list] = OrderedDict()  # key -> [count, future, ready]


def _run_all(*args: Any, structure: tuple) -> list:
    """Every node's VJP in the engine's order; the leaves' gradients, in order.

    ``structure`` has an entry per node of the topological order: None for a
    leaf, else ``(kind, fn, static, mask, children, n)`` -- the node's ``n``
    saved arrays come next in ``args`` (for the root: its outputs' gradients).
    """
    grads: dict[int, Any] = {}
    leaves, pos = [], 0
    for i, entry in enumerate(structure):
        if entry is None:
            leaves.append(grads.pop(i))
            continue
        kind, fn, static, mask, children, n = entry
        saved, pos = args[pos : pos + n], pos + n
        if kind is _ROOT:
            vjps = iter(saved)
        else:
            g = grads.pop(i)
            vjps = iter(_bwd_impl(*saved, grad=g, fn=fn, static=static, mask=mask))
        for child, m in zip(children, mask, strict=False):
            if not m:
                continue
            cg = next(vjps)
            prev = grads.get(child)
            grads[child] = cg if prev is None else prev + cg
    return leaves


_program = jax.jit(_run_all, static_argnames=("structure",))


def _plan(order: list[Node]) -> tuple | None:
    """``(structure, args, leaves, checked)`` of the graph below ``order[0]`` (the
    engine's root), or None where the node-by-node engine must run it;
    ``checked``: the nodes whose saved tensors :func:`_intact` must check."""
    index = {id(node): i for i, node in enumerate(order)}
    structure, args, leaves, checked = [], [], [], []
    for i, node in enumerate(order):
        cls = type(node)
        if cls is AccumulateGrad:
            if node.variable._hooks:
                return None
            structure.append(None)
            leaves.append(node.variable)
            continue
        if node.hooks or node.prehooks or node.posthooks or node.retained is not None:
            return None
        children = tuple(-1 if c is None else index[id(c)] for c in node.inputs)
        if i == 0:  # the engine's root: hands over its outputs' gradients
            saved = [g._data for g in node.grads]
            structure.append((_ROOT, None, (), node.mask, children, len(saved)))
            args += saved
            continue
        if cls.apply_vjp is Node.apply_vjp:
            mask = node.mask
        elif cls.apply_vjp is ResidualNode.apply_vjp:
            mask = (*node.mask, False)
        else:  # a custom Function, a module's backward hook: its own engine
            return None
        saved = node.saved
        if saved is None or id(node) in _warm.pending:
            return None
        if node.checks:
            checked.append(node)
        structure.append((None, node.fn, node.static, mask, children, len(saved)))
        args += saved
    return tuple(structure), args, leaves, checked


def _intact(checked: list[Node]) -> bool:
    """Whether every saved tensor of ``checked`` is as it was saved: else the
    node-by-node engine runs, and raises where torch does."""
    for node in checked:
        try:
            _verify(node)
            if _current(node) is not node.saved or _edited_result(node) is not None:
                return False
        except (RuntimeError, NotImplementedError):
            return False
    return True


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
    plan = _plan(order)
    if plan is None:
        return False
    structure, args, leaves, checked = plan
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
                entry[1] = _warm.ahead(_program, *args, structure=structure)
            return False
        if not future.done() or future.exception() is not None:
            return False
        entry[2] = True
    if not _intact(checked):  # checked only here: a graph not run fused skips it
        return False
    with x64(True):
        grads = _program(*args, structure=structure)
    for leaf, g in zip(leaves, grads, strict=True):
        leaf._accumulate(g)
    if not retain_graph:
        for node in order:
            node.release()
    return True


def wait() -> None:
    """Let the fused programs being compiled finish (benchmarks and tests that
    measure the steady state)."""
    concurrent.futures.wait([e[1] for e in _cache.values() if e[1] is not None])


def clear() -> None:
    """Forget every graph seen (tests)."""
    _cache.clear()
