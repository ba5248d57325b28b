"""Sampling in lazy mode: ``torch.multinomial``, ``torch.poisson``,
``torch.binomial``, ``torch.normal`` with tensor parameters and
``distributions.Categorical`` draw inside the recorded program (compat's stream,
from its generator's next key: the same values in both modes for the same seed,
not torch's values), so a loop that samples from computed parameters --
REINFORCE's policy -- runs no work early. torch's argument errors stay at the
op; its value errors (a negative weight, a row summing to zero, a negative rate
or std, a non-finite gradient norm) are raised at the next sync lazily, with
torch's message and the user's line, and at the op eagerly. A boolean-mask
write of one value, whose shape does not depend on the mask, is recorded too."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy

pt = pytest.importorskip("torch")

W = np.random.default_rng(0).random((4, 6)).astype(np.float32)


@pytest.fixture(params=[False, True], ids=["eager", "lazy"])
def mode(request):
    was = lazy.is_lazy()
    lazy.set_lazy(request.param)
    try:
        yield request.param
    finally:
        lazy.set_lazy(was)


def _samplers(t):
    """(name, draw) pairs on library ``t``, each drawing from parameters
    computed from ``w`` (pending, lazily)."""
    D = t.distributions

    def cat(w):
        return D.Categorical(logits=w * 3)

    return [
        ("multinomial", lambda w: t.multinomial(w * 2, 3)),
        ("multinomial 1-d", lambda w: t.multinomial(w[0] * 2, 1)),
        ("multinomial replacement", lambda w: t.multinomial(w + 0.1, 7, True)),
        ("poisson", lambda w: t.poisson(w * 4)),
        ("normal", lambda w: t.normal(w, w * 0.5)),
        ("normal number mean", lambda w: t.normal(1.0, w)),
        ("binomial", lambda w: t.binomial((w * 10).floor(), w)),
        ("Categorical.sample", lambda w: cat(w).sample((5,))),
        ("Categorical.log_prob", lambda w: cat(w).log_prob(cat(w).sample())),
        ("Categorical probs", lambda w: D.Categorical(probs=w + 0.1).sample()),
        ("Multinomial.sample", lambda w: D.Multinomial(4, probs=w + 0.1).sample()),
    ]


NAMES = [name for name, _ in _samplers(torch)]


def _draw(name: str, lazily: bool, seed: int = 0) -> np.ndarray:
    was = lazy.is_lazy()
    lazy.set_lazy(lazily)
    try:
        torch.manual_seed(seed)
        w = torch.tensor(W) * 1  # computed: pending, lazily
        return dict(_samplers(torch))[name](w).numpy()
    finally:
        lazy.set_lazy(was)


@pytest.mark.parametrize("name", NAMES)
def test_a_draw_gives_the_same_values_in_both_modes(name):
    eager = _draw(name, False)
    np.testing.assert_array_equal(_draw(name, True), eager)
    assert not np.array_equal(_draw(name, False, seed=1), eager) or name == (
        "multinomial 1-d"  # one category of six: two seeds may agree
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_draw_from_pending_parameters_runs_no_work_early(name):
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        w = torch.tensor(W) * 1
        lazy.sync()
        lazy.metrics(reset=True)
        out = dict(_samplers(torch))[name](w)
        assert lazy.metrics().get("syncs", 0) == 0
        out.numpy()
        assert lazy.metrics()["syncs"] == 1
    finally:
        lazy.set_lazy(was)


@pytest.mark.parametrize("name", NAMES)
def test_a_draw_has_torchs_shape_and_dtype(mode, name):
    expected = dict(_samplers(pt))[name](pt.tensor(W))
    got = dict(_samplers(torch))[name](torch.tensor(W) * 1)
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype) == str(expected.dtype)


def test_multinomial_without_replacement_draws_distinct_categories(mode):
    torch.manual_seed(0)
    rows = torch.multinomial(torch.tensor(W) * 1, 6).numpy()
    assert (np.sort(rows, axis=1) == np.arange(6)).all()


def test_zero_weights_come_last_in_both_modes(mode):
    w = torch.tensor([[0.0, 1.0, 0.0, 2.0]]) * 1
    assert torch.multinomial(w, 4).numpy()[0, 2:].tolist() == [0, 2]


def _clip(t, w):
    p = t.zeros(2, 4, requires_grad=True)
    p.grad = w / (w - w.max())  # an infinite gradient
    return t.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)


BAD = [
    ("negative weight", lambda t, w: t.multinomial(w - 0.5, 2)),
    ("zero row", lambda t, w: t.multinomial(w * t.tensor([[1.0], [0.0]]), 2)),
    ("replacement negative", lambda t, w: t.multinomial(w - 0.5, 3, True)),
    ("replacement nan", lambda t, w: t.multinomial(w / (w - w), 3, True)),
    ("replacement inf", lambda t, w: t.multinomial(w / (w - w.max()), 3, True)),
    (
        "replacement zero row",
        lambda t, w: t.multinomial(w * t.tensor([[1.0], [0.0]]), 3, True),
    ),
    ("negative rate", lambda t, w: t.poisson(w - 0.5)),
    ("negative std", lambda t, w: t.normal(w, w - 0.5)),
    ("clip_grad_norm_ non-finite", _clip),
    ("cov aweights", lambda t, w: t.cov(w, aweights=w[0] - 0.5)),
    (
        "cov fweights",
        lambda t, w: t.cov(w, fweights=(w[0] * 4).long() - 2),
    ),
    (
        "Categorical probs",
        lambda t, w: t.distributions.Categorical(probs=w - 0.5),
    ),
    ("Geometric zero probs", lambda t, w: t.distributions.Geometric(w * 0)),
]
BAD_NAMES = [name for name, _ in BAD]


def _w(t):
    return t.tensor(W[:2, :4]) * 1


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_wrong_value_raises_torchs_error_at_the_sync_naming_the_line(lazily, name):
    with pytest.raises(Exception) as expected:
        dict(BAD)[name](pt, _w(pt))
    w = _w(torch)
    lazy.sync()
    lazy.metrics(reset=True)
    dict(BAD)[name](torch, w)
    assert lazy.metrics().get("syncs", 0) == 0
    with pytest.raises(type(expected.value)) as raised:
        lazy.sync()
    lazy.sync()  # raised once
    message = str(raised.value)
    assert message.startswith(str(expected.value).split("\n")[0]), message
    assert re.search(r"recorded at test_lazy_sampling\.py:\d+", message), message


@pytest.mark.parametrize("name", BAD_NAMES)
def test_eagerly_a_wrong_value_raises_torchs_error_at_the_op(eagerly, name):
    with pytest.raises(Exception) as expected:
        dict(BAD)[name](pt, _w(pt))
    with pytest.raises(type(expected.value)) as raised:
        dict(BAD)[name](torch, _w(torch))
    assert str(raised.value) == str(expected.value)


KNOWN_BAD = [
    (
        "Uniform.log_prob outside the support",
        lambda D, t: D.Uniform(t([0.0, -1.0]), t([1.0, 3.0])).log_prob(t([0.5, 3.5])),
    ),
    ("Normal broadcast scale", lambda D, t: D.Normal(t(0.0), t([1.0, -1.0]))),
    ("Categorical normalised probs", lambda D, t: D.Categorical(t([-0.5, 1.0]))),
    ("Bernoulli.log_prob", lambda D, t: D.Bernoulli(t([0.5])).log_prob(t([0.5]))),
    (
        "Gamma.log_prob",
        lambda D, t: D.Gamma(t([1.0]), t([2.0])).log_prob(t([-1.0])),
    ),
    ("Geometric zero probs", lambda D, t: D.Geometric(t([0.5, 0.0]))),
]


@pytest.mark.parametrize("name", [name for name, _ in KNOWN_BAD])
def test_a_distribution_checks_known_values_at_the_op_lazily(lazily, name):
    """Parameters and values known when the distribution is made or scored are
    checked there, as torch checks them, with nothing pending run early."""
    make = dict(KNOWN_BAD)[name]
    with pytest.raises(ValueError) as expected:
        make(pt.distributions, pt.tensor)
    lazy.sync()
    lazy.metrics(reset=True)
    with pytest.raises(ValueError) as raised:
        make(torch.distributions, torch.tensor)
    assert str(raised.value) == str(expected.value)
    assert lazy.metrics().get("syncs", 0) == 0
    lazy.sync()  # and nothing is left to raise later


def test_an_argument_error_is_raised_at_the_op_lazily():
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        w = _w(torch)
        with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
            torch.multinomial(w, 5)
    finally:
        lazy.set_lazy(was)


def _reinforce(t, steps: int, read) -> None:
    """A policy-gradient loop: a Categorical policy over computed logits, its
    sampled actions scored and reinforced; ``read`` logs the reward."""
    t.manual_seed(0)
    policy = t.nn.Linear(4, 3)
    opt = t.optim.SGD(policy.parameters(), lr=0.1)
    state = t.tensor(W[:, :4])
    target = t.tensor([0, 1, 2, 0])
    for _ in range(steps):
        dist = t.distributions.Categorical(logits=policy(state))
        action = dist.sample()
        reward = (action == target).float()
        loss = -(dist.log_prob(action) * (reward - reward.mean())).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        read(reward.sum())


def test_a_reinforce_loop_syncs_once_a_step_where_it_reads_its_reward():
    """Building the policy's distribution, sampling and scoring the actions
    read no value: the reward's log is the step's one sync."""
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        rewards: list[float] = []
        lazy.sync()
        lazy.metrics(reset=True)
        _reinforce(torch, 6, lambda r: rewards.append(r.item()))
        counts = lazy.metrics()
    finally:
        lazy.set_lazy(was)
    assert counts["syncs"] == 6, counts
    eager: list[float] = []
    _reinforce(torch, 6, lambda r: eager.append(r.item()))
    assert rewards == eager


@pytest.mark.parametrize(
    "write",
    [
        lambda t, y: y.__setitem__(y > 0, 0.5),
        lambda t, y: y.__setitem__(t.tensor([True, False, True, False]), -1.0),
        lambda t, y: y.__setitem__(y < -2, t.tensor(7.0)),
        lambda t, y: y.__setitem__(y < 0, float("nan")),
    ],
    ids=["computed mask", "row mask", "0-d tensor", "nan"],
)
def test_a_boolean_mask_write_of_one_value_reads_no_mask(mode, write):
    """Its shape does not depend on the mask: recorded as a where, the values
    and gradient torch's."""
    out = []
    for t in (pt, torch):
        x = t.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3) - 5)
        x.requires_grad_()
        y = x * 1
        lazy.sync()
        lazy.metrics(reset=True)
        write(t, y)
        if t is torch:
            assert lazy.metrics().get("syncs", 0) == 0
        assert y.grad_fn.name() == "IndexPutBackward0"
        y.sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])


def test_a_transformer_encoder_layer_forward_reads_no_value():
    """Its attention reshapes a permuted tensor: a copy in torch's dense layout,
    recorded (the same values as eagerly)."""
    out = []
    # lazily first: eager mode's background warm-up of the eager run's
    # programs may read values a later lazy run has pending
    for lazily in (True, False):
        was = lazy.is_lazy()
        lazy.set_lazy(lazily)
        try:
            torch.manual_seed(0)
            layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
            x = torch.tensor(W[:, :4].repeat(2, axis=1)).reshape(2, 2, 8) * 1
            lazy.sync()
            lazy.metrics(reset=True)
            y = layer(x)
            assert not lazily or lazy.metrics().get("syncs", 0) == 0
            out.append(y.detach().numpy())
        finally:
            lazy.set_lazy(was)
    np.testing.assert_array_equal(out[1], out[0])
