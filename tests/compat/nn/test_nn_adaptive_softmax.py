"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch's with the same weights: its
outputs and loss, their gradients, log_prob and predict, and its errors."""

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def _pair(in_features=8, n_classes=10, cutoffs=(3, 6), **kwargs):
    pt.manual_seed(0)
    theirs = pt.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, **kwargs)
    ours = ct.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(
        {k: ct.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    )
    return ours, theirs


def _close(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(
        a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("head_bias", [False, True])
def test_outputs_loss_and_gradients_are_torchs(head_bias):
    ours, theirs = _pair(head_bias=head_bias)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 8)).astype(np.float32)
    target = np.array([0, 9, 4, 2, 7, 5, 8])
    xo = ct.tensor(x, requires_grad=True)
    xt = pt.tensor(x, requires_grad=True)
    out, loss = ours(xo, ct.tensor(target))
    out_t, loss_t = theirs(xt, pt.tensor(target))
    _close(out, out_t)
    _close(loss, loss_t)
    loss.backward()
    loss_t.backward()
    _close(xo.grad, xt.grad)
    for (name, p), (_, q) in zip(  # the second cluster's 8 // 16 = 0 rows too
        ours.named_parameters(), theirs.named_parameters(), strict=True
    ):
        assert name
        _close(p.grad, q.grad)


def test_an_unbatched_input_gives_a_scalar_output():
    ours, theirs = _pair()
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    out, loss = ours(ct.tensor(x), ct.tensor(7))
    out_t, loss_t = theirs(pt.tensor(x), pt.tensor(7))
    assert out.shape == out_t.shape == ()
    _close(out, out_t)
    _close(loss, loss_t)


def test_log_prob_and_predict_are_torchs():
    ours, theirs = _pair(n_classes=12, cutoffs=(2, 5, 9), div_value=2.0)
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((16, 8)) * 3).astype(np.float32)
    _close(ours.log_prob(ct.tensor(x)), theirs.log_prob(pt.tensor(x)))
    assert ours.predict(ct.tensor(x)).tolist() == theirs.predict(pt.tensor(x)).tolist()
    probs = ours.log_prob(ct.tensor(x)).exp().sum(1)
    np.testing.assert_allclose(probs.tolist(), np.ones(16), rtol=1e-5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, lib: m(lib.zeros(2, 8), lib.tensor([0, 10])), "Target values"),
        (lambda m, lib: m(lib.zeros(3, 8), lib.tensor([0, 1])), "same size"),
        (lambda m, lib: m(lib.zeros(2, 8), lib.zeros(2, 1).long()), "multi-target"),
        (lambda m, lib: m(lib.zeros(2, 8), lib.tensor(1)), "0D target tensor"),
        (lambda m, lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]), "sorted"),
        (lambda m, lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []), "length larger"),
    ],
)
def test_bad_input_raises_torchs_errors(call, message):
    ours, theirs = _pair()
    errors = []
    for module, lib in ((ours, ct), (theirs, pt)):
        with pytest.raises((RuntimeError, ValueError), match=message) as e:
            call(module, lib)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]
