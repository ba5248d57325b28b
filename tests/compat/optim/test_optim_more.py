"""compat's NAdam, RAdam, Adamax, ASGD, Rprop and LBFGS against real PyTorch:
trajectories, state dicts both ways, scalar state, errors in torch's words.

PyTorch's OptimizerInfo samples run in the differential suite; these add more
steps, options together, param groups and torch-written state dicts (the shared
checks come from test_optim)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check
from tests.compat.optim import test_optim as base

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

CASES = {
    "nadam_all": lambda o, p: o.NAdam(
        p, lr=0.05, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01
    ),
    "nadam_decoupled_max": lambda o, p: o.NAdam(
        p, lr=0.05, weight_decay=0.2, decoupled_weight_decay=True, maximize=True
    ),
    # beta2 0.5: rho_t passes 5 at step 3, so both of torch's branches run
    "radam_rectified": lambda o, p: o.RAdam(
        p, lr=0.05, betas=(0.9, 0.5), eps=1e-3, weight_decay=0.1
    ),
    "radam_decoupled": lambda o, p: o.RAdam(
        p, lr=0.05, betas=(0.9, 0.5), weight_decay=0.1, decoupled_weight_decay=True
    ),
    "adamax": lambda o, p: o.Adamax(p, lr=0.05, weight_decay=0.1, maximize=True),
    # t0 2: the average starts at step 3
    "asgd": lambda o, p: o.ASGD(p, lr=0.05, lambd=0.1, alpha=0.5, t0=2),
    "asgd_decay": lambda o, p: o.ASGD(p, lr=0.1, weight_decay=0.1, t0=3, maximize=True),
    "rprop_clamped": lambda o, p: o.Rprop(
        p, lr=0.05, etas=(0.3, 1.7), step_sizes=(0.02, 0.1)
    ),
}


@pytest.fixture
def registered(monkeypatch):
    """test_optim's checks, run on these optimizers."""
    for name, make in CASES.items():
        monkeypatch.setitem(base.OPTIMIZERS, name, make)


@pytest.mark.parametrize("case", CASES)
def test_trajectory_and_state_dict_match_torchs_for_the_same_gradients(case):
    def fn(m):
        ps = base._params(m)
        opt = CASES[case](m.optim, ps)
        return base._steps(m, opt, ps, base.GRADS), opt.state_dict()

    check(fn)


@pytest.mark.parametrize("case", CASES)
def test_state_dict_written_by_torch_continues_identically(case, registered):
    base.test_state_dict_written_by_torch_continues_identically_in_compat(case)


@pytest.mark.parametrize("case", CASES)
def test_scalar_state_updates_from_scalars_and_hyperparameters_alone(case, registered):
    base.test_scalar_state_updates_from_scalars_and_hyperparameters_alone(case)


@pytest.mark.parametrize("case", ["nadam_all", "asgd"])
def test_params_that_join_late_or_are_scalars_keep_their_own_state(case, registered):
    base.test_params_that_join_late_or_are_scalars_keep_their_own_step_counts(
        case, True
    )


@pytest.mark.parametrize("case", ["nadam_all", "asgd"])
def test_states_made_on_the_host_are_the_compiled_inits(case, registered):
    base.test_states_made_on_the_host_are_the_compiled_inits(case)


def test_lr_read_at_the_first_step_and_changed_later_as_torch():
    # ASGD's eta and Rprop's step sizes start from the group's lr at the first
    # step (not the constructor's); a later change moves ASGD's eta schedule
    def fn(m):
        out = []
        for make in (CASES["asgd"], CASES["rprop_clamped"]):
            ps = base._params(m)
            opt = make(m.optim, ps)
            opt.param_groups[0]["lr"] = 0.2
            base._steps(m, opt, ps, base.GRADS[:2])
            opt.param_groups[0]["lr"] = 0.01
            out += base._steps(m, opt, ps, base.GRADS[2:4])
            out.append(opt.state_dict())
        return out

    check(fn)


