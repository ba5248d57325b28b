"""compat's lazy backward (``autograd/fused.py``): a backward pass that qualifies
is recorded as one call, with the node-by-node engine's gradients to the bit;
anything else runs node by node, as in eager mode."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy, nn, optim
from jaxblitz.compat.autograd import fused
from tests.compat.autograd.test_extending import _square
from tests.compat.blitz_net import Net
from tests.compat.char_rnn import make_rnn, name_loss, names


@pytest.fixture(name="lazy_mode")
def _lazy_mode():
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    yield
    lazy.set_lazy(was)


def _calls(run) -> int:
    """How many calls ``run()`` records."""
    lazy.metrics(reset=True)
    run()
    return lazy.metrics().get("calls", 0)


def _data(batch: int = 4):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((batch, 3, 32, 32), dtype=np.float32))
    return x, torch.tensor(rng.integers(0, 10, batch))


def test_a_blitz_backward_is_recorded_as_one_call(lazy_mode):
    torch.manual_seed(0)
    net, criterion = Net(), nn.CrossEntropyLoss()
    x, y = _data()
    loss = criterion(net(x), y)
    assert _calls(loss.backward) == 1  # every .grad None: handed over as made
    loss = criterion(net(x), y)
    # into existing .grad: the one call, then one sum per parameter
    assert _calls(loss.backward) == 1 + len(list(net.parameters()))


def _train_blitz(steps: int) -> tuple[list, list]:
    """The Blitz's step with two backward passes into the same ``.grad`` and SGD
    with momentum: the gradients of each step, and the weights at the end."""
    torch.manual_seed(0)
    net, criterion = Net(), nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = _data()
    grads = []
    for _ in range(steps):
        optimizer.zero_grad()
        criterion(net(x), y).backward()
        criterion(net(x * 0.5), y).backward()
        grads.append([p.grad.numpy().copy() for p in net.parameters()])
        optimizer.step()
    return grads, [p.detach().numpy().copy() for p in net.parameters()]


def _assert_same(a: list, b: list) -> None:
    for u, v in zip(a, b, strict=True):
        if isinstance(u, list):
            _assert_same(u, v)
        else:
            assert u.dtype == v.dtype
            np.testing.assert_array_equal(u, v)


def _eager_then_lazy(train, steps: int) -> tuple:
    """``train(steps)`` eagerly (node by node), then lazily."""
    was = lazy.is_lazy()
    try:
        lazy.set_lazy(False)
        eager = train(steps)
        lazy.set_lazy(True)
        return eager, train(steps)
    finally:
        lazy.set_lazy(was)


def test_lazy_blitz_training_gives_eager_modes_gradients_to_the_bit():
    eager, lazily = _eager_then_lazy(_train_blitz, 4)
    _assert_same(lazily[0], eager[0])
    _assert_same(lazily[1], eager[1])


def _train_rnn(steps: int) -> tuple[list, list]:
    """The char-RNN over a name a step, SGD with momentum."""
    rnn = make_rnn()
    optimizer = optim.SGD(rnn.parameters(), lr=0.005, momentum=0.9)
    grads = []
    for line, category in names(steps):
        optimizer.zero_grad()
        name_loss(rnn, line, category).backward()
        grads.append([p.grad.numpy().copy() for p in rnn.parameters()])
        optimizer.step()
    return grads, [p.detach().numpy().copy() for p in rnn.parameters()]


def test_char_rnn_lazily_gives_the_node_by_node_gradients_to_the_bit(
    lazy_mode, monkeypatch
):
    """The steps' weight gradients meet in sums of products: the one call keeps
    each node's products apart as the node-by-node calls are kept apart."""
    recorded = _train_rnn(4)
    monkeypatch.setattr(fused, "record", lambda order, retain_graph: False)
    node_by_node = _train_rnn(4)
    _assert_same(recorded[0], node_by_node[0])
    _assert_same(recorded[1], node_by_node[1])


def test_char_rnn_lazily_gives_eager_modes_gradients_and_weights_to_the_bit():
    """From the second step on, each step's program begins with the last
    optimizer step (the gradients were read, the weights were not): the new
    weights cross into the backward as eager mode's programs receive them."""
    eager, lazily = _eager_then_lazy(_train_rnn, 4)
    _assert_same(lazily[0], eager[0])
    _assert_same(lazily[1], eager[1])


def _train_rnn_by_hand(steps: int) -> tuple[list, list]:
    """The char-RNN tutorial's own update: ``p.data.add_(p.grad.data, alpha=-lr)``."""
    rnn = make_rnn()
    grads = []
    for line, category in names(steps):
        rnn.zero_grad()
        name_loss(rnn, line, category).backward()
        grads.append([p.grad.numpy().copy() for p in rnn.parameters()])
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-0.005)
    return grads, [p.detach().numpy().copy() for p in rnn.parameters()]


