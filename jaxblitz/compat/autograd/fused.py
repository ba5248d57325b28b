"""Blitz 2, "autograd": a backward pass as one call.

The node-by-node engine (:func:`.graph.run_backward`) applies each node's VJP as
a compiled call of its own. :func:`run_all` applies the very same VJPs
(``graph._bwd_impl`` of each node's ``fn``) in the engine's order, summing the
gradients that meet at a node in the same order, inside one call: only the
number of calls changes. Two callers:

- eager mode, once a graph's structure repeats: compiled on the spare core,
  then called (:mod:`jaxblitz.compat._eager._fused`);
- lazy mode, every backward that qualifies (:func:`record`): one recorded call
  in the step's program instead of a call per node and per sum (the program is
  compiled once per structure at the sync point anyway, so nothing waits for a
  repeat).

Only where the node-by-node engine would do nothing else (:func:`plan`): every
node a plain recorded op (no custom ``autograd.Function``, no module backward
hook), no hooks on tensors or nodes, no post-accumulate-grad hooks, no
``retain_grad``, nothing saved modified in place or freed; the caller adds: no
``inputs=``, no ``create_graph``, no anomaly mode. Anything else takes the
node-by-node path unchanged, and raises there where torch raises.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from jaxblitz.compat import lazy
from jaxblitz.compat._eager import _warm
from jaxblitz.compat.autograd.graph import (
    AccumulateGrad,
    Node,
    ResidualNode,
    _bwd_impl,
    _current,
    _edited_result,
    _intact,
    _verify,
)
from jaxblitz.compat.tensor._dtype import x64

ROOT = "root"  # the kind of a structure's first entry: the engine's root


def run_all(*args: Any, structure: tuple, guarded: int = 0) -> list:
    """Every node's VJP in the engine's order; the leaves' gradients, in order.

    ``structure`` has an entry per node of the topological order: None for a
    leaf, else ``(kind, fn, static, mask, children, n)`` -- the node's ``n``
    saved arrays come next in ``args`` (for the root: its outputs' gradients).
    The first ``guarded`` arguments are :func:`jaxblitz.compat.lazy.apart_zeros`'
    (on the CPU): each node's gradients then leave it as a call of its own would
    leave them, so that XLA compiles no node for what it knows of the gradient
    it receives (a product to contract with an add, zeros) -- the bits of the
    node-by-node engine's calls. A gradient summed from several uses is kept
    apart too before the node that reads it, as the engine's sum is a call of
    its own (a bfloat16 sum read by a cast back to float32 would otherwise
    skip its rounding: XLA adds bfloat16 in float32).
    """
    zeros, args = args[:guarded], args[guarded:]
    grads: dict[int, Any] = {}
    summed: set[int] = set()  # the nodes whose gradient is a sum
    leaves, pos = [], 0
    for i, entry in enumerate(structure):
        if entry is None:
            leaves.append(grads.pop(i))
            continue
        kind, fn, static, mask, children, n = entry
        saved, pos = args[pos : pos + n], pos + n
        if kind is ROOT:
            vjps = iter(saved)
        else:
            grad = grads.pop(i)
            if i in summed:  # the engine's sum is a call of its own
                grad = lazy.apart(_same, zeros, grad)[0]
            vjp = functools.partial(_vjp, fn=fn, static=static, mask=mask)
            vjps = iter(lazy.apart(vjp, zeros, *saved, grad))
        for child, m in zip(children, mask, strict=False):
            if not m:
                continue
            cg = next(vjps)
            prev = grads.get(child)
            if prev is None:
                grads[child] = cg
            else:
                grads[child] = prev + cg
                summed.add(child)
    return leaves


def _same(grad: Any) -> Any:
    return grad


def _vjp(*args: Any, fn: Callable, static: tuple, mask: tuple) -> Any:
    return _bwd_impl(*args[:-1], grad=args[-1], fn=fn, static=static, mask=mask)


def plan(order: list[Node]) -> tuple | None:
    """``(structure, args, leaves, checked)`` of the graph below ``order[0]`` (the
    engine's root), or None where the node-by-node engine must run it;
    ``checked``: the nodes whose saved tensors :func:`intact` must check."""
    index = {id(node): i for i, node in enumerate(order)}
    structure, args, leaves, checked = [], [], [], []
    for i, node in enumerate(order):
        cls = type(node)
        if cls is AccumulateGrad:
            variable = node.variable
            if variable._hooks or variable.__dict__.get("_post_accumulate_hooks"):
                return None
            structure.append(None)
            leaves.append(variable)
            continue
        if node.hooks or node.prehooks or node.posthooks or node.retained is not None:
            return None
        children = tuple([-1 if c is None else index[id(c)] for c in node.inputs])
        if i == 0:  # the engine's root: hands over its outputs' gradients
            saved = [g._value() for g in node.grads]
            structure.append((ROOT, None, (), node.mask, children, len(saved)))
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


def intact(checked: list[Node]) -> bool:
    """Whether every saved tensor of ``checked`` is as it was saved: else the
    node-by-node engine runs, and raises where torch does."""
    for node in checked:
        if _intact(node):  # (the usual case: nothing to look at further)
            continue
        try:
            _verify(node)
            if _current(node) is not node.saved or _edited_result(node) is not None:
                return False
        except (RuntimeError, NotImplementedError):
            return False
    return True


def hand_over(order: list[Node], leaves: list, grads: list, retain_graph: bool) -> None:
    """Accumulate each leaf's gradient into its ``.grad``, in the engine's order,
    and free the graph's saved tensors unless ``retain_graph`` (as the engine
    does: a second backward through it then raises torch's error)."""
    for leaf, g in zip(leaves, grads, strict=True):
        leaf._accumulate(g)
    if not retain_graph:
        for node in order:
            node.release()


_recorded = lazy.jit(run_all, static_argnames=("structure", "guarded"))


def record(order: list[Node], retain_graph: bool) -> bool:
    """Lazy mode: record the backward of ``order`` (the engine's topological
    order, root first) as one call, hand the leaves their gradients (and free
    the graph, unless ``retain_graph``); returns whether it did."""
    planned = plan(order)
    if planned is None:
        return False
    structure, args, leaves, checked = planned
    if not intact(checked):
        return False
    zeros = lazy.apart_zeros(args)
    with x64(True):
        grads = _recorded(*zeros, *args, structure=structure, guarded=len(zeros))
    hand_over(order, leaves, grads, retain_graph)
    _warm.done()  # as the engine's pass: the first backward is over
    return True
