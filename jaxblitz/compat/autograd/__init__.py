"""Blitz 2, "autograd": ``backward``, ``grad``, ``Function`` and ``gradcheck``.

``from jaxblitz.compat.autograd import Function, gradcheck`` as in torch. The tape
is :mod:`.graph`; a :class:`Function` (:mod:`.function`) is the one place a
derivative is written by hand, by the user; grad modes (``no_grad``,
``inference_mode`` ...) are :mod:`.grad_mode`.

``backward`` and ``grad`` check their arguments as torch's do (``_make_grads``,
then the engine's own checks, with torch's messages), run one pass of
:func:`.graph.run_backward` from all outputs at once (:class:`_GraphRoot`), and,
when ``inputs`` are given, only the nodes torch's engine would run for them
(:func:`_run_for_inputs`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import _not_offered, _profiling, lazy
from jaxblitz.compat._eager import _fused
from jaxblitz.compat.autograd import (
    _functional_checks,
    forward_ad,
    function,
    functional,
    fused,
    graph,
)
from jaxblitz.compat.autograd import profiler as profiler  # torch.autograd.profiler
from jaxblitz.compat.autograd._forward_jacobian import forward_jacobian
from jaxblitz.compat.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from jaxblitz.compat.autograd.function import Function, FunctionCtx
from jaxblitz.compat.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from jaxblitz.compat.autograd.graph import (
    AccumulateGrad,
    Node,
    _run_hooks,
    _topological,
    run_backward,
)
from jaxblitz.compat.autograd.variable import Variable
from jaxblitz.compat.tensor._dtype import float64, x64
from jaxblitz.compat.tensor._meta import MetaArray
from jaxblitz.compat.tensor._tensor_base import TensorBase, from_host
from jaxblitz.compat.tensor.creation import rand, zeros_like
from jaxblitz.grad import GradcheckError, numerical_jacobian

__all__ = [
    "AccumulateGrad",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "function",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]


class _GraphRoot(Node):
    """torch's ``GraphRoot``: hands each output's gradient to that output's node,
    so that one pass of the engine runs backward from several outputs."""

    __slots__ = ("grads",)

    def __init__(self, nodes: list[Node], grads: list[Any]):
        super().__init__(None, (), (), tuple(nodes), (True,) * len(nodes))
        self.grads = grads  # Tensors, of the outputs' dtypes

    def apply_vjp(self, grad: Any) -> list[Any]:
        return [g._value() for g in self.grads]

    def apply_vjp_graph(self, grad: Any) -> list[Any]:
        return list(self.grads)  # create_graph: as given, history and all

    def release(self) -> None:
        pass


_START = object()  # the "gradient" the engine hands the root
_warned_cycle: list[bool] = []


def _as_tuple(tensors: Any) -> tuple:
    return (tensors,) if isinstance(tensors, TensorBase) else tuple(tensors)


def _inputs_tuple(inputs: Any, who: str) -> tuple:
    if isinstance(inputs, TensorBase):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{who}()` must be a dict, not "
            f"{type(inputs).__name__}. Other Mapping types are not supported."
        )
    return tuple(inputs)


def _tensor_or_tensors_to_tuple(tensors: Any, length: int) -> tuple:
    if tensors is None:
        return (None,) * length
    if isinstance(tensors, TensorBase):
        return (tensors,)
    return tuple(tensors)


_ONES: dict[tuple, Any] = {}


def _one(like: Any) -> Any:
    """The implicit gradient of a one-element output ``like`` (an array): ones of
    its shape, dtype and placement, made once per kind (``loss.backward()`` runs
    every step; JAX arrays are immutable, so one serves all)."""
    if isinstance(like, jax.core.Tracer):  # inside torch.compile
        return jnp.ones(like.shape, like.dtype)
    if type(like) is MetaArray:  # a meta output's gradient is meta
        return like
    key = (like.shape, like.dtype, like.sharding if like.committed else None)
    one = _ONES.get(key)
    if one is None:
        one = _ONES[key] = from_host(np.ones(like.shape, like.dtype), like)
    return one


def _make_grads(outputs: tuple, grads: tuple) -> tuple:
    """torch's ``_make_grads``: each output's gradient, checked, or ones for a
    scalar output that requires grad."""
    new_grads = []
    for out, grad in zip(outputs, grads):  # noqa: B905 -- torch does not check
        if not isinstance(out, TensorBase):
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(grad, TensorBase):
            if tuple(grad.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{grads.index(grad)}] has a shape "
                    f"of {grad.shape} and output[{outputs.index(out)}] has a shape "
                    f"of {out.shape}."
                )
            new_grads.append(grad)
        elif grad is None:
            if not out.requires_grad:
                new_grads.append(None)
                continue
            if out.numel() != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs"
                )
            if not out.dtype.is_floating_point:
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but "
                    f"got {out.dtype}"
                )
            new_grads.append(TensorBase._wrap(_one(out._value())))
        else:
            raise TypeError(
                "gradients can be either Tensors or None, but got "
                + type(grad).__name__
            )
    return tuple(new_grads)


def _run_engine(
    outputs: tuple,
    grads: tuple,
    retain_graph: bool,
    create_graph: bool,
    inputs: tuple,
    allow_unreachable: bool,
    accumulate_grad: bool,
) -> tuple:
    """torch's engine entry (``_engine_run_backward``): its checks, then one pass
    of :func:`.graph.run_backward` from all ``outputs``. With ``inputs``, returns
    their gradients (arrays, or Tensors with ``create_graph``; None where none
    reached them)."""
    if len(outputs) != len(grads):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    nodes, arrays = [], []
    for i, (out, g) in enumerate(zip(outputs, grads, strict=True)):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a "
                "grad_fn"
            )
        if g is None:
            raise RuntimeError(
                f"element {i} of gradients tuple is None, but the corresponding "
                "Tensor requires grad"
            )
        nodes.append(out._node())
        # the engine casts a root's gradient to the output's dtype
        arrays.append(g if g.dtype == out.dtype else g.to(out.dtype))
    for t in inputs:
        if accumulate_grad:
            t.retain_grad()
        if not t.requires_grad:
            raise RuntimeError(
                "One of the differentiated Tensors does not require grad"
            )
    root = _GraphRoot(nodes, arrays)
    if not inputs:
        order = _topological(root)
        # one call for the whole pass where it changes nothing (autograd.fused):
        # recorded at once while lazy, compiled once the graph repeats while eager;
        # node by node while a profiler records (an event per node, as torch's)
        whole = fused.record if lazy.is_lazy() else _fused.run
        one_by_one = create_graph or is_anomaly_enabled() or _profiling.on
        if one_by_one or not whole(order, retain_graph):
            run_backward(
                root, _START, retain_graph, create_graph=create_graph, order=order
            )
        return ()
    result = _run_for_inputs(root, inputs, retain_graph, create_graph, accumulate_grad)
    if accumulate_grad:
        for t, g in zip(inputs, result, strict=True):
            if g is not None:
                t._accumulate(g)
        return ()
    for i, g in enumerate(result):
        if g is None and not allow_unreachable:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been "
                "used in the graph. Set allow_unused=True if this is the desired "
                "behavior."
            )
    return result


class _Capture(AccumulateGrad):
    """Where the engine stops for an input that is not a leaf when no other input
    needs its node run: the gradient is taken there and the node is not run."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None)


