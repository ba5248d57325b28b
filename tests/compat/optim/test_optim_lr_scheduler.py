"""compat ``torch.optim.lr_scheduler`` against real PyTorch: the lr (and momentum)
sequence over 30 steps, ``state_dict`` keys and values, a parameter trajectory of
optimizer and scheduler together, and torch's warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

SCHEDULERS = {
    "step": lambda L, o: L.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda L, o: L.MultiStepLR(o, [2, 5, 5, 9], gamma=0.3),
    "exponential": lambda L, o: L.ExponentialLR(o, gamma=0.9),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "lambda": lambda L, o: L.LambdaLR(o, lambda epoch: 1 / (epoch + 1)),
    "lambda_per_group": lambda L, o: L.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1 + e]),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda epoch: 0.95),
    "constant": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    "linear": lambda L, o: L.LinearLR(o, 0.2, 0.9, total_iters=10),
    "polynomial": lambda L, o: L.PolynomialLR(o, total_iters=10, power=2.0),
    "sequential": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=5), L.CosineAnnealingLR(o, 20)], [5]
    ),
    "chained": lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, 0.5, 4), L.ExponentialLR(o, 0.9)]
    ),
    "one_cycle": lambda L, o: L.OneCycleLR(o, [1.0, 0.5], total_steps=30),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=4),
    "warm_restarts_mult": lambda L, o: L.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001
    ),
    "one_cycle_linear_three_phase": lambda L, o: L.OneCycleLR(
        o, 1.0, epochs=3, steps_per_epoch=10, anneal_strategy="linear", three_phase=True
    ),
    "one_cycle_no_momentum": lambda L, o: L.OneCycleLR(
        o, 0.3, total_steps=30, pct_start=0.5, cycle_momentum=False
    ),
}

METRIC = [1.0, 0.9, 0.9, 0.9, 0.95, 0.9, 0.9, 0.8, 0.8, 0.8] * 3
PLATEAUS = {
    "default": lambda L, o: L.ReduceLROnPlateau(o, patience=2),
    "max_abs_cooldown": lambda L, o: L.ReduceLROnPlateau(
        o,
        mode="max",
        factor=0.5,
        patience=1,
        threshold=0.01,
        threshold_mode="abs",
        cooldown=2,
        min_lr=[0.01, 0.02],
    ),
    "min_lr_eps": lambda L, o: L.ReduceLROnPlateau(
        o, patience=0, min_lr=0.02, eps=0.01
    ),
}


def _optimizer(m, kind):
    ps = [m.nn.Parameter(m.ones(2)), m.nn.Parameter(m.ones(3))]
    groups = [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}]
    if kind == "adam":
        return m.optim.Adam(groups, lr=0.1)
    return m.optim.SGD(groups, lr=0.1, momentum=0.9)


def _sequence(m, make, kind, metrics=None):
    opt = _optimizer(m, kind)
    sched = make(m.optim.lr_scheduler, opt)
    seen = []
    for i in range(30):
        opt.step()
        sched.step(*([metrics[i]] if metrics else []))
        moments = [g.get("momentum", g.get("betas")) for g in opt.param_groups]
        seen.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups], moments))
    groups = [
        {k: v for k, v in g.items() if k not in ("params", "beta1", "beta2")}
        for g in opt.param_groups
    ]
    return seen, sched.last_epoch, sched.state_dict(), groups


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("case", SCHEDULERS)
def test_scheduler_gives_torchs_lr_sequence_and_state_dict(case, kind):
    check(lambda m: _sequence(m, SCHEDULERS[case], kind))


@pytest.mark.parametrize("case", PLATEAUS)
def test_reduce_lr_on_plateau_follows_the_metric_as_torch(case):
    check(lambda m: _sequence(m, PLATEAUS[case], "sgd", METRIC))


def test_step_with_an_epoch_uses_torchs_closed_form():
    def fn(m):
        opt = _optimizer(m, "sgd")
        sched = m.optim.lr_scheduler.MultiStepLR(opt, [3, 6], gamma=0.5)
        return [(sched.step(e), sched.get_last_lr())[1] for e in (7, 2, 4)]

    check(fn)


@pytest.mark.parametrize("t_mult", [1, 2, 3])
def test_warm_restarts_step_by_fractions_of_an_epoch_as_torch(t_mult):
    """SGDR's per-batch call ``step(epoch + i / iters)``, then plain steps and a
    jump (``step(26)``), with no warning (torch's own step warns of neither the
    order nor the epoch argument)."""

    def fn(m):
        opt = _optimizer(m, "sgd")
        L = m.optim.lr_scheduler
        sched = L.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=t_mult, eta_min=0.01)
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in range(8):
                for i in range(4):
                    opt.step()
                    sched.step(epoch + i / 4)
                    seen.append(sched.get_last_lr())
            sched.step(26)
            sched.step()
            seen.append((sched.get_last_lr(), sched.T_cur, sched.T_i))
        return seen, sched.state_dict(), [str(w.message) for w in caught]

    check(fn)


def test_mnist_example_adadelta_with_steplr_trains_as_torch():
    """pytorch/examples mnist: Adadelta(lr=1.0) and StepLR(step_size=1, gamma=0.7)
    stepped once per epoch, a few batches per epoch."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 5)).astype(np.float32), rng.integers(0, 3, 8)
    w0 = rng.standard_normal((3, 5)).astype(np.float32)

    def fn(m):
        model = m.nn.Linear(5, 3)
        with m.no_grad():
            model.weight.copy_(m.tensor(w0))
            model.bias.zero_()
        optimizer = m.optim.Adadelta(model.parameters(), lr=1.0)
        scheduler = m.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
        losses = []
        for _epoch in range(3):
            for batch in (slice(0, 4), slice(4, 8)):
                optimizer.zero_grad()
                out = m.nn.functional.log_softmax(model(m.tensor(x[batch])), dim=1)
                loss = m.nn.functional.nll_loss(out, m.tensor(y[batch]))
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            scheduler.step()
        return losses, scheduler.get_last_lr(), model.weight, model.bias

    check(fn)