@pytest.mark.parametrize("fused_backward", [True, False])
def test_char_rnn_updated_by_hand_lazily_gives_eager_modes_bits(
    monkeypatch, fused_backward
):
    if not fused_backward:
        monkeypatch.setattr(fused, "record", lambda order, retain_graph: False)
    eager, lazily = _eager_then_lazy(_train_rnn_by_hand, 4)
    _assert_same(lazily[0], eager[0])
    _assert_same(lazily[1], eager[1])


def test_gradients_accumulate_into_grad_in_its_dtype(lazy_mode):
    w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    loss = ((w * x).exp() * w).sum()
    assert _calls(loss.backward) == 1
    grad = w.grad
    loss = ((w * x).exp() * w).sum()
    assert _calls(loss.backward) == 2  # the one call, then the sum into .grad
    assert w.grad is grad  # torch accumulates into the same tensor
    assert w.grad.dtype == torch.float64
    wx = np.array([1.0, 2.0, 3.0]) * np.array([0.5, -1.0, 2.0])
    expected = np.exp(wx) * (1 + wx)
    np.testing.assert_allclose(w.grad.numpy(), 2 * expected, rtol=1e-12)


def test_the_graph_is_freed_unless_retained(lazy_mode):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    version, node = w._version, loss.grad_fn
    assert _calls(lambda: loss.backward(retain_graph=True)) == 1
    loss.backward()  # retained: a second pass works
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 8.0])
    assert loss.grad_fn is node and w._version == version
    with pytest.raises(RuntimeError, match="backward through the graph a second"):
        loss.backward()


def test_an_inplace_edit_of_a_saved_tensor_still_raises(lazy_mode):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = (w * 2).exp()
    loss = (out * w).sum()
    out.add_(1)  # exp saved its result; torch refuses to use it now
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_a_tensor_hook_runs_node_by_node_with_torchs_gradient(lazy_mode):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = torch.tensor([0.5, -1.0, 2.0])
    h = w * x
    h.register_hook(lambda g: g * 2)
    loss = (h.exp() * w).sum()
    assert _calls(loss.backward) > 1
    e = np.exp(np.array([0.5, -2.0, 6.0], np.float32))
    expected = e + 2 * np.array([1, 2, 3], np.float32) * e * x.numpy()
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6)


def test_retain_grad_runs_node_by_node_and_keeps_the_gradient(lazy_mode):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = w * 3
    h.retain_grad()
    loss = (h * h).sum()
    assert _calls(loss.backward) > 1
    np.testing.assert_array_equal(h.grad.numpy(), [6.0, 12.0, 18.0])
    np.testing.assert_array_equal(w.grad.numpy(), [18.0, 36.0, 54.0])


def test_a_custom_function_runs_node_by_node(lazy_mode):
    square = _square(torch)  # a custom autograd.Function: x * x
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = square.apply(w * 1).sum()
    assert _calls(loss.backward) > 1
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0, 6.0])


def test_a_post_accumulate_grad_hook_runs_with_grad_mode_off(lazy_mode):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.5))
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])


def _sum_then_matmul(x, w):
    h = x @ w.t()  # (4, 4): its gradient sums two products' gradients
    return (h @ x).tanh().sum() + (h @ w).sigmoid().sum()


def _sum_then_mul_then_add(x, w):
    h = x * w
    u = h.exp() + h * w
    return (u * x + u).sum()


def _three_consumers(x, w):
    h = x * w
    return (h.sin() + h.cos() + h * h).sum()


def _summed_into_a_leaf(x, w):
    return (x * w).sum() + (x.exp() * w).sum() + (x @ w.t()).sum()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(
    "graph",
    [_sum_then_matmul, _sum_then_mul_then_add, _three_consumers, _summed_into_a_leaf],
)
def test_a_gradient_summed_from_several_uses_has_eager_modes_bits(graph, dtype):
    """A tensor used several times: its gradient is a running sum, which eager
    mode adds as a program of its own before the next node reads it. In
    bfloat16 (leaves cast in, the loss cast out), the cast's backward reads the
    sum: inside one call XLA would skip its rounding to bfloat16."""
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((4, 8), np.float32) for _ in range(2)]
    values[1] = 1 + 2**-12 * np.round(values[1] * 8)

    def run() -> tuple[int, list]:
        leaves = [torch.tensor(v, requires_grad=True) for v in values]
        loss = graph(*[t.to(getattr(torch, dtype)) for t in leaves]).float()
        return _calls(loss.backward), [t.grad.numpy().copy() for t in leaves]

    was = lazy.is_lazy()
    try:
        lazy.set_lazy(False)
        _, eager = run()
        lazy.set_lazy(True)
        calls, lazily = run()
    finally:
        lazy.set_lazy(was)
    assert calls == 1  # the whole backward, as one call
    _assert_same(lazily, eager)