def test_param_groups_keep_their_own_options():
    def fn(m):
        ps = base._params(m)
        opt = m.optim.NAdam(
            [{"params": [ps[0]], "momentum_decay": 0.02}, {"params": [ps[1]]}],
            lr=0.05,
            weight_decay=0.1,
        )
        opt.param_groups[1]["betas"] = (0.5, 0.9)  # as OneCycleLR sets them
        return base._steps(m, opt, ps, base.GRADS[:3]), opt.state_dict()

    check(fn)


ERRORS = {
    "nadam_momentum_decay": lambda m, p: m.optim.NAdam(p, momentum_decay=-0.2),
    "nadam_beta": lambda m, p: m.optim.NAdam(p, betas=(1.0, 0.9)),
    "radam_eps": lambda m, p: m.optim.RAdam(p, eps=-1.0),
    "radam_decay": lambda m, p: m.optim.RAdam(p, weight_decay=-1),
    "adamax_beta": lambda m, p: m.optim.Adamax(p, betas=(0.9, 1.0)),
    "adamax_lr": lambda m, p: m.optim.Adamax(p, lr=-0.1),
    "asgd_decay": lambda m, p: m.optim.ASGD(p, weight_decay=-0.5),
    "rprop_etas": lambda m, p: m.optim.Rprop(p, etas=(1.0, 0.5)),
    "rprop_etas_low": lambda m, p: m.optim.Rprop(p, etas=(0.0, 1.5)),
    "lr_tensor": lambda m, p: m.optim.NAdam(p, lr=m.tensor([0.1, 0.1])),
}


@pytest.mark.parametrize("case", ERRORS)
def test_bad_arguments_raise_torchs_errors(case):
    check(lambda m: ERRORS[case](m, base._params(m)))


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop"])
def test_differentiable_is_refused_by_name(name):
    with pytest.raises(NotImplementedError, match=f"{name}: differentiable=True"):
        getattr(ct.optim, name)(base._params(ct), differentiable=True)


def test_repr_and_defaults_read_as_torchs():
    def fn(m):
        ps = base._params(m)
        return [
            repr(getattr(m.optim, name)(ps))
            for name in ("NAdam", "RAdam", "Adamax", "ASGD", "Rprop")
        ]

    check(fn)


# -- LBFGS: step(closure) -----------------------------------------------------------
# float64: its 20 iterations a step amplify float32 rounding (XLA's against ATen's)
# into visibly different paths; in float64 every iterate and buffer agrees.

RNG = np.random.default_rng(3)
X, Y, W = (RNG.standard_normal(s) for s in [(8, 3), (8, 2), (2, 3)])


def _lbfgs_run(m, steps=3, **kwargs):
    w = m.nn.Parameter(m.tensor(W))
    b = m.nn.Parameter(m.zeros(2, dtype=m.float64))
    opt = m.optim.LBFGS([w, b], **kwargs)
    x, y = m.tensor(X), m.tensor(Y)

    def closure():
        opt.zero_grad()
        loss = ((m.tanh(x @ w.T + b) - y) ** 2).mean() + (w**4).sum() * 0.01
        loss.backward()
        return loss

    losses = [opt.step(closure) for _ in range(steps)]
    return losses, w, b, opt


LBFGS_CASES = {  # (the defaults: PyTorch's samples, below)
    "short_history": {"history_size": 2, "max_iter": 7, "lr": 0.5},
    "wolfe_tolerances": {
        "line_search_fn": "strong_wolfe",
        "history_size": 3,
        "tolerance_change": 1e-4,
        "tolerance_grad": 1e-3,
        "max_eval": 9,
    },
}


@pytest.mark.parametrize("case", LBFGS_CASES)
def test_lbfgs_iterates_and_state_dict_match_torchs(case):
    def fn(m):
        *out, opt = _lbfgs_run(m, **LBFGS_CASES[case])
        return out, opt.state_dict()

    check(fn)