def test_one_cycle_moves_adamw_beta1_and_the_trajectory_follows():
    rng = np.random.default_rng(1)
    grads = rng.standard_normal((6, 4)).astype(np.float32)

    def fn(m):
        w = m.nn.Parameter(m.ones(4))
        opt = m.optim.AdamW([w], lr=0.01, weight_decay=0.1)
        sched = m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=6)
        seen = []
        for g in grads:
            w.grad = m.tensor(g)
            opt.step()
            sched.step()
            seen.append((w.detach().clone(), opt.param_groups[0]["betas"]))
        return seen

    check(fn)


def test_scheduler_state_dict_round_trip_resumes_the_schedule():
    def fn(m):
        L = m.optim.lr_scheduler
        opt = _optimizer(m, "sgd")
        sched = L.CosineAnnealingLR(opt, T_max=10)
        for _ in range(4):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        other = _optimizer(m, "sgd")
        other.load_state_dict(opt.state_dict())
        resumed = L.CosineAnnealingLR(other, T_max=99, last_epoch=3)
        resumed.load_state_dict(saved)
        out = []
        for _ in range(4):
            other.step()
            resumed.step()
            out.append(resumed.get_last_lr())
        return out, resumed.T_max

    check(fn)


class _Halving:
    """A callable object: LambdaLR saves its ``__dict__``."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, epoch: int) -> float:
        return self.rate**epoch


def test_lambda_lr_saves_callable_objects_but_not_functions():
    def fn(m):
        opt = _optimizer(m, "sgd")
        sched = m.optim.lr_scheduler.LambdaLR(opt, [_Halving(0.5), lambda e: 1.0])
        saved = sched.state_dict()
        fresh = m.optim.lr_scheduler.LambdaLR(opt, [_Halving(0.9), lambda e: 2.0])
        fresh.load_state_dict(saved)
        return saved["lr_lambdas"], fresh.lr_lambdas[0].rate

    check(fn)


def test_initial_lr_is_required_when_resuming_with_last_epoch():
    check(lambda m: m.optim.lr_scheduler.StepLR(_optimizer(m, "sgd"), 2, last_epoch=3))


def _warnings(m, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(m)
    return [str(w.message) for w in caught]


def test_scheduler_step_before_optimizer_step_warns_as_torch():
    def fn(m):
        opt = _optimizer(m, "sgd")
        m.optim.lr_scheduler.StepLR(opt, 1).step()

    assert _warnings(ct, fn) == _warnings(pt, fn)
    assert "before `optimizer.step()`" in _warnings(ct, fn)[0]


def test_scheduler_step_after_optimizer_step_does_not_warn():
    def fn(m):
        opt = _optimizer(m, "sgd")
        sched = m.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step()
        sched.step()

    assert _warnings(ct, fn) == _warnings(pt, fn) == []


ERRORS = {
    "one_cycle_no_steps": lambda L, o: L.OneCycleLR(o, 1.0),
    "one_cycle_pct": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=5, pct_start=1),
    "one_cycle_anneal": lambda L, o: L.OneCycleLR(
        o, 1.0, total_steps=5, anneal_strategy="exp"
    ),
    "one_cycle_max_lr_list": lambda L, o: L.OneCycleLR(o, [1.0], total_steps=5),
    "one_cycle_too_many_steps": lambda L, o: [
        L.OneCycleLR(o, 1.0, total_steps=2).step() for _ in range(3)
    ],
    "plateau_factor": lambda L, o: L.ReduceLROnPlateau(o, factor=1.0),
    "plateau_mode": lambda L, o: L.ReduceLROnPlateau(o, mode="up"),
    "plateau_min_lrs": lambda L, o: L.ReduceLROnPlateau(o, min_lr=[0.1]),
    "constant_factor": lambda L, o: L.ConstantLR(o, factor=2.0),
    "linear_start": lambda L, o: L.LinearLR(o, start_factor=0),
    "lambda_count": lambda L, o: L.LambdaLR(o, [lambda e: 1.0]),
    "sequential_milestones": lambda L, o: L.SequentialLR(
        o, [L.StepLR(o, 2), L.StepLR(o, 3)], [1, 2]
    ),
    "not_an_optimizer": lambda L, o: L.StepLR(object(), 2),
    "restarts_t0": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0),
    "restarts_t0_float": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2.0),
    "restarts_t_mult": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=0),
    "restarts_eta_min": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, eta_min="0"),
    "restarts_negative_epoch": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2).step(
        -1
    ),
}


@pytest.mark.parametrize("case", ERRORS)
def test_bad_arguments_raise_torchs_errors(case):
    check(lambda m: ERRORS[case](m.optim.lr_scheduler, _optimizer(m, "sgd")))
