"""compat's ``torch.optim.Adafactor`` against real PyTorch: trajectories, state
dicts both ways, errors, repr.

PyTorch's OptimizerInfo samples run in the differential suite; these add more
steps, options together and torch-written state dicts (the shared checks come from
test_optim)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check
from tests.compat.optim import test_optim as base

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

ADAFACTOR = {
    "adafactor_all": lambda o, p: o.Adafactor(
        p, lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.2, weight_decay=0.1
    ),
    "adafactor_max": lambda o, p: o.Adafactor(p, weight_decay=0.2, maximize=True),
}


@pytest.fixture
def registered(monkeypatch):
    for name, make in ADAFACTOR.items():
        monkeypatch.setitem(base.OPTIMIZERS, name, make)


@pytest.mark.parametrize("case", ADAFACTOR)
def test_adafactor_trajectory_and_state_dict_match_torchs(case):
    def fn(m):
        ps = base._params(m)
        opt = ADAFACTOR[case](m.optim, ps)
        return base._steps(m, opt, ps, base.GRADS), opt.state_dict()

    check(fn)


def test_adafactor_factors_the_last_two_dimensions_of_a_3d_parameter():
    rng = np.random.default_rng(3)
    start = rng.standard_normal((2, 3, 4)).astype(np.float32)
    grads = [rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3)]

    def fn(m):
        p = m.nn.Parameter(m.tensor(start))
        opt = m.optim.Adafactor([p], lr=0.1)
        return base._steps(m, opt, [p], [[g] for g in grads]), opt.state_dict()

    check(fn)


def test_adafactor_state_dict_written_by_torch_continues_identically(registered):
    base.test_state_dict_written_by_torch_continues_identically_in_compat(
        "adafactor_all"
    )


def test_adafactor_scalar_state_updates_from_scalars_alone(registered):
    base.test_scalar_state_updates_from_scalars_and_hyperparameters_alone(
        "adafactor_all"
    )


ADAFACTOR_ERRORS = {
    "lr": lambda m, p: m.optim.Adafactor(p, lr=-0.1),
    "beta2_decay": lambda m, p: m.optim.Adafactor(p, beta2_decay=0.5),
    "eps1": lambda m, p: m.optim.Adafactor(p, eps=(-1.0, 1e-3)),
    "eps2": lambda m, p: m.optim.Adafactor(p, eps=(None, -1.0)),
    "d": lambda m, p: m.optim.Adafactor(p, d=0.5),
    "weight_decay": lambda m, p: m.optim.Adafactor(p, weight_decay=-1.0),
    "lr_tensor": lambda m, p: m.optim.Adafactor(p, lr=m.tensor([0.1, 0.1])),
}


@pytest.mark.parametrize("case", ADAFACTOR_ERRORS)
def test_adafactor_bad_arguments_raise_torchs_errors(case):
    check(lambda m: ADAFACTOR_ERRORS[case](m, base._params(m)))


def test_adafactor_repr_reads_as_torchs():
    assert repr(ct.optim.Adafactor(base._params(ct))) == repr(
        pt.optim.Adafactor(base._params(pt))
    )
