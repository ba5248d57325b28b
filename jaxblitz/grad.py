"""Blitz 2, "A Gentle Introduction to torch.autograd", in JAX.

torch records a graph while the forward pass runs and ``backward()`` walks it,
accumulating into ``.grad``. JAX has no tape: a gradient is a *function* of the
function (``jax.grad(f)``), and gradients are return values. This module gives the
pieces of the Blitz's autograd section (and of the autograd notes) that are not
already one call in JAX:

- :func:`vjp_backward` -- ``y.backward(v)`` for a non-scalar ``y``;
- :func:`accumulate` -- torch's accumulation into ``.grad``, as an explicit sum;
- :func:`set_data` -- the untracked ``y.data = ...`` edit;
- :func:`freeze_mask` / :func:`frozen` -- ``requires_grad_(False)`` on layers, as an
  Optax transform that zeroes the frozen updates;
- :func:`linear_custom` -- the notes' ``LinearFunction`` as a ``jax.custom_vjp``;
- :func:`gradcheck` -- ``torch.autograd.gradcheck``, in float64.

``grad``, ``value_and_grad``, ``vjp`` and ``stop_gradient`` are JAX's own,
re-exported so the section reads in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import grad, value_and_grad, vjp

from jaxblitz.models import path_name

__all__ = [
    "GradcheckError",
    "accumulate",
    "check_jacobians",
    "freeze_mask",
    "frozen",
    "grad",
    "gradcheck",
    "linear_custom",
    "numerical_jacobian",
    "set_data",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    "vjp_backward",
]

Params = dict[str, Any]

# torch: with torch.no_grad(): ... / y = x.detach() -- the value passes, the
# gradient is zero.
stop_gradient = jax.lax.stop_gradient


def vjp_backward(f: Callable[[Any], jax.Array], x: Any, v: Any = None) -> Any:
    """``y = f(x); y.backward(v); return x.grad`` -- the vector-Jacobian product.

    For a scalar ``y``, ``v`` may be left out (torch's implicit ``1.0``); for any
    other ``y`` it is required and must have ``y``'s shape. ``x`` may be an array
    or a pytree of arrays; the result has its structure.

    >>> vjp_backward(lambda x: 3 * x**2, jnp.array([1.0, 2.0]), jnp.ones(2))
    Array([ 6., 12.], dtype=float32)
    """
    for leaf in jax.tree.leaves(x):
        dtype = leaf.dtype if hasattr(leaf, "dtype") else np.result_type(leaf)
        if not jnp.issubdtype(dtype, jnp.inexact):
            raise TypeError(
                f"vjp_backward differentiates with respect to floating-point x; got "
                f"dtype {dtype} (torch: only Tensors of floating point and complex "
                "dtype can require gradients). Cast it first, e.g. "
                "x.astype(jnp.float32)."
            )
    y, pullback = jax.vjp(f, x)  # torch: y = f(x), recording the graph
    if not isinstance(y, jax.Array):
        raise TypeError(
            f"vjp_backward needs f to return one array; it returned {type(y)}. "
            "For a pytree output call jax.vjp(f, x)[1](cotangents) directly."
        )
    if v is None:
        if y.size != 1:
            raise ValueError(
                f"grad can be implicitly created only for scalar outputs: f returned "
                f"shape {tuple(y.shape)}, so pass v with that shape "
                "(torch: y.backward(v))."
            )
        v = jnp.ones_like(y)
    v = jnp.asarray(v, dtype=y.dtype)  # the cotangent lives in y's dtype
    if v.shape != y.shape:
        raise ValueError(
            f"v must have the output's shape {tuple(y.shape)}, got {tuple(v.shape)} "
            "(torch: 'Mismatch in shape: grad_output[0] ...')."
        )
    (x_grad,) = pullback(v)  # torch: y.backward(v); x.grad
    return x_grad


def accumulate(grads_a: Any, grads_b: Any) -> Any:
    """Sum two gradient trees leaf by leaf.

    torch: two ``loss.backward()`` calls without ``zero_grad()`` in between leave
    the sum in ``.grad``; in JAX the sum is written out.
    """
    tree_a, tree_b = jax.tree.structure(grads_a), jax.tree.structure(grads_b)
    if tree_a != tree_b:  # type: ignore[operator]  # jaxlib has no PyTreeDef stub
        raise ValueError(
            f"accumulate needs two trees of the same structure; got {tree_a} "
            f"and {tree_b}."
        )
    return jax.tree.map(jnp.add, grads_a, grads_b)


@jax.custom_jvp
def _with_value(y: jax.Array, value: jax.Array) -> jax.Array:
    return value


@_with_value.defjvp
def _with_value_jvp(primals, tangents):
    (_, value), (y_dot, _) = primals, tangents
    return value, y_dot  # the value is new, the derivative is y's


def set_data(y: jax.Array, value: Any) -> jax.Array:
    """An array equal to ``value`` whose gradient flows as if it were ``y``.

    torch: ``y.data = value`` (or ``y.data.mul_(10)``) changes what later ops see
    without autograd recording the edit: ``y = x * 2; y.data *= 10;
    y.sum().backward()`` leaves ``x.grad == 2``, not 20.
    """
    value = jnp.asarray(value, dtype=y.dtype)
    if value.shape != y.shape:
        raise ValueError(
            f"set_data needs a value of y's shape {tuple(y.shape)}, got "
            f"{tuple(value.shape)}."
        )
    return _with_value(y, value)


# -- Freezing parameters ------------------------------------------------------------


def freeze_mask(params: Params, trainable: Iterable[str] | str = ("fc3",)) -> Any:
    """A tree of bools like ``params``: ``True`` where the leaf is trained.

    ``trainable`` holds top-level layer names (``"fc3"``) or dotted paths like
    ``state_dict`` keys (``"fc3.weight"``); a name selects every leaf under it.

    torch: ``for p in model.parameters(): p.requires_grad = False`` then a fresh
    ``model.fc = nn.Linear(...)``.

    >>> freeze_mask({"fc1": {"weight": jnp.ones(2)}, "fc3": {"bias": jnp.ones(1)}})
    {'fc1': {'weight': False}, 'fc3': {'bias': True}}
    """
    selectors = (trainable,) if isinstance(trainable, str) else tuple(trainable)
    leaves = jax.tree_util.tree_leaves_with_path(params)
    names = [path_name(path) for path, _ in leaves]

    def selected(name: str, sel: str) -> bool:
        return name == sel or name.startswith(sel + ".")

    unknown = [s for s in selectors if not any(selected(n, s) for n in names)]
    if unknown:
        layers = sorted({n.split(".")[0] for n in names})
        raise ValueError(
            f"freeze_mask: no parameter named {unknown}; layers are {layers} and "
            f"parameters are {names}. Pass layer names or dotted paths from these."
        )
    return jax.tree_util.tree_map_with_path(
        lambda path, _: any(selected(path_name(path), s) for s in selectors), params
    )


def frozen(tx: optax.GradientTransformation, mask: Any) -> optax.GradientTransformation:
    """``tx`` on the leaves where ``mask`` is ``True``; zero updates elsewhere.

    ``optax.masked(tx, mask)`` alone is not enough: it passes the masked-out
    updates through *unchanged*, so frozen layers would still move by the raw
    gradient. ``multi_transform`` with ``set_to_zero`` keeps them bit-identical
    and keeps no optimiser state (momentum, Adam moments) for them.

    torch: ``optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)``.
    """
    for leaf in jax.tree.leaves(mask):
        if not isinstance(leaf, bool | np.bool_):
            raise TypeError(
                f"frozen needs a tree of Python bools (from freeze_mask); got a "
                f"leaf of type {type(leaf).__name__}."
            )
    labels = jax.tree.map(lambda m: "train" if m else "freeze", mask)
    return optax.multi_transform({"train": tx, "freeze": optax.set_to_zero()}, labels)


# -- Extending autograd: the notes' LinearFunction ----------------------------------


@jax.custom_vjp
def linear_custom(x: jax.Array, weight: jax.Array, bias: jax.Array) -> jax.Array:
    """``x @ weight.T + bias`` with a hand-written backward, like the notes'
    ``LinearFunction(torch.autograd.Function)``: ``x`` is ``(B, in)``, ``weight``
    ``(out, in)``, ``bias`` ``(out,)``.
    """
    return x @ weight.T + bias  # (B, out)


def _linear_fwd(x, weight, bias):
    # torch: ctx.save_for_backward(input, weight, bias)
    return linear_custom(x, weight, bias), (x, weight)


def _linear_bwd(residuals, grad_output):
    x, weight = residuals
    grad_input = grad_output @ weight  # (B, in)
    grad_weight = grad_output.T @ x  # (out, in)
    grad_bias = grad_output.sum(0)  # (out,)
    return grad_input, grad_weight, grad_bias


linear_custom.defvjp(_linear_fwd, _linear_bwd)


# -- gradcheck ----------------------------------------------------------------------


class GradcheckError(RuntimeError):
    """The analytical and numerical Jacobians disagree (torch's name too)."""


def _as_tuple(out: Any) -> tuple:
    return tuple(out) if isinstance(out, tuple | list) else (out,)


def gradcheck(
    f: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """``torch.autograd.gradcheck``: JAX's reverse-mode Jacobian of ``f`` against
    central finite differences, for every input and output element, in float64.

    ``inputs`` is one floating array or a tuple of them; ``f(*inputs)`` returns an
    array or a tuple of arrays. Inputs are cast to float64 and ``f`` runs with x64
    enabled only inside this call (``jax.enable_x64``); the global flag is left as
    it was. An element passes when ``|analytical - numerical| <= atol +
    rtol * |numerical|``.

    Returns:
        True when every Jacobian matches. Otherwise raises :class:`GradcheckError`
        naming the first mismatch, or returns False if ``raise_exception=False``.
    """
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        dtype = np.asarray(x).dtype
        if not np.issubdtype(dtype, np.floating):
            raise TypeError(
                f"gradcheck needs floating inputs; input {i} has dtype {dtype}. "
                "Cast it, e.g. x.astype(jnp.float64), or close over it in f."
            )
    with jax.enable_x64(True):
        xs = [np.array(x, dtype=np.float64) for x in inputs]  # owned copies
        outs = _as_tuple(f(*map(jnp.asarray, xs)))
        for o, out in enumerate(outs):
            if not jnp.issubdtype(jnp.asarray(out).dtype, jnp.floating):
                raise TypeError(
                    f"gradcheck needs floating outputs; output {o} has dtype "
                    f"{jnp.asarray(out).dtype}."
                )
        argnums = tuple(range(len(xs)))
        # analytical[o][i]: (out_o.size, in_i.size); jacrev is one vjp per row.
        jac = jax.jacrev(lambda *a: _as_tuple(f(*a)), argnums=argnums)(
            *map(jnp.asarray, xs)
        )
        analytical = [
            [
                np.asarray(jac[o][i], dtype=np.float64).reshape(-1, x.size)
                for i, x in enumerate(xs)
            ]
            for o in range(len(outs))
        ]
        numerical = numerical_jacobian(f, xs, outs, eps)
    return check_jacobians(
        analytical,
        numerical,
        [np.shape(out) for out in outs],
        [x.shape for x in xs],
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )


def check_jacobians(
    analytical: list[list[np.ndarray]],
    numerical: list[list[np.ndarray]],
    out_shapes: list[tuple[int, ...]],
    in_shapes: list[tuple[int, ...]],
    *,
    atol: float,
    rtol: float,
    raise_exception: bool = True,
) -> bool:
    """gradcheck's verdict on Jacobians ``[o][i]`` of shape ``(out_o.size, in_i.size)``.

    An element passes when ``|analytical - numerical| <= atol + rtol * |numerical|``.
    Returns True when all do; otherwise raises :class:`GradcheckError` naming the
    first mismatch, or returns False if ``raise_exception=False``.
    """
    for o, out_shape in enumerate(out_shapes):
        for i, in_shape in enumerate(in_shapes):
            ana, num = analytical[o][i], numerical[o][i]
            bad = np.abs(ana - num) > atol + rtol * np.abs(num)
            if not bad.any():
                continue
            if not raise_exception:
                return False
            r, c = np.argwhere(bad)[0]
            out_el = np.unravel_index(r, out_shape)
            in_el = np.unravel_index(c, in_shape)
            raise GradcheckError(
                f"Jacobian mismatch for output {o} with respect to input {i}: "
                f"{int(bad.sum())} of {bad.size} entries differ. First at "
                f"output element {tuple(map(int, out_el))}, input element "
                f"{tuple(map(int, in_el))}: numerical: {float(num[r, c])!r} "
                f"analytical: {float(ana[r, c])!r} (atol={atol}, rtol={rtol})."
            )
    return True


def numerical_jacobian(
    f: Callable[..., Any], xs: list[np.ndarray], outs: tuple, eps: float
) -> list[list[np.ndarray]]:
    """``num[o][i]`` of shape ``(out_o.size, in_i.size)`` by central differences.

    ``outs`` are ``f(*xs)``'s outputs (for their sizes); ``f`` gets each shifted
    input as ``jnp.asarray`` of the NumPy array, so call this under ``x64`` for
    float64.
    """
    num = [[np.zeros((np.size(out), x.size)) for x in xs] for out in outs]
    for i, x in enumerate(xs):
        for k in range(x.size):
            columns = []
            for step in (eps, -eps):
                shifted = x.copy()
                shifted.flat[k] += step
                args = map(jnp.asarray, [*xs[:i], shifted, *xs[i + 1 :]])
                columns.append(
                    [np.asarray(y, np.float64).ravel() for y in _as_tuple(f(*args))]
                )
            for o, (plus, minus) in enumerate(zip(*columns, strict=True)):
                num[o][i][:, k] = (plus - minus) / (2 * eps)
    return num
