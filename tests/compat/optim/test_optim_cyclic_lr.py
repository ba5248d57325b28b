"""compat ``CyclicLR`` against real PyTorch, float for float: the lr and momentum
(SGD's ``momentum``, Adam's ``betas[0]``) over a few hundred batches in each
mode, per-group bounds, ``state_dict`` and resuming, and torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

STEPS = 300

CASES = {
    "triangular": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=20),
    "triangular2_uneven": lambda L, o: L.CyclicLR(
        o, 0.001, 0.1, step_size_up=15, step_size_down=25, mode="triangular2"
    ),
    "exp_range": lambda L, o: L.CyclicLR(
        o, 0.01, 0.2, step_size_up=10, mode="exp_range", gamma=0.995
    ),
    "per_group": lambda L, o: L.CyclicLR(
        o,
        [0.01, 0.002],
        [0.1, 0.05],
        step_size_up=7,
        base_momentum=[0.85, 0.7],
        max_momentum=(0.95, 0.9),
    ),
    "scale_fn_cycle": lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=12, scale_fn=lambda x: 1 / x
    ),
    "scale_fn_iterations": lambda L, o: L.CyclicLR(
        o,
        0.01,
        0.1,
        step_size_up=9,
        step_size_down=3,
        mode="no such mode",
        scale_fn=lambda x: 0.99**x,
        scale_mode="iterations",
    ),
    "no_momentum": lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=5, cycle_momentum=False
    ),
}


def _optimizer(m, kind):
    ps = [m.nn.Parameter(m.ones(2)), m.nn.Parameter(m.ones(3))]
    groups = [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}]
    if kind == "adam":
        return m.optim.Adam(groups, lr=0.1)
    return m.optim.SGD(groups, lr=0.1, momentum=0.9)


def _groups(opt) -> list[dict]:
    return [
        {k: v for k, v in g.items() if k not in ("params", "beta1", "beta2")}
        for g in opt.param_groups
    ]


def _sequence(m, make, kind):
    opt = _optimizer(m, kind)
    sched = make(m.optim.lr_scheduler, opt)
    seen = [(sched.get_last_lr(), _groups(opt))]
    for _ in range(STEPS):
        opt.step()
        sched.step()
        moments = [g.get("momentum", g.get("betas")) for g in opt.param_groups]
        seen.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups], moments))
    state = sched.state_dict()
    return seen, sched.last_epoch, state, _groups(opt)


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("case", CASES)
def test_cyclic_lr_gives_torchs_lr_and_momentum_sequence(case, kind):
    check(lambda m: _sequence(m, CASES[case], kind))


@pytest.mark.parametrize("case", ["triangular", "triangular2_uneven", "exp_range"])
def test_cyclic_lr_values_are_torchs_float_for_float(case):
    ours, theirs = _sequence(ct, CASES[case], "sgd"), _sequence(pt, CASES[case], "sgd")
    assert ours[0] == theirs[0]  # plain Python floats, compared exactly
    assert ours[1] == theirs[1] == STEPS


def test_triangular_climbs_and_falls_between_the_bounds():
    opt = _optimizer(ct, "sgd")
    sched = ct.optim.lr_scheduler.CyclicLR(opt, 0.0, 1.0, step_size_up=4)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(8):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [0.0, 0.25, 0.5, 0.75, 1.0, 0.75, 0.5, 0.25, 0.0]
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.9)


class _Decay:
    """A callable object: CyclicLR's state_dict saves its ``__dict__``."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, x: float) -> float:
        return self.rate**x


def test_state_dict_round_trip_resumes_the_cycle_as_torch():
    def fn(m):
        L = m.optim.lr_scheduler
        opt = _optimizer(m, "adam")
        sched = L.CyclicLR(opt, 0.01, 0.1, step_size_up=6, scale_fn=_Decay(0.8))
        for _ in range(17):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        kept = dict(saved)
        other = _optimizer(m, "adam")
        other.load_state_dict(opt.state_dict())
        resumed = L.CyclicLR(
            other, 0.5, 0.9, step_size_up=99, scale_fn=_Decay(0.3), last_epoch=16
        )
        resumed.load_state_dict(saved)
        out = []
        for _ in range(20):
            other.step()
            resumed.step()
            out.append((resumed.get_last_lr(), other.param_groups[0]["betas"]))
        return kept, resumed.scale_fn.rate, out

    check(fn)


def test_a_lambda_scale_fn_is_not_saved_as_torchs_is_not():
    def fn(m):
        opt = _optimizer(m, "sgd")
        sched = m.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, scale_fn=lambda x: 1.0)
        state = sched.state_dict()
        return sorted(state), state["_scale_fn_custom"]

    check(fn)


def test_sgd_under_cyclic_lr_trains_as_torch():
    rng = np.random.default_rng(3)
    grads = rng.standard_normal((40, 4)).astype(np.float32)

    def fn(m):
        w = m.nn.Parameter(m.ones(4))
        opt = m.optim.SGD([w], lr=0.1, momentum=0.9)
        sched = m.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=5)
        for g in grads:
            w.grad = m.tensor(g)
            opt.step()
            sched.step()
        return w, sched.get_last_lr(), opt.param_groups[0]["momentum"]

    check(fn)


ERRORS = {
    "mode": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, mode="sine"),
    "no_momentum": lambda m, o: m.optim.lr_scheduler.CyclicLR(
        m.optim.Adagrad([m.nn.Parameter(m.ones(1))]), 0.01, 0.1
    ),
    "max_lr_list": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, [0.1]),
    "base_momentum_list": lambda m, o: m.optim.lr_scheduler.CyclicLR(
        o, 0.01, 0.1, base_momentum=[0.8, 0.8, 0.8]
    ),
    "not_an_optimizer": lambda m, o: m.optim.lr_scheduler.CyclicLR(object(), 0.1, 1),
}


@pytest.mark.parametrize("case", ERRORS)
def test_bad_arguments_raise_torchs_errors(case):
    check(lambda m: ERRORS[case](m, _optimizer(m, "sgd")))


def test_adagrad_takes_cyclic_lr_without_momentum_cycling():
    def fn(m):
        opt = m.optim.Adagrad([m.nn.Parameter(m.ones(1))], lr=0.1)
        sched = m.optim.lr_scheduler.CyclicLR(
            opt, 0.01, 0.1, step_size_up=3, cycle_momentum=False
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # stepped in order: no warning
            for _ in range(7):
                opt.step()
                sched.step()
        return sched.get_last_lr(), sorted(opt.param_groups[0])

    check(fn)
