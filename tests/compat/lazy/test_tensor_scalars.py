"""torch's Scalar arguments given as 0-d tensors (``value=`` of addcmul, ``alpha=``
of add, ``beta=`` of addmm, a clamp's bounds, a lerp weight, a pow exponent, an
activation's threshold): the same values as torch's in both modes, with the
tensor pending lazily (a step size computed in the step); torch's TypeError for
a tensor its parser refuses."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy

pt = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X, A, B = (RNG.standard_normal(4).astype(np.float32) for _ in range(3))
M = RNG.standard_normal((2, 3, 3)).astype(np.float32)


def _cases(t):
    """(name, op) pairs on library ``t``, each taking a 0-d tensor ``s`` (about
    0.5) where torch takes a number or a tensor."""
    f = t.nn.functional
    x, a, b = t.tensor(X), t.tensor(A), t.tensor(B)
    m, v = t.tensor(M[0]), t.tensor(M[1, 0])
    return [
        ("addcmul", lambda s: t.addcmul(x, a, b, value=s)),
        ("addcmul_", lambda s: x.clone().addcmul_(a, b, value=s)),
        ("addcdiv", lambda s: t.addcdiv(x, a, b, value=s)),
        ("addcdiv_", lambda s: x.clone().addcdiv_(a, b, value=s)),
        ("add alpha", lambda s: t.add(x, a, alpha=s)),
        ("add_ alpha", lambda s: x.clone().add_(a, alpha=s)),
        ("sub alpha", lambda s: t.sub(x, a, alpha=s)),
        ("lerp", lambda s: t.lerp(x, a, s)),
        ("lerp_", lambda s: x.clone().lerp_(a, s)),
        ("clamp", lambda s: t.clamp(x, min=-s, max=s)),
        ("clamp_", lambda s: x.clone().clamp_(min=s)),
        ("clip", lambda s: t.clip(x, max=s)),
        ("pow exponent", lambda s: t.pow(x.abs(), s)),
        ("pow base", lambda s: t.pow(s, x)),
        ("pow_", lambda s: x.abs().pow_(s)),
        ("float_power", lambda s: t.float_power(x.abs(), s)),
        ("mul", lambda s: t.mul(x, s)),
        ("masked_fill", lambda s: x.masked_fill(x > 0, s)),
        ("fill_", lambda s: x.clone().fill_(s)),
        ("full", lambda s: t.full((3,), s)),
        ("where", lambda s: t.where(x > 0, x, s)),
        ("addmm", lambda s: t.addmm(m, m, m, beta=s, alpha=s)),
        ("addmv", lambda s: t.addmv(v, m, v, beta=s, alpha=s)),
        ("addr", lambda s: t.addr(m, v, v, beta=s, alpha=s)),
        ("baddbmm", lambda s: t.baddbmm(t.tensor(M), t.tensor(M), t.tensor(M), beta=s)),
        ("addbmm", lambda s: t.addbmm(m, t.tensor(M), t.tensor(M), alpha=s)),
        ("hardtanh", lambda s: f.hardtanh(x, -s, s)),
        ("threshold", lambda s: f.threshold(x, s, -s)),
    ]


NAMES = [name for name, _ in _cases(torch)]


def _scalar(t):
    return t.tensor([0.25, 0.5]).sum() * 0.8  # computed: pending, lazily


@pytest.mark.parametrize("lazily", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("name", NAMES)
def test_a_tensor_scalar_gives_torchs_values(name, lazily):
    expected = dict(_cases(pt))[name](_scalar(pt))
    was = lazy.is_lazy()
    lazy.set_lazy(lazily)
    try:
        got = dict(_cases(torch))[name](_scalar(torch))
        values = got.numpy()
    finally:
        lazy.set_lazy(was)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_allclose(values, expected.numpy(), rtol=1e-6, atol=1e-6)


def test_addcmul_with_a_pending_value_runs_no_work_early():
    """An optimizer's step size computed in the step stays in the program."""
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        x, a = torch.ones(3), torch.arange(3.0)
        lazy.sync()
        lazy.metrics(reset=True)
        for _ in range(3):
            step = a.sum() * 0.1  # pending
            x.addcmul_(a, a, value=-step)
            x.add_(a, alpha=step)
            x.addcdiv_(a, a + 1, value=step)
        assert lazy.metrics().get("syncs", 0) == 0
        values = x.numpy()
    finally:
        lazy.set_lazy(was)
    xt, at = pt.ones(3), pt.arange(3.0)
    for _ in range(3):
        step = at.sum() * 0.1
        xt.addcmul_(at, at, value=-step)
        xt.add_(at, alpha=step)
        xt.addcdiv_(at, at + 1, value=step)
    np.testing.assert_allclose(values, xt.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "scalar",
    [lambda t: t.tensor([0.5]), lambda t: t.tensor(0.5, requires_grad=True)],
    ids=["one-dimensional", "requires_grad"],
)
@pytest.mark.parametrize(
    "op",
    [
        lambda t, s: t.addcmul(t.ones(2), t.ones(2), t.ones(2), value=s),
        lambda t, s: t.add(t.ones(2), t.ones(2), alpha=s),
        lambda t, s: t.nn.functional.hardtanh(t.ones(2), s, 1.0),
    ],
    ids=["addcmul", "add", "hardtanh"],
)
def test_a_tensor_torchs_parser_refuses_raises_its_type_error(op, scalar):
    with pytest.raises(TypeError) as expected:
        op(pt, scalar(pt))
    with pytest.raises(TypeError) as raised:
        op(torch, scalar(torch))
    assert str(raised.value) == str(expected.value)


def test_a_bool_tensor_alpha_is_read_as_a_bool():
    with pytest.raises(RuntimeError) as expected:
        pt.add(pt.ones(2), pt.ones(2), alpha=pt.tensor(True))
    with pytest.raises(RuntimeError) as raised:
        torch.add(torch.ones(2), torch.ones(2), alpha=torch.tensor(True))
    assert str(raised.value) == str(expected.value)
