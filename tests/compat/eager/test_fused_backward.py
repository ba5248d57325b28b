"""compat's fused backward (``_eager/_fused.py``): a graph that repeats runs its
backward as one program, with the node-by-node engine's gradients to the bit, and
only where that engine would do nothing else."""

from __future__ import annotations

import concurrent.futures

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import nn
from jaxblitz.compat._eager import _fused, _warm
from tests.compat.autograd.test_extending import _square
from tests.compat.blitz_net import Net
from tests.compat.char_rnn import make_rnn, name_loss, names
from tests.compat.modes import eager_only

# Lazy execution runs a backward inside the step's program.
pytestmark = eager_only("the fused backward (_eager/_fused.py)")


@pytest.fixture
def fused(monkeypatch):
    """Fusing after 2 repeats, on a spare core; records what each backward did
    (True: the one program ran)."""
    monkeypatch.setattr(_warm, "_spare", True)
    monkeypatch.setattr(_warm, "_active", False)  # first-step warm-ups are over
    monkeypatch.setattr(_fused, "REPEATS", 2)
    _fused.clear()
    runs: list[bool] = []
    run = _fused.run

    def recorded(order, retain_graph):
        did = run(order, retain_graph)
        runs.append(did)
        return did

    monkeypatch.setattr(_fused, "run", recorded)
    yield runs
    _fused.clear()


def _compiled() -> None:
    """Wait for the fused programs being compiled on the spare core."""
    futures = [entry[1] for entry in _fused._cache.values() if entry[1] is not None]
    assert futures, "no fused program was started"
    concurrent.futures.wait(futures)
    for future in futures:
        assert future.exception() is None


def _data():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((4, 3, 32, 32), dtype=np.float32))
    return x, torch.tensor(rng.integers(0, 10, 4))


def _grads(net) -> list[np.ndarray]:
    return [p.grad.numpy().copy() for p in net.parameters()]


def test_blitz_step_fused_gives_the_same_gradients_to_the_bit(fused):
    torch.manual_seed(0)
    net, criterion = Net(), nn.CrossEntropyLoss()
    x, y = _data()
    seen = []
    for i in range(6):
        net.zero_grad()
        criterion(net(x), y).backward()
        seen.append(_grads(net))
        if i == 1:
            _compiled()
    assert fused == [False, False, True, True, True, True]
    for grads in seen[2:]:
        for g, ref in zip(grads, seen[0], strict=True):
            np.testing.assert_array_equal(g, ref)


def test_char_rnn_fused_gives_the_same_gradients_to_the_bit(fused):
    """The weights' gradients of the RNN's steps meet in sums of products: the
    one program keeps each node's products apart as its own program would."""
    rnn = make_rnn()
    (line, category), seen = names(1)[0], []
    for i in range(5):
        rnn.zero_grad()
        name_loss(rnn, line, category).backward()
        seen.append(_grads(rnn))
        if i == 1:
            _compiled()
    assert fused == [False, False, True, True, True]
    for grads in seen[2:]:
        for g, ref in zip(grads, seen[0], strict=True):
            np.testing.assert_array_equal(g, ref)


def test_training_fused_equals_training_node_by_node(fused, monkeypatch):
    """SGD with momentum, gradients accumulated over two backward passes a step:
    the same weights either way."""

    def train(steps: int) -> list[np.ndarray]:
        torch.manual_seed(0)
        net, criterion = Net(), nn.CrossEntropyLoss()
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        x, y = _data()
        for i in range(steps):
            opt.zero_grad()
            criterion(net(x), y).backward()
            criterion(net(x * 0.5), y).backward()  # into the same .grad
            opt.step()
            if i == 1 and _warm.spare():
                _compiled()
        return [p.detach().numpy().copy() for p in net.parameters()]

    fusing = train(5)
    assert sum(fused) >= 4
    monkeypatch.setattr(_warm, "_spare", False)  # one core: node by node
    fused.clear()
    reference = train(5)
    assert not any(fused)
    for a, b in zip(fusing, reference, strict=True):
        np.testing.assert_array_equal(a, b)


def _ready_graph(fused):
    """A small graph, fused and ready: (w, x, loss function)."""
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = torch.tensor([0.5, -1.0, 2.0])

    def loss_fn():
        return ((w * x).exp() * w).sum()

    for _ in range(2):
        loss_fn().backward()
    _compiled()
    w.grad = None
    loss_fn().backward()
    assert fused[-1] is True
    return w, x, loss_fn


