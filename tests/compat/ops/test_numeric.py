"""compat's trapezoid, trapz, cumulative_trapezoid, gradient, renorm,
chain_matmul and fill against PyTorch: values, dtypes, shapes, gradients,
warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def _same(theirs, ours, exact=False):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(theirs, ours, strict=True):
            _same(a, b, exact)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    want = theirs.detach().double().numpy()
    got = np.asarray(ours.detach().double().tolist(), np.float64).reshape(want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _both(make):
    return make(torch), make(c)


def _raises_as_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    first = str(theirs.value).splitlines()[0].split(":")[0]
    assert str(ours.value).startswith(first), (str(ours.value), str(theirs.value))


Y = [[0.0, 1.0, 4.0, 9.0], [2.0, -1.0, 3.0, 0.5], [1.0, 1.0, 1.0, 1.0]]


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize(
    "call",
    [
        lambda T, f: f(T.tensor(Y)),
        lambda T, f: f(T.tensor(Y), dim=0),
        lambda T, f: f(T.tensor(Y), dx=0.5),
        lambda T, f: f(T.tensor(Y), dx=T.tensor(2.0)),
        lambda T, f: f(T.tensor(Y), T.tensor([0.0, 0.5, 2.0, 3.0])),
        lambda T, f: f(T.tensor(Y), T.tensor([[0.0], [1.0], [3.0]]), dim=0),
        lambda T, f: f(T.tensor(Y), T.tensor(Y) * 2),
        lambda T, f: f(T.tensor(Y, dtype=T.float64), T.tensor([1.0, 2, 3, 5])),
        lambda T, f: f(T.tensor([[1, 4, 9], [0, 2, 7]])),
        lambda T, f: f(T.tensor([[1, 4, 9], [0, 2, 7]]), dx=2),
        lambda T, f: f(T.tensor([[1, 4, 9], [0, 2, 7]]), T.tensor([1, 2, 4])),
        lambda T, f: f(T.tensor(Y, dtype=T.float16)),
        lambda T, f: f(T.ones(2, 0)),
        lambda T, f: f(T.ones(2, 1)),
        lambda T, f: f(T.ones(3, 2, 4), dim=1),
    ],
)
def test_trapezoid_rules_match_torch(name, call):
    theirs, ours = _both(lambda T: call(T, getattr(T, name)))
    _same(theirs, ours)


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_gradients_match_torch(name):
    def grads(T):
        y = T.tensor(Y, requires_grad=True)
        x = T.tensor([0.0, 0.5, 2.0, 3.0], requires_grad=True)
        out = getattr(T, name)(y, x) * T.arange(3.0)  # (3,) or (3, 3)
        out.sum().backward()
        z = T.tensor(Y, requires_grad=True)
        (getattr(T, name)(z, dx=0.25, dim=0) ** 2).sum().backward()
        return y.grad, x.grad, z.grad

    theirs, ours = _both(grads)
    _same(theirs, ours)


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize(
    "call",
    [
        lambda T, f: f(T.tensor(2.0)),
        lambda T, f: f(T.ones(2, 3), T.ones(4)),
        lambda T, f: f(T.ones(2, 3), dim=3),
        lambda T, f: f(T.ones(3, dtype=T.bool)),
        lambda T, f: f(T.ones(3), T.ones(3, dtype=T.bool)),
        lambda T, f: f(T.ones(3), dx=True),
        lambda T, f: f(T.ones(2, 3), T.tensor(3.0)),
        lambda T, f: f([1.0, 2.0]),
    ],
)
def test_bad_trapezoid_arguments_raise_torch_errors(name, call):
    _raises_as_torch(lambda T: call(T, getattr(T, name)))


G = [[1.0, 2.0, 4.0, 8.0, 10.0], [0.0, -3.0, 1.0, 2.0, 2.5], [5.0, 1.0, 0.0, 1.0, 5.0]]


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize(
    "kwargs",
    [
        lambda T: {},
        lambda T: {"dim": 1},
        lambda T: {"dim": -2},
        lambda T: {"dim": [0, 1]},
        lambda T: {"spacing": 2.0},
        lambda T: {"spacing": 3},
        lambda T: {"spacing": 2.0, "dim": 1},
        lambda T: {"spacing": 0.5, "dim": [1]},
        lambda T: {"spacing": [2.0, 0.5]},
        lambda T: {"spacing": [0.5], "dim": 1},
        lambda T: {
            "spacing": [T.tensor([0.0, 1.0, 3.0]), T.tensor([0.0, 1, 1.5, 3, 4])]
        },
        lambda T: {"spacing": [T.tensor([0.0, 1, 1.5, 3, 4])], "dim": 1},
        lambda T: {"spacing": (T.tensor([0.0, 1, 1.5, 3, 4]),), "dim": [1]},
    ],
)
def test_gradient_matches_torch(kwargs, edge_order):
    theirs, ours = _both(
        lambda T: T.gradient(T.tensor(G), edge_order=edge_order, **kwargs(T))
    )
    _same(theirs, ours)


@pytest.mark.parametrize("dtype", ["int64", "float64", "float16"])
def test_gradient_keeps_torchs_dtypes(dtype):
    theirs, ours = _both(
        lambda T: T.gradient(T.tensor([[1, 3, 7], [2, 2, 9]], dtype=getattr(T, dtype)))
    )
    _same(theirs, ours)


def test_gradient_of_gradient_matches_torch():
    def grads(T):
        y = T.tensor(G, requires_grad=True)
        h = T.tensor([0.0, 1, 1.5, 3, 4], requires_grad=True)
        a, b = T.gradient(y, spacing=[T.tensor([0.0, 1.0, 3.0]), h], edge_order=2)
        (a * a + b * T.arange(15.0).reshape(3, 5)).sum().backward()
        return y.grad, h.grad

    theirs, ours = _both(grads)
    _same(theirs, ours)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.gradient(T.ones(3, dtype=T.uint8)),
        lambda T: T.gradient(T.ones(3, 3), spacing=[1.0, 2.0, 3.0]),
        lambda T: T.gradient(T.ones(3, 3), spacing=[1.0, 2.0], dim=1),
        lambda T: T.gradient(T.ones(3, 3), edge_order=3),
        lambda T: T.gradient(T.ones(3, 2), edge_order=2),
        lambda T: T.gradient(T.ones(1, 3), dim=0),
        lambda T: T.gradient(T.ones(3, 3), dim=2),
        lambda T: T.gradient(T.ones(3, 3), dim=[0, 0]),
        lambda T: T.gradient(T.ones(3, 3), spacing=[T.ones(3, 1)], dim=0),
    ],
)
def test_bad_gradient_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


@pytest.mark.parametrize(
    "args",
    [(2, 0, 5.0), (1, 1, 5), (float("inf"), 0, 5.0), (3.5, -1, 2.0), (2, 1, 0.0)],
)
def test_renorm_matches_torch_values_and_gradients(args):
    def run(T):
        x = T.tensor([[0.0, 1, 2, 3], [4, 5, -6, 7], [0, 0, 0, 0]], requires_grad=True)
        out = T.renorm(x, *args)
        (out * T.arange(12.0).reshape(3, 4)).sum().backward()
        return out, x.grad

    theirs, ours = _both(run)
    _same(theirs, ours)
    assert ours[0].grad_fn.name() == "RenormBackward0"


def test_renorm_method_and_in_place_match_torch():
    def run(T):
        x = T.arange(24.0, dtype=T.float64).reshape(2, 3, 4)
        y = x.renorm(2, 1, 10.0)
        z = x.clone()
        assert z.renorm_(1, 2, 7) is z
        return y, z

    theirs, ours = _both(run)
    _same(theirs, ours)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.renorm(T.ones(2, 2), 0, 0, 1.0),
        lambda T: T.renorm(T.ones(2, 2), -1, 0, 1.0),
        lambda T: T.renorm(T.ones(2, 2), 2, 0, -5),
        lambda T: T.renorm(T.ones(3), 2, 0, 1.0),
        lambda T: T.renorm(T.ones(2, 2), 2, 2, 1.0),
        lambda T: T.renorm(T.ones(2, 2, dtype=T.int64), 2, 0, 1.0),
    ],
)
def test_bad_renorm_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


def test_chain_matmul_multiplies_in_order_and_warns_once_as_torch():
    def run(T):
        torch.set_warn_always(True)
        c.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                a = T.arange(6.0).reshape(2, 3)
                b = T.arange(12.0).reshape(3, 4) / 3
                d = T.arange(8.0).reshape(4, 2) - 2
                out = T.chain_matmul(a, b, d, a)
        finally:
            torch.set_warn_always(False)
            c.set_warn_always(False)
        return out, [str(w.message).split(" (Triggered")[0] for w in seen]

    (theirs, their_warnings), (ours, our_warnings) = _both(run)
    _same(theirs, ours)
    assert our_warnings == their_warnings


def test_chain_matmul_warns_once_unless_warn_always():
    c.chain_matmul(c.ones(2, 2))  # the one warning may be given here
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        c.chain_matmul(c.ones(2, 2), c.ones(2, 2))
    assert not seen
    assert c.is_warn_always_enabled() is False


def test_chain_matmul_of_one_matrix_is_a_copy_and_gradients_match():
    x = c.ones(2, 2)
    assert c.chain_matmul(x) is not x

    def grads(T):
        a = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = T.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, 1.0]], requires_grad=True)
        T.chain_matmul(a, b).sum().backward()
        return a.grad, b.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = _both(grads)
    _same(theirs, ours)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.chain_matmul(),
        lambda T: T.chain_matmul(T.ones(3)),
        lambda T: T.chain_matmul(T.ones(2, 3), T.ones(2, 3)),
        lambda T: T.chain_matmul(T.ones(2, 3), T.ones(3, 3, dtype=T.float64)),
    ],
)
def test_bad_chain_matmul_arguments_raise_torch_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_as_torch(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.fill(T.ones(2, 3), 2),
        lambda T: T.fill(T.ones(2, 3), T.tensor(2.5)),
        lambda T: T.fill(T.ones(2, 3, dtype=T.int64), 2.7),
        lambda T: T.fill(T.ones(2, dtype=T.uint8), -1),
        lambda T: T.fill(T.ones(2, dtype=T.bool), 3),
        lambda T: T.fill(T.ones(()), True),
        lambda T: T.fill(T.ones(1, dtype=T.float16), 70000.0),  # one: rounds to inf
    ],
)
def test_fill_matches_torch(call):
    theirs, ours = _both(call)
    _same(theirs, ours, exact=True)


def test_fill_gradients_match_torch():
    def grads(T):
        x = T.ones(2, 3, requires_grad=True)
        v = T.tensor(2.0, requires_grad=True)
        (T.fill(x, v) * T.arange(6.0).reshape(2, 3)).sum().backward()
        y = T.ones(2, requires_grad=True)
        T.fill(y, 4.0).sum().backward()
        return x.grad, v.grad, y.grad

    theirs, ours = _both(grads)
    for a, b in zip(theirs, ours, strict=True):
        if a is None:
            assert b is None or not b.any()
        else:
            _same(a, b)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.fill(T.ones(2), T.ones(2)),
        lambda T: T.fill(T.ones(2, dtype=T.uint8), 300),
        lambda T: T.fill(T.ones(2, dtype=T.float16), 70000.0),
        lambda T: T.ones(2, dtype=T.float16).fill_(70000.0),
    ],
)
def test_bad_fill_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


@pytest.mark.parametrize("grads", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize(
    "shapes",
    [((4,), (4, 6)), ((2, 4), (3, 4, 6)), ((4,), (3, 4, 6)), ((3, 2, 4), (4, 6))],
    ids=str,
)
@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
def test_matmul_of_a_vector_or_batch_ends_in_torchs_node(shapes, grads, mode, request):
    # a vector times a matrix: mm, then squeeze; a matrix times a batch with
    # the matrix requiring grad: folded into mm and copied back to contiguous
    request.getfixturevalue(mode)

    def run(T):
        a, b = (
            T.arange(float(np.prod(s))).reshape(s).requires_grad_(g)
            for s, g in zip(shapes, grads, strict=True)
        )
        out = a @ b
        out.sum().backward()
        return out.grad_fn.name(), out, a.grad, b.grad

    theirs, ours = _both(run)
    assert ours[0] == theirs[0]
    for t, o in zip(theirs[2:], ours[2:], strict=True):
        assert (t is None) == (o is None)
        if t is not None:
            _same(t, o)
    _same(theirs[1], ours[1])
