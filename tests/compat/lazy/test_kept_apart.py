"""compat's lazy programs on the CPU: a call reads what an earlier call of the
same program made as eager mode's program reads it, so each value has eager
mode's bits however its inputs were made."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy


def _eager_and_lazy(run) -> tuple:
    was = lazy.is_lazy()
    try:
        lazy.set_lazy(False)
        eager = run()
        lazy.set_lazy(True)
        return eager, run()
    finally:
        lazy.set_lazy(was)


def test_a_gradient_zero_but_at_one_element_is_added_as_in_eager_mode():
    """NLLLoss's gradient is zero but at the target. Seen inside the program,
    XLA would add it at that element alone, after the product, which it then
    no longer contracts with the add into an FMA (eager mode's one rounding,
    ``2**-11 + 2**-24`` here; two roundings give ``2**-11``)."""
    a = np.full((1, 4), 1 + 2**-12, np.float32)

    def run():
        x = torch.zeros(1, 4, requires_grad=True)
        torch.nn.functional.nll_loss(x, torch.tensor([1])).backward()
        return torch.addcmul(x.grad, torch.tensor(a), torch.tensor(a)).numpy()

    eager, lazily = _eager_and_lazy(run)
    assert eager[0, 1] == np.float32(2**-11 + 2**-24)
    np.testing.assert_array_equal(lazily, eager)


def test_a_blitz_loop_gives_eager_modes_weights_whether_or_not_it_reads_them():
    """Whether the weights are read between steps (each step's program then
    starts from arrays) or not (the next step's program is recorded on the last
    one's outputs), lazy mode's weights after six momentum steps are eager's."""
    from jaxblitz.compat import nn, optim
    from tests.compat.blitz_net import Net

    def train(read):
        def run():
            torch.manual_seed(0)
            net = Net()
            opt = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
            rng = np.random.default_rng(0)
            for _ in range(6):
                x = torch.tensor(rng.standard_normal((4, 3, 32, 32), np.float32))
                y = torch.tensor(rng.integers(0, 10, 4))
                opt.zero_grad()
                nn.CrossEntropyLoss()(net(x), y).backward()
                opt.step()
                if read:
                    for p in net.parameters():
                        p.detach().numpy()
            return [p.detach().numpy().copy() for p in net.parameters()]

        return run

    eager, lazily = _eager_and_lazy(train(read=False))
    _, lazily_read = _eager_and_lazy(train(read=True))
    for e, a, b in zip(eager, lazily, lazily_read, strict=True):
        np.testing.assert_array_equal(a, e)
        np.testing.assert_array_equal(b, e)


def test_a_gradient_summed_in_bfloat16_is_rounded_before_it_is_cast_back():
    """``h`` feeds two ops, so its gradient is a sum, which eager mode adds as a
    program of its own: rounded to bfloat16 (``1 + 2**-9`` is 1 there), then
    cast back to float32 by ``.to``'s backward. Seen inside the program, XLA
    adds in float32 and drops the round trip (``1 + 2**-9``)."""
    pt = pytest.importorskip("torch")

    def run(t=torch):
        x = t.ones(4, requires_grad=True)
        h = x.to(t.bfloat16)
        b = t.full((4,), 2**-9).to(t.bfloat16)
        (h + h * b).float().sum().backward()
        return x.grad.numpy()

    eager, lazily = _eager_and_lazy(run)
    np.testing.assert_array_equal(eager, run(pt))
    np.testing.assert_array_equal(eager, np.ones(4, np.float32))
    np.testing.assert_array_equal(lazily, eager)
