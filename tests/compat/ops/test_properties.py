"""Property tests: compat ops and their gradients equal jax.numpy's (and PyTorch's).

Hypothesis draws shapes (broadcasting pairs included), values and reduction dims;
each compat result and ``.grad`` after ``backward()`` is compared with the same
function written in ``jax.numpy`` and differentiated by ``jax.grad``, and with
PyTorch when it is installed.
"""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F

HAVE_TORCH = importlib.util.find_spec("torch") is not None
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True)
MANY = settings(max_examples=16, deadline=None, derandomize=True)  # ops drawn too
VALUES = st.floats(-3, 3, width=32, allow_nan=False, allow_subnormal=False)


def arrays(shape):
    return hnp.arrays(np.float32, shape, elements=VALUES)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def compat_value_and_grads(fn, *xs):
    """``fn`` on compat tensors: the value and each input's ``.grad``."""
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    out = fn(*ts)
    out.sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


def jax_value_and_grads(fn, *xs):
    value = fn(*map(jnp.asarray, xs))
    grads = jax.grad(lambda *a: jnp.sum(fn(*a)), argnums=range(len(xs)))(*xs)
    return value, grads


def torch_value_and_grads(fn, *xs):
    import torch as real

    ts = [real.tensor(x, requires_grad=True) for x in xs]
    out = fn(real, *ts)
    out.sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


def check(compat_fn, jax_fn, torch_fn, *xs, tol=1e-5):
    value, grads = compat_value_and_grads(compat_fn, *xs)
    ref_value, ref_grads = jax_value_and_grads(jax_fn, *xs)
    close(value, ref_value, tol)
    for g, r in zip(grads, ref_grads, strict=True):
        close(g, r, tol)
    if HAVE_TORCH:
        t_value, t_grads = torch_value_and_grads(torch_fn, *xs)
        close(value, t_value, tol)
        for g, r in zip(grads, t_grads, strict=True):
            close(g, r, tol)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: some axes 1 in either, some missing in one."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a = tuple(draw(st.sampled_from([s, 1])) for s in shape)
    b = tuple(draw(st.sampled_from([s, 1])) for s in shape)
    b = b[draw(st.integers(0, len(b) - 1)) :]  # fewer leading axes
    return draw(arrays(a)), draw(arrays(b))


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / (b * b + 1), lambda a, b: a / (b * b + 1)),
    "maximum": (torch.max, jnp.maximum),
}


@MANY
@given(name=st.sampled_from(sorted(BINARY)), pair=broadcast_pair())
def test_broadcasting_binary_ops_and_grads_agree(name, pair):
    compat_fn, jax_fn = BINARY[name]

    def torch_fn(real, a, b):
        return real.max(a, b) if name == "maximum" else compat_fn(a, b)

    check(compat_fn, jax_fn, torch_fn, *pair)


UNARY = {
    "exp": (torch.exp, jnp.exp, "exp"),
    "tanh": (torch.tanh, jnp.tanh, "tanh"),
    "sigmoid": (torch.sigmoid, jax.nn.sigmoid, "sigmoid"),
    "relu": (torch.relu, jax.nn.relu, "relu"),
    "sin": (torch.sin, jnp.sin, "sin"),
}


@MANY
@given(
    name=st.sampled_from(sorted(UNARY)),
    x=hnp.array_shapes(max_dims=3, max_side=5).flatmap(arrays),
)
def test_unary_ops_and_grads_agree(name, x):
    compat_fn, jax_fn, torch_name = UNARY[name]
    if name == "relu":  # relu'(0) is 0 in all three, but keep clear of the kink
        x = np.where(np.abs(x) < 1e-3, np.float32(0.5), x)
    check(compat_fn, jax_fn, lambda real, t: getattr(real, torch_name)(t), x)


@st.composite
def reduction_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return draw(arrays(shape)), dim, draw(st.booleans())


@MANY
@given(
    op=st.sampled_from(["sum", "mean", "max", "softmax", "log_softmax"]),
    case=reduction_case(),
)
def test_reductions_over_any_dim_agree(op, case):
    x, dim, keepdim = case
    if op == "max":  # distinct values: the argmax (and its gradient) is unique
        x = x + np.arange(x.size, dtype=np.float32).reshape(x.shape) * 1e-2

    def compat_fn(t):
        if op in ("softmax", "log_softmax"):
            return getattr(F, op)(t, dim=dim)
        out = getattr(t, op)(dim=dim, keepdim=keepdim)
        return out.values if op == "max" else out

    def jax_fn(a):
        if op == "softmax":
            return jax.nn.softmax(a, axis=dim)
        if op == "log_softmax":
            return jax.nn.log_softmax(a, axis=dim)
        return getattr(jnp, op)(a, axis=dim, keepdims=keepdim)

    def torch_fn(real, t):
        if op in ("softmax", "log_softmax"):
            return getattr(real.nn.functional, op)(t, dim=dim)
        out = getattr(t, op)(dim=dim, keepdim=keepdim)
        return out.values if op == "max" else out

    check(compat_fn, jax_fn, torch_fn, x, tol=2e-5)


@SETTINGS
@given(
    dims=st.tuples(*[st.integers(1, 5)] * 3),
    batch=st.sampled_from([(), (2,), (1, 3)]),
    data=st.data(),
)
def test_matmul_with_batch_broadcasting_agrees(dims, batch, data):
    n, k, m = dims
    a = data.draw(arrays((*batch, n, k)))
    b = data.draw(arrays((k, m)))
    check(
        lambda x, y: x @ y,
        lambda x, y: x @ y,
        lambda real, x, y: x @ y,
        a,
        b,
        tol=1e-4,
    )


@SETTINGS
@given(
    batch=st.integers(1, 4),
    classes=st.integers(2, 6),
    data=st.data(),
)
def test_cross_entropy_and_its_grad_agree_with_the_core(batch, classes, data):
    from jaxblitz import models

    logits = data.draw(arrays((batch, classes)))
    labels = np.asarray(
        data.draw(
            st.lists(st.integers(0, classes - 1), min_size=batch, max_size=batch)
        )  # fmt: skip
    )
    target = torch.tensor(labels)

    def core(x):
        return models.cross_entropy(x, jnp.asarray(labels))

    def torch_fn(real, x):
        return real.nn.functional.cross_entropy(x, real.tensor(labels))

    check(lambda x: F.cross_entropy(x, target), core, torch_fn, logits)


@SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4),
    data=st.data(),
)
def test_shape_ops_route_gradients_back(shape, data):
    x = data.draw(arrays(shape))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    weights = np.arange(x.size, dtype=np.float32).reshape(
        tuple(shape[p] for p in perm)
    )  # a non-uniform upstream gradient

    def compat_fn(t):
        return t.permute(*perm).unsqueeze(0).flatten(0, 1) * torch.tensor(weights)

    def jax_fn(a):
        return jnp.transpose(a, perm) * weights

    def torch_fn(real, t):
        return t.permute(*perm).unsqueeze(0).flatten(0, 1) * real.tensor(weights)

    check(compat_fn, jax_fn, torch_fn, x)