class _At:
    """An input as :func:`.graph.run_backward` takes it: the node to collect at."""

    __slots__ = ("node",)

    def __init__(self, node: Node) -> None:
        self.node = node

    def _node(self) -> Node:
        return self.node


def _run_for_inputs(
    root: Node,
    inputs: tuple,
    retain_graph: bool,
    create_graph: bool,
    accumulate_grad: bool,
) -> tuple:
    """The gradients reaching ``inputs`` (arrays, or None), running only the nodes
    torch's engine runs for them: those with an input below them. A node that
    leads to no input is not run (nor freed, nor its hooks called), and neither is
    the node of a non-leaf input that no other input needs (in ``grad``; torch's
    ``backward(inputs=...)`` runs it).

    :func:`.graph.run_backward` walks every node below the root, so for this one
    pass the graph is cut to those nodes: each one's ``inputs`` lose the edges to
    nodes that are not needed, and the edge to a non-leaf input's node goes to a
    :class:`_Capture` instead. The edges are put back afterwards.
    """
    targets = {id(t._node()): t._node() for t in inputs}
    order = _topological(root)  # parents before children
    leads: set[int] = set()  # nodes with an input at or below them
    runs: set[int] = set()  # nodes with an input strictly below them
    for node in reversed(order):
        below = any(c is not None and id(c) in leads for c in node.inputs)
        if below or (accumulate_grad and id(node) in targets):
            # backward(inputs=...) runs a non-leaf input's node too (documented)
            runs.add(id(node))
        if below or id(node) in targets:
            leads.add(id(node))
    captures: dict[int, _Capture] = {}

    def edge(child: Node | None) -> Node | None:
        if child is None or id(child) not in leads:
            return None
        if id(child) in runs or isinstance(child, AccumulateGrad):
            return child
        return captures.setdefault(id(child), _Capture())

    cut = [(node, node.inputs) for node in order if id(node) in runs and node.inputs]
    try:
        for node, edges in cut:
            node.inputs = tuple(edge(child) for child in edges)
            graph.uncut[id(node)] = edges
        at = [_At(captures.get(id(t._node()), t._node())) for t in inputs]
        found = run_backward(root, _START, retain_graph, at, create_graph)
    finally:
        for node, edges in cut:
            node.inputs = edges
            graph.uncut.pop(id(node), None)
    result = []
    for t, where in zip(inputs, at, strict=True):
        g = found.get(id(where.node))
        # A tensor's hooks run before its gradient is taken where its node is not
        # run (an executed node's ran in the engine; a leaf's run in .grad's
        # accumulation when there is one).
        if isinstance(where.node, _Capture):
            hooks = targets[id(t._node())].hooks
        elif isinstance(where.node, AccumulateGrad) and not accumulate_grad:
            hooks = t._hooks
        else:
            hooks = None
        if g is not None and hooks:
            g = _run_hooks(hooks, g)
        result.append(g)
    return tuple(result)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
    *,
    grad_variables: Any = None,
) -> None:
    """``torch.autograd.backward`` / ``tensor.backward()``: accumulate the
    gradients of ``tensors`` into the leaves' ``.grad`` (or only ``inputs``')."""
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both "
                "passed to `backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and not inputs_tuple:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    grads = _make_grads(
        tensors, _tensor_or_tensors_to_tuple(grad_tensors, len(tensors))
    )
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _warned_cycle:
        _warned_cycle.append(True)  # torch warns once
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle "
            "between the parameter and its gradient which can cause a memory leak. "
            "We recommend using autograd.grad when creating the graph to avoid this. "
            "If you have to use this function, make sure to reset the .grad fields "
            "of your parameters to None after use to break the cycle and avoid the "
            "leak.",
            UserWarning,
            stacklevel=2,
        )
    _run_engine(
        tensors, grads, bool(retain_graph), create_graph, inputs_tuple, True, True
    )
    lazy.step_end()


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Any:
    """``torch.autograd.grad``: the gradients of ``outputs`` with respect to
    ``inputs``, returned (``.grad`` is left alone)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when "
            "materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to "
            "True). To accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    grads = _make_grads(
        outputs, _tensor_or_tensors_to_tuple(grad_outputs, len(outputs))
    )
    if is_grads_batched:
        raise NotImplementedError(
            "is_grads_batched=True (vmap over grad_outputs) is not supported by "
            "jaxblitz.compat; call grad once per row"
        )
    if retain_graph is None:
        retain_graph = create_graph
    found = _run_engine(
        outputs,
        grads,
        bool(retain_graph),
        create_graph,
        inputs_tuple,
        allow_unused,
        False,
    )
    lazy.step_end()
    result = tuple(
        (g if isinstance(g, TensorBase) else TensorBase._wrap(g))
        if g is not None
        else (zeros_like(t, requires_grad=create_graph) if materialize_grads else None)
        for g, t in zip(found, inputs_tuple, strict=True)
    )
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result, strict=True))
    return result


def gradcheck(
    func: Any,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """``torch.autograd.gradcheck``: the Jacobian ``backward`` computes (through the
    tape, including user ``Function``s) against central finite differences; then,
    as torch, that zero output gradients give zero input gradients, and that each
    custom Function's backward takes undefined output gradients.

    torch's defaults; use float64 inputs, as with torch. The finite differences are
    the core's (:func:`jaxblitz.grad.numerical_jacobian`), and so is the
    :class:`GradcheckError` a failed check raises (torch's messages). ``fast_mode``
    runs the full check (torch's fast mode checks random projections of it);
    ``nondet_tol`` and ``check_grad_dtypes`` can change nothing here (compat's
    backward is deterministic and gives each input's dtype). With
    ``check_forward_ad`` the Jacobian forward-mode AD computes (through dual
    tensors) is checked too. vmap and masked tensors are not supported.
    """
    for option, value in (
        ("check_batched_grad", check_batched_grad),
        ("check_batched_forward_grad", check_batched_forward_grad),
        ("masked", masked),
    ):
        if value:
            raise NotImplementedError(
                f"gradcheck({option}=True) is not supported by jaxblitz.compat (it "
                "has no vmap or masked tensors)"
            )
    if not (check_forward_ad or check_backward_ad):
        raise ValueError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    try:
        return _gradcheck(
            func,
            inputs,
            eps,
            atol,
            rtol,
            check_undefined_grad,
            check_backward_ad,
            check_forward_ad=check_forward_ad,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(
    func: Any,
    inputs: Any,
    eps: float,
    atol: float,
    rtol: float,
    check_undefined_grad: bool,
    check_backward_ad: bool,
    numerical_grad_mode: bool = False,
    check_forward_ad: bool = False,
) -> bool:
    if not isinstance(inputs, tuple):
        inputs = tuple(inputs) if isinstance(inputs, list) else (inputs,)
    diff = _check_inputs(inputs)
    func_out = _outputs(func, inputs)
    checked = [o for o, out in enumerate(func_out) if out.requires_grad]
    outputs = [func_out[o] for o in checked]
    if not (check_backward_ad or check_forward_ad):
        return True
    xs = [np.asarray(inputs[i].detach()) for i in diff]

    def f(*arrays):  # the differentiated inputs -> the checked outputs, as arrays
        args = list(inputs)
        for i, a in zip(diff, arrays, strict=True):
            args[i] = TensorBase._wrap(a)
        with set_grad_enabled(numerical_grad_mode):
            outs = _outputs(func, args)
        return tuple(np.asarray(outs[o]._data, np.float64) for o in checked)

    with x64(True):
        numerical = numerical_jacobian(f, xs, f(*xs), eps)
    if check_forward_ad:  # torch checks forward mode first
        forward = forward_jacobian(func, inputs, diff, checked)
        _compare(forward, numerical, outputs, rtol, atol, "computed with forward mode ")
    if not check_backward_ad:
        return True
    analytical = [_tape_jacobian(out, [inputs[i] for i in diff]) for out in outputs]
    _compare(analytical, numerical, outputs, rtol, atol, "")
    _check_backward_mul_by_grad_output(outputs, [inputs[i] for i in diff])
    if check_undefined_grad:
        _check_undefined_grads(func, inputs)
    return True


def _compare(
    analytical: list,
    numerical: list,
    outputs: list,
    rtol: float,
    atol: float,
    mode: str,
) -> None:
    """torch's verdict on each (output, input) Jacobian, and its message."""
    for o, out in enumerate(outputs):
        for i, (a, n) in enumerate(zip(analytical[o], numerical[o], strict=True)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian {mode}mismatch for output {o:d} with respect to input "
                    f"{i:d},\nnumerical:{_jacobian_tensor(n, out)}\n"
                    f"analytical:{_jacobian_tensor(a, out)}\n"
                )


def gradgradcheck(
    func: Any,
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """``torch.autograd.gradgradcheck``: :func:`gradcheck` of the function that
    maps (inputs, grad_outputs) to the input gradients ``grad`` computes with
    ``create_graph=True`` -- the second derivatives a ``Function``'s backward
    gives when it is itself differentiated.

    As torch, missing ``grad_outputs`` are drawn uniformly from [-1, 1) (from
    compat's generator, not torch's: the verdict, not the draw, is what torch and
    compat share). Forward-over-reverse checks would need tangents through a
    backward pass, which compat's tape does not carry.
    """
    for option, value in (
        ("check_batched_grad", check_batched_grad),
        ("check_fwd_over_rev", check_fwd_over_rev),
        ("masked", masked),
    ):
        if value:
            raise NotImplementedError(
                f"gradgradcheck({option}=True) is not supported by jaxblitz.compat "
                "(it has no vmap, tangents through a backward pass or masked "
                "tensors)"
            )
    inputs = _as_tuple(inputs) if not isinstance(inputs, list) else tuple(inputs)
    if grad_outputs is None:
        outs = [o for o in _outputs(func, inputs) if _differentiable(o)]
        grad_outputs = tuple(
            rand(
                o.shape,
                dtype=o.dtype if o.is_floating_point() else float64,
            )
            .mul_(2)
            .sub_(1)
            .requires_grad_()
            for o in outs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_inputs = {i for i, x in enumerate(inputs) if _differentiable(x)}
    diff_grads = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def first_derivatives(*args: Any) -> tuple:
        # gradcheck hands in detached copies: requires_grad is restored here
        xs = tuple(
            x.requires_grad_() if i in diff_inputs else x
            for i, x in enumerate(args[:-n_out])
        )
        outs = tuple(o for o in _outputs(func, xs) if _differentiable(o))
        vs = tuple(
            v.requires_grad_() if i in diff_grads else v
            for i, v in enumerate(args[-n_out:])
        )
        wrt = tuple(x for i, x in enumerate(xs) if i in diff_inputs)
        found = grad(outs, wrt, vs, create_graph=True, allow_unused=True)
        return tuple(g for g in found if g is not None)

    try:
        return _gradcheck(
            first_derivatives,
            inputs + grad_outputs,
            eps,
            atol,
            rtol,
            check_undefined_grad,
            check_rev_over_rev,
            numerical_grad_mode=True,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _differentiable(x: Any) -> bool:
    return isinstance(x, TensorBase) and x.requires_grad


def _check_inputs(inputs: tuple) -> list[int]:
    """torch's checks of gradcheck's inputs; the positions that require grad."""
    diff = []
    for i, x in enumerate(inputs):
        if not (isinstance(x, TensorBase) and x.requires_grad):
            continue
        if x.dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point or complex. This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
                stacklevel=3,
            )
        if not all(
            st > 0 or sz <= 1 for st, sz in zip(x.stride(), x.shape, strict=True)
        ):
            raise RuntimeError(
                f"The {i}th input has a dimension with stride 0. gradcheck only "
                "supports inputs that are non-overlapping to be able to compute the "
                "numerical gradients correctly. You should call .contiguous on the "
                "input before passing it to gradcheck."
            )
        diff.append(i)
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but "
            "none of them have requires_grad=True."
        )
    return diff


def _outputs(func, args) -> tuple:
    out = func(*args)
    return out if isinstance(out, tuple) else (out,)


def _tape_jacobian(out: Any, inputs: list) -> list[np.ndarray]:
    """d(out)/d(each input) by ``backward``, one row per element of ``out``."""
    jacobians = [np.zeros((out.numel(), x.numel())) for x in inputs]
    for j in range(out.numel()):
        onehot = np.zeros(out.numel(), out.dtype.np)
        onehot[j] = 1
        with x64(True):
            onehot = TensorBase._wrap(jnp.asarray(onehot.reshape(out.shape)))
        grads = grad(out, inputs, onehot, retain_graph=True, allow_unused=True)
        for jacobian, g in zip(jacobians, grads, strict=True):
            if g is not None:
                jacobian[j] = np.asarray(g._data, np.float64).reshape(-1)
    return jacobians


def _jacobian_tensor(jacobian: np.ndarray, out: Any) -> Any:
    """A Jacobian as torch shows it: (input elements, output elements), in the
    output's dtype."""
    with x64(True):
        return TensorBase._wrap(jnp.asarray(jacobian.T, out.dtype.np))


def _check_backward_mul_by_grad_output(outputs: list, inputs: list) -> None:
    grads = grad(outputs, inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, inputs, strict=True):
        if gi is None:
            continue
        if not bool((gi == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


def _check_undefined_grads(func: Any, inputs: tuple) -> None:
    """torch's check that backward takes undefined output gradients: every custom
    Function below the outputs is called with all its output gradients undefined
    (and, with several outputs, each one undefined and the others zero); what it
    returns must be None or zeros."""
    outs = [
        o
        for o in _outputs(func, inputs)
        if isinstance(o, TensorBase) and o.requires_grad
    ]
    root = _GraphRoot([o._node() for o in outs], [])
    for node in _topological(root):
        if not isinstance(node, function.BackwardCFunction):
            continue
        n = len(node._outputs)
        cases = [function._OutputGrads()]
        with x64(True):
            for undefined in range(n if n > 1 else 0):
                cases.append(
                    function._OutputGrads(
                        (i, jnp.zeros(meta[0], meta[1].np))
                        for i, meta in enumerate(node._outputs)
                        if i != undefined and meta is not None
                    )
                )
        for grads in cases:
            try:
                with x64(True):
                    result = node.apply_vjp(grads)
            except RuntimeError as error:
                _warn_undefined_check()
                raise GradcheckError(
                    "Expected backward function to handle undefined output grads. "
                    'Please look at "Notes about undefined output gradients" in '
                    '"tools/autograd/derivatives.yaml"'
                ) from error
            if any(g is not None and np.any(np.asarray(g) != 0) for g in result):
                _warn_undefined_check()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output "
                    'grads are undefined or zero. Please look at "Notes about '
                    'undefined output gradients" in "tools/autograd/derivatives.yaml"'
                )


def _warn_undefined_check() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is "
        "enabled by default, but it may break existing callers of this function. If "
        'this is true for you, you can call this function with "check_undefined_grad'
        '=False" to disable the feature',
        stacklevel=4,
    )


_functional_checks.GRAD.append(grad)  # torch.autograd.functional's products

# torch.autograd's submodules compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.autograd")
