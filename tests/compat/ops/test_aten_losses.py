"""compat's losses under their ``torch.*`` names (ATen's int reduction:
torch.kl_div, binary_cross_entropy_with_logits, ...) against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
Y = RNG.standard_normal((2, 3, 4)).astype(np.float32)
P = RNG.random((2, 3, 4)).astype(np.float32)
S = np.sign(RNG.standard_normal((2, 3, 4))).astype(np.float32)
PW = RNG.random(4).astype(np.float32)
LOGP = np.log(RNG.dirichlet(np.ones(4), size=(5, 2))).astype(np.float32)


def _run(T, call, arrays, constants):
    xs = [T.tensor(a.tolist(), requires_grad=True) for a in arrays]
    ks = [T.tensor(a.tolist()) for a in constants]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the ATen forms warn about nothing
        out = call(T, *xs, *ks)
    out.sum().backward()
    return out, [x.grad for x in xs]


CASES = {
    "bce_logits_default_none": (
        lambda T, x, p: T.binary_cross_entropy_with_logits(x, p),
        1,
    ),
    "bce_logits_mean": (
        lambda T, x, p, w: T.binary_cross_entropy_with_logits(x, p, None, w, 1),
        1,
    ),
    "bce_logits_sum": (
        lambda T, x, p, w: T.binary_cross_entropy_with_logits(x, p, w, w, reduction=2),
        1,
    ),
    "bce_logits_other_int_is_none": (
        lambda T, x, p: T.binary_cross_entropy_with_logits(x, p, None, None, 3),
        1,
    ),
    "kl_div": (lambda T, x, y: T.kl_div(x, y, 1, log_target=True), 2),
    "kl_div_default_none": (lambda T, x, y: T.kl_div(x, y.exp()), 2),
    "cosine_embedding": (
        lambda T, x, y, s: T.cosine_embedding_loss(x[0], y[0], s[0, 0, :3], 0.2, 2),
        2,
    ),
    "hinge_embedding": (lambda T, x, s: T.hinge_embedding_loss(x, s, 0.5, 1), 1),
    "margin_ranking_broadcast": (
        lambda T, x, y, s: T.margin_ranking_loss(x, y[0], s, 0.1, 2),
        2,
    ),
    "poisson_nll": (lambda T, x, p: T.poisson_nll_loss(x, p, True, True, 1e-8, 1), 1),
    "triplet_margin": (
        lambda T, x, y, p: T.triplet_margin_loss(
            x[0], y[0], p[0], 0.5, 1.0, 1e-6, True
        ),
        2,
    ),
}
CONSTANTS = {
    "bce_logits_default_none": (P,),
    "bce_logits_mean": (P, PW),
    "bce_logits_sum": (P, PW),
    "bce_logits_other_int_is_none": (P,),
    "kl_div": (),
    "kl_div_default_none": (),
    "cosine_embedding": (S,),
    "hinge_embedding": (S,),
    "margin_ranking_broadcast": (S,),
    "poisson_nll": (P,),
    "triplet_margin": (P,),
}


@pytest.mark.parametrize("case", list(CASES))
def test_aten_loss_matches_torch(case):
    call, n = CASES[case]
    arrays = [X, Y][:n]
    theirs, their_grads = _run(torch, call, arrays, CONSTANTS[case])
    ours, our_grads = _run(c, call, arrays, CONSTANTS[case])
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.tolist(), theirs.tolist(), rtol=1e-4, atol=1e-5)
    for a, b in zip(their_grads, our_grads, strict=True):
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)


def test_ctc_loss_takes_lists_or_tensors_of_lengths():
    reduction = 1
    results = []
    for T in (torch, c):
        lp = T.tensor(LOGP.tolist(), requires_grad=True)
        targets = T.tensor([[1, 2], [1, 1]])
        out = T.ctc_loss(lp, targets, T.tensor([5, 4]), T.tensor([2, 1]), 0, reduction)
        out = out + T.ctc_loss(lp, targets, [5, 3], (2, 1), 0, reduction)
        out.sum().backward()
        results.append((out.tolist(), lp.grad.tolist()))
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.binary_cross_entropy_with_logits(x, x, reduction="sum"),
        lambda T, x: T.binary_cross_entropy_with_logits(x, x[0]),
        lambda T, x: T.binary_cross_entropy_with_logits(x[0, :2], x),
        lambda T, x: T.kl_div(x, x, 2, True),
        lambda T, x: T.poisson_nll_loss(x, x),
        lambda T, x: T.triplet_margin_loss(x[0], x[0, 0], x[0]),
        lambda T, x: T.cosine_embedding_loss(x[0], x[0], x[0, 0, :2]),
        lambda T, x: T.ctc_loss(x, T.tensor([[1, 2]]), T.tensor([2, 2]), [1, 1]),
    ],
)
def test_aten_loss_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(X.tolist()))
    with pytest.raises(type(theirs.value)):
        call(c, c.tensor(X.tolist()))


def test_bce_of_an_input_broadcast_to_its_target_is_refused():
    with pytest.raises(NotImplementedError, match="broadcast"):
        c.binary_cross_entropy_with_logits(c.zeros(4), c.zeros(3, 4))