def test_hooks_and_retain_grad_take_the_node_by_node_path(fused):
    w, x, loss_fn = _ready_graph(fused)
    expected = w.grad.numpy().copy()
    w.grad = None
    h = w * x
    h.register_hook(lambda g: g * 2)  # same structure, plus a hook
    loss = (h.exp() * w).sum()
    loss.backward()
    assert fused[-1] is False
    exp_hx = np.exp(np.array([0.5, -2.0, 6.0], np.float32))
    doubled = exp_hx + 2 * np.array([1, 2, 3], np.float32) * exp_hx * x.numpy()
    np.testing.assert_allclose(w.grad.numpy(), doubled, rtol=1e-6)
    assert not np.allclose(doubled, expected)

    w.grad = None
    h = w * x
    h.retain_grad()
    (h.exp() * w).sum().backward()
    assert fused[-1] is False and h.grad is not None


def test_a_post_accumulate_grad_hook_runs_as_node_by_node(fused):
    """An update in the hook (an optimizer in backward) runs as the engine runs
    it, with grad mode off, as torch's."""
    w, _, loss_fn = _ready_graph(fused)
    before = w.detach().numpy().copy()
    w.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.5))
    w.grad = None
    loss_fn().backward()
    assert fused[-1] is False
    np.testing.assert_array_equal(w.detach().numpy(), before - 0.5 * w.grad.numpy())


def test_an_inplace_edit_of_a_saved_tensor_still_raises(fused):
    w, x, _ = _ready_graph(fused)
    h = w * x
    out = h.exp()
    loss = (out * w).sum()
    out.add_(1)  # exp saved its result; torch refuses to use it now
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_the_graph_is_freed_unless_retained(fused):
    _, _, loss_fn = _ready_graph(fused)
    loss = loss_fn()
    loss.backward(retain_graph=True)
    loss.backward()  # retained: a second pass works
    assert fused[-2:] == [True, True]
    with pytest.raises(RuntimeError, match="backward through the graph a second"):
        loss.backward()


def test_a_new_shape_or_a_custom_function_runs_node_by_node(fused):
    w, _, _ = _ready_graph(fused)
    w2 = torch.tensor([1.0, 2.0], requires_grad=True)
    ((w2 * torch.tensor([0.5, -1.0])).exp() * w2).sum().backward()
    assert fused[-1] is False  # another shape: counted, not yet fused

    square = _square(torch)  # a custom autograd.Function: x * x
    for _ in range(3):
        w.grad = None
        square.apply(w).sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0, 6.0])
    assert fused[-3:] == [False, False, False]


def test_off_without_a_spare_core(fused, monkeypatch):
    monkeypatch.setattr(_warm, "_spare", False)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(4):
        (w * w).sum().backward()
    assert fused == [False] * 4
    assert not _fused._cache
    np.testing.assert_array_equal(w.grad.numpy(), [8.0, 16.0])


def test_a_module_backward_hook_runs_after_fusion(fused):
    torch.manual_seed(0)
    net, criterion = Net(), nn.CrossEntropyLoss()
    x, y = _data()
    for _ in range(3):
        net.zero_grad()
        criterion(net(x), y).backward()
    _compiled()
    seen = []
    handle = net.fc3.register_full_backward_hook(
        lambda module, grad_in, grad_out: seen.append(grad_out[0].shape)
    )
    net.zero_grad()
    criterion(net(x), y).backward()
    assert fused[-1] is False and seen == [(4, 10)]
    handle.remove()
    net.zero_grad()
    criterion(net(x), y).backward()
    assert fused[-1] is True and len(seen) == 1


def test_a_bfloat16_sum_fused_is_rounded_as_node_by_node(fused):
    """A gradient summed in bfloat16 and cast back to float32 (``h`` feeds two
    ops): once the graph repeats and its backward is one program, the sum is
    still rounded to bfloat16 before the cast, as the node-by-node engine's
    own sum is (``1 + 2**-9`` is 1 there; PyTorch gives 1)."""
    x = torch.ones(4, requires_grad=True)
    b = torch.full((4,), 2**-9).to(torch.bfloat16)
    seen = []
    for i in range(5):
        x.grad = None
        h = x.to(torch.bfloat16)
        (h + h * b).float().sum().backward()
        seen.append(x.grad.numpy().copy())
        if i == 1:
            _compiled()
    assert fused == [False, False, True, True, True]
    for grad in seen:
        np.testing.assert_array_equal(grad, np.ones(4, np.float32))
