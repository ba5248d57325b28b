"""compat's Tensor.hardshrink, prelu, new (the legacy constructor), as_subclass
and map2_ against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((2, 3))


def _same(a, b):
    assert tuple(b.shape) == tuple(a.shape)
    assert str(b.dtype) == str(a.dtype)
    assert b.requires_grad == a.requires_grad
    np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x, w: x.hardshrink(),
        lambda T, x, w: x.hardshrink(lambd=0.1),
        lambda T, x, w: x.prelu(w),
    ],
)
def test_activation_methods_match_torch_with_gradients(call):
    results = []
    for T in (torch, c):
        x = T.tensor(X.tolist(), dtype=T.float64, requires_grad=True)
        w = T.tensor([0.25], dtype=T.float64, requires_grad=True)
        out = call(T, x, w)
        (out * out).sum().backward()
        results.append((out, x.grad, w.grad))
    for a, b in zip(*results, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            _same(a.detach(), b.detach())


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: x.new([1, 2]),
        lambda T, x: x.new((2.5, 3)),
        lambda T, x: x.new(),
        lambda T, x: x.new(0),
        lambda T, x: x.new(2, 3).fill_(1),
        lambda T, x: x.new(T.Size([2, 3])).fill_(2),
        lambda T, x: x.new(x),
        lambda T, x: x.new(np.zeros(2, dtype=np.float32)),
        lambda T, x: x.new(device="cpu"),
        lambda T, x: x.long().new([1.7, 2]),
    ],
)
def test_new_builds_with_the_dtype_and_device_of_its_tensor(call):
    _same(
        call(torch, torch.tensor(X.tolist(), requires_grad=True)),
        call(c, c.tensor(X.tolist(), requires_grad=True)),
    )


def test_new_of_a_tensor_is_an_alias_of_it():
    x = c.ones(2, 3)
    y = x.new(x)
    y.add_(1)
    assert x.tolist() == [[2.0] * 3] * 2 and y is not x


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: x.new(3.5),
        lambda T, x: x.new(True),
        lambda T, x: x.new(-1),
        lambda T, x: x.new(2, 3.0),
        lambda T, x: x.new(2, dtype=T.int32),
        lambda T, x: x.new([[1, 2], [3]]),
        lambda T, x: x.new(x.long()),
        lambda T, x: x.new([1, 2], device="meta"),
        lambda T, x: x.as_subclass(int),
        lambda T, x: x.map2_(x, x, lambda a, b, c: a),
        lambda T, x: x.detach().map2_(x[:, :2].detach(), x.detach(), lambda a, b, c: a),
    ],
)
def test_new_as_subclass_and_map2_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(X.tolist(), requires_grad=True))
    with pytest.raises(type(theirs.value)) as ours:
        call(c, c.tensor(X.tolist(), requires_grad=True))
    if type(theirs.value) is not TypeError:
        assert str(ours.value) == str(theirs.value)


def test_as_subclass_is_an_alias_on_the_graph():
    x = c.ones(3, requires_grad=True)
    p = x.as_subclass(c.nn.Parameter)
    assert type(p) is c.nn.Parameter and p.requires_grad
    (p * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    y = c.ones(3)
    y.as_subclass(c.Tensor).add_(1)
    assert y.tolist() == [2.0, 2.0, 2.0]


def test_map2_calls_with_each_element_of_three_broadcast_tensors():
    results = []
    for T in (torch, c):
        x = T.tensor(X.tolist())
        x.map2_(
            T.tensor(X.tolist()), T.tensor(X[0].tolist()), lambda a, b, c: a + b * c
        )
        results.append(x.tolist())
    np.testing.assert_allclose(results[1], results[0])