def test_lbfgs_runs_pytorchs_optimizerinfo_samples_with_a_closure():
    # the differential suite steps without a closure, which torch's LBFGS refuses
    from torch.testing._internal.common_optimizers import optim_db

    info = next(o for o in optim_db if o.optim_cls is pt.optim.LBFGS)
    for sample in info.optim_inputs_func(device="cpu", dtype=pt.float64):

        def fn(m, kwargs=sample.kwargs):
            if m is ct and "lr" in kwargs and isinstance(kwargs["lr"], pt.Tensor):
                kwargs = {**kwargs, "lr": ct.tensor(kwargs["lr"].item())}
            return _lbfgs_run(m, steps=2, **kwargs)[:3]

        check(fn)


def test_lbfgs_state_dict_written_by_torch_continues_identically():
    *_, topt = _lbfgs_run(pt, steps=2, history_size=3)
    saved = topt.state_dict()

    def convert(v):
        if isinstance(v, pt.Tensor):
            return ct.tensor(v.numpy())
        return [convert(x) for x in v] if isinstance(v, list) else v

    cw, cb = (ct.nn.Parameter(ct.tensor(p.detach().numpy())) for p in topt._params)
    copt = ct.optim.LBFGS([cw, cb], history_size=3)
    copt.load_state_dict(
        {
            "state": {
                k: {n: convert(v) for n, v in s.items()}
                for k, s in saved["state"].items()
            },
            "param_groups": saved["param_groups"],
        }
    )
    for m, opt in ((pt, topt), (ct, copt)):
        w, b = opt._params
        x, y = m.tensor(X), m.tensor(Y)

        def closure(opt=opt, w=w, b=b, x=x, y=y, m=m):
            opt.zero_grad()
            loss = ((m.tanh(x @ w.T + b) - y) ** 2).mean() + (w**4).sum() * 0.01
            loss.backward()
            return loss

        opt.step(closure)
    for t, c in zip(topt._params, copt._params, strict=True):
        np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=1e-10)
    assert (
        copt.state_dict()["state"][0]["n_iter"]
        == topt.state_dict()["state"][0]["n_iter"]
    )


def test_lbfgs_returns_at_once_where_the_gradient_is_already_small():
    def fn(m):
        losses, w, b, opt = _lbfgs_run(m, steps=2, tolerance_grad=10.0)
        return losses, w, b, opt.state_dict()

    check(fn)


LBFGS_ERRORS = {
    "groups": lambda m, p: m.optim.LBFGS([{"params": [p[0]]}, {"params": [p[1]]}]),
    "lr": lambda m, p: m.optim.LBFGS(p, lr=-1.0),
    "no_closure": lambda m, p: m.optim.LBFGS(p).step(),
    "line_search": lambda m, p: _lbfgs_run(m, line_search_fn="backtracking"),
}


@pytest.mark.parametrize("case", LBFGS_ERRORS)
def test_lbfgs_bad_arguments_raise_torchs_errors(case):
    check(lambda m: LBFGS_ERRORS[case](m, base._params(m)))


def test_swa_utils_imports_and_refuses_each_name_when_used():
    """A script's ``from torch.optim.swa_utils import AveragedModel, ...`` ports;
    the first use stops it with the reason, not an unknown module."""
    from jaxblitz.compat.optim.swa_utils import SWALR, AveragedModel, update_bn

    model = ct.nn.Linear(2, 1)
    for use in (
        lambda: AveragedModel(model),
        lambda: SWALR(ct.optim.SGD(model.parameters(), lr=0.1), swa_lr=0.05),
        lambda: update_bn([], model),
        lambda: ct.optim.swa_utils.get_ema_multi_avg_fn(0.999),
    ):
        with pytest.raises(NotImplementedError, match="torch.optim.swa_utils.*not"):
            use()
