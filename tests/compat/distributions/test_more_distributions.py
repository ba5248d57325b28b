"""The rest of ``torch.distributions`` in compat against PyTorch's: Weibull,
Pareto, InverseGamma, Kumaraswamy, GeneralizedPareto, FisherSnedecor,
NegativeBinomial, ContinuousBernoulli, LogisticNormal, LKJCholesky, VonMises,
LowRankMultivariateNormal and Wishart -- values and gradients, KL pairs, draws by
shape, support and moments (compat's stream, not torch's) in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as ct
from jaxblitz.compat import lazy

from .test_distributions import (
    POS,
    SIMPLEX,
    SPD,
    bad_args,
    check_against_torch,
    check_samples,
    close,
    f32,
    kl_matches_torch,
    two,
)

pt = pytest.importorskip("torch")

FACTOR = f32(1.0, 0.5, -0.3, 0.2, 0.1, 0.7).reshape(3, 2)
CORR_L = np.linalg.cholesky(
    np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.0]])
).astype(np.float32)

CASES = {
    "weibull": (
        lambda D, a, b: D.Weibull(a, b),
        dict(a=POS, b=f32(2.0, 1.0, 0.5)),
        f32(0.3, 1.5, 4.0),
        f32(0.1, 0.5, 0.9),
    ),
    "pareto": (
        lambda D, a, b: D.Pareto(a, b),
        dict(a=POS, b=f32(3.0, 1.0, 0.5)),
        f32(0.6, 1.5, 4.0),
        f32(0.1, 0.5, 0.9),
    ),
    "inverse_gamma": (
        lambda D, a, b: D.InverseGamma(a, b),
        dict(a=f32(0.5, 1.5, 3.0), b=f32(2.0, 1.0, 0.5)),
        f32(0.3, 1.5, 4.0),
        None,
    ),
    "kumaraswamy": (
        lambda D, a, b: D.Kumaraswamy(a, b),
        dict(a=f32(0.5, 2.0, 3.0), b=f32(2.0, 1.0, 0.5)),
        f32(0.3, 0.5, 0.9),
        f32(0.1, 0.5, 0.9),
    ),
    "generalized_pareto": (
        lambda D, a, b, c: D.GeneralizedPareto(a, b, c),
        dict(a=f32(0.0, 1.0, -1.0), b=POS, c=f32(0.0, 0.3, -0.2)),
        f32(0.3, 1.5, 0.4),
        f32(0.1, 0.5, 0.9),
    ),
    "fisher_snedecor": (
        lambda D, a, b: D.FisherSnedecor(a, b),
        dict(a=f32(1.0, 3.0, 6.0), b=f32(2.0, 5.0, 9.0)),
        f32(0.3, 1.5, 4.0),
        None,
    ),
    "negative_binomial_probs": (
        lambda D, n, p: D.NegativeBinomial(n, probs=p),
        dict(n=f32(3.0, 1.0, 0.0), p=f32(0.2, 0.5, 0.7)),
        f32(0.0, 2.0, 5.0),
        None,
    ),
    "negative_binomial_logits": (
        lambda D, p: D.NegativeBinomial(4, logits=p),
        dict(p=f32(-1.0, 0.0, 2.0)),
        f32(0.0, 2.0, 5.0),
        None,
    ),
    "continuous_bernoulli_probs": (
        lambda D, p: D.ContinuousBernoulli(probs=p),
        dict(p=f32(0.1, 0.4995, 0.5, 0.9)),
        f32(0.0, 0.3, 0.5, 1.0),
        f32(0.1, 0.5, 0.7, 0.9),
    ),
    "continuous_bernoulli_logits": (
        lambda D, p: D.ContinuousBernoulli(logits=p),
        dict(p=f32(-2.0, 0.0, 0.001, 3.0)),
        f32(0.2, 0.3, 0.5, 0.9),
        f32(0.1, 0.5, 0.7, 0.9),
    ),
    "logistic_normal": (
        lambda D, a, b: D.LogisticNormal(a, b),
        dict(a=f32(0.0, 1.0), b=POS[:2]),
        SIMPLEX,
        None,
    ),
    "lkj_cholesky": (
        lambda D, c: D.LKJCholesky(3, c),
        dict(c=f32(0.5, 1.0, 2.5)),
        CORR_L,
        None,
    ),
    "von_mises": (
        lambda D, a, b: D.VonMises(a, b),
        dict(a=f32(0.0, 1.0, -2.0), b=f32(0.5, 3.0, 10.0)),
        f32(0.3, 1.0, 3.0),
        None,
    ),
    "lowrank_mvn": (
        lambda D, a, w, d: D.LowRankMultivariateNormal(a, w, d),
        dict(a=f32(0.0, 1.0, -1.0, 2.0, 0.5, 0.0).reshape(2, 3), w=FACTOR, d=POS),
        f32(0.3, 1.0, -0.5),
        None,
    ),
    "wishart_covariance": (
        lambda D, df, cov: D.Wishart(df, covariance_matrix=cov),
        dict(df=f32(4.0, 6.5), cov=SPD),
        SPD * 2,
        None,
    ),
    "wishart_scale_tril": (
        lambda D, df, tril: D.Wishart(df, scale_tril=tril),
        dict(df=f32(3.5), tril=np.linalg.cholesky(SPD).astype(np.float32)),
        SPD,
        None,
    ),
    "wishart_precision": (
        lambda D, prec: D.Wishart(5.0, precision_matrix=prec),
        dict(prec=SPD),
        SPD,
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    make, params, value, q = CASES[name]
    ours, _ = check_against_torch(
        lambda lib, **p: make(lib.distributions, **p), params, value, q, rtol=2e-5
    )
    ct.manual_seed(0)
    check_samples(ours)
