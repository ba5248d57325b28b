"""torch's checks of values (an index in range, a class target, a probability
in [0, 1] for a loss or a draw, a divisor not zero) never run pending work
early: lazily, a check of values that are pending is recorded with the work and
raises at the next sync point, with torch's message and the user's line; values
already known are checked at the op, as eager mode checks them. A loop whose
indices or targets are computed then still runs one program a step."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F
from jaxblitz.compat import lazy

pt = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((20, 5)).astype(np.float32)


def _cases(t, bad: bool):
    """(name, op) pairs on library ``t`` (torch or compat), each taking an index,
    a target or a divisor computed from ``base`` (pending, lazily); ``bad``:
    values torch refuses."""
    f = t.nn.functional
    x = t.tensor(X)
    shift = 30 if bad else 1
    emb = t.nn.Embedding(10, 4)

    def idx(base):  # computed: pending, lazily
        return base + shift

    def classes(base, n):  # 3 classes, the last out of range when bad
        return idx(base) % n + t.tensor([0, 0, n if bad else 0])

    def column(base):
        return idx(base)[:, None]

    return [
        ("x[index]", lambda b: x[idx(b)]),
        ("x[index] = v", lambda b: x.clone().__setitem__(idx(b), 0.0)),
        ("index_select", lambda b: x.index_select(0, idx(b))),
        ("gather", lambda b: x.gather(1, column(b).expand(3, 5) % 5 + shift - 1)),
        ("scatter", lambda b: t.zeros(20, 5).scatter(0, column(b), x[:3])),
        ("take", lambda b: x.take(idx(b) * (4 if bad else 1))),
        ("index_add", lambda b: t.zeros(20, 5).index_add(0, idx(b), x[:3])),
        ("embedding", lambda b: emb(classes(b, 10))),
        ("cross_entropy", lambda b: f.cross_entropy(x[:3], classes(b, 5))),
        ("nll_loss", lambda b: f.nll_loss(x[:3], classes(b, 5))),
        ("multi_margin_loss", lambda b: f.multi_margin_loss(x[:3], classes(b, 5))),
        ("one_hot", lambda b: f.one_hot(idx(b), 30)),
        (
            "binary_cross_entropy",
            lambda b: f.binary_cross_entropy(t.sigmoid(x) * shift, t.ones(20, 5)),
        ),
        (
            "gaussian_nll_loss",
            lambda b: f.gaussian_nll_loss(x, x, t.ones(20, 5) - (2.0 if bad else 0.0)),
        ),
        ("integer division", lambda b: idx(b) // (idx(b) - (idx(b) if bad else 0))),
        ("bernoulli", lambda b: t.bernoulli(t.sigmoid(x) * shift)),
        ("bernoulli_", lambda b: t.zeros(20, 5).bernoulli_(t.sigmoid(x) * shift)),
    ]


NAMES = [name for name, _ in _cases(torch, False)]


def _base(t):
    return t.tensor([1, 3, 5])


@pytest.mark.parametrize("name", NAMES)
def test_a_check_of_pending_values_runs_no_work_early(lazily, name):
    op = dict(_cases(torch, False))[name]
    base = _base(torch)
    lazy.sync()
    lazy.metrics(reset=True)
    for _ in range(3):
        op(base)
    assert lazy.metrics().get("syncs", 0) == 0, name
    lazy.sync()  # and the values were fine: nothing raised


@pytest.mark.parametrize("name", NAMES)
def test_a_wrong_value_raises_torchs_error_at_the_sync_naming_the_line(lazily, name):
    with pytest.raises(Exception) as expected:
        dict(_cases(pt, True))[name](_base(pt))
    op = dict(_cases(torch, True))[name]
    base = _base(torch)
    lazy.sync()
    op(base)  # recorded: nothing known yet
    with pytest.raises(type(expected.value)) as raised:
        lazy.sync()
    message = str(raised.value)
    assert str(expected.value).split("\n")[0] in message, (message, expected.value)
    assert re.search(r"recorded at test_deferred_checks\.py:\d+", message), message
    lazy.sync()  # raised once: the next sync has nothing left to say


@pytest.mark.parametrize("name", NAMES)
def test_eagerly_a_wrong_value_raises_torchs_error_at_the_op(name):
    with pytest.raises(Exception) as expected:
        dict(_cases(pt, True))[name](_base(pt))
    was = lazy.is_lazy()
    lazy.set_lazy(False)
    try:
        with pytest.raises(type(expected.value)) as raised:
            dict(_cases(torch, True))[name](_base(torch))
    finally:
        lazy.set_lazy(was)
    assert str(expected.value).split("\n")[0] in str(raised.value)


def test_checks_raise_in_the_order_torch_checks(lazily):
    """one_hot checks for a negative class before a class too large, whichever
    comes first in the tensor."""
    classes = torch.tensor([1, 3, 5]) * torch.tensor([3, 1, -1])  # [3, 3, -5]
    F.one_hot(classes, 2)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        lazy.sync()


def test_the_first_wrong_value_is_named(lazily):
    target = torch.tensor([0, 7, 9]) + 0
    F.cross_entropy(torch.tensor(X[:3]), target)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        lazy.sync()


def test_a_loop_with_computed_targets_compiles_once_and_syncs_once_a_step(lazily):
    """A classifier whose targets and batch come from tensor ops (indices taken
    from a permutation, classes cast): one program a step, compiled once."""
    torch.manual_seed(0)
    net = torch.nn.Linear(5, 4)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    data, labels = torch.tensor(X), torch.tensor(np.arange(20) % 4)
    order = torch.tensor(np.random.default_rng(1).permutation(20))
    lazy.sync()
    lazy.metrics(reset=True)
    for step in range(5):
        batch = order[step * 4 : step * 4 + 4]
        opt.zero_grad()
        loss = F.cross_entropy(net(data[batch]), labels[batch].long())
        loss.backward()
        opt.step()
        loss.item()
    counts = lazy.metrics()
    assert counts["syncs"] == 5
    assert counts.get("compiles", 0) <= 2  # the first step's, then one reused
