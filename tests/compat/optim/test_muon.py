"""compat's ``torch.optim.Muon`` against real PyTorch: trajectories step by step,
the Newton-Schulz iteration, state dicts both ways, errors, repr, and a lazy
step recorded without a sync.

PyTorch's OptimizerInfo samples run in the differential suite; these add more
steps, rectangular and tall matrices, options together and torch-written state
dicts."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check
from tests.compat.optim import test_optim as base

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(11)
SHAPES = [(4, 3), (3, 5), (6, 6)]  # tall, wide, square
START = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[RNG.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(5)]

MUON = {
    "defaults": lambda o, p: o.Muon(p),
    "plain_momentum_match_rms": lambda o, p: o.Muon(
        p, lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw"
    ),
    "original_no_decay": lambda o, p: o.Muon(
        p, lr=0.05, weight_decay=0.0, momentum=0.8, adjust_lr_fn="original"
    ),
    "coefficients_steps_eps": lambda o, p: o.Muon(
        p, lr=0.01, ns_coefficients=(3.4, -4.7, 2.0), ns_steps=7, eps=1e-3
    ),
    "no_momentum": lambda o, p: o.Muon(p, lr=0.01, momentum=0.0, weight_decay=0.3),
}


def _params(m):
    return [m.nn.Parameter(m.tensor(a)) for a in START]


@pytest.mark.parametrize("case", MUON)
def test_muon_trajectory_and_state_dict_match_torchs(case):
    def fn(m):
        ps = _params(m)
        opt = MUON[case](m.optim, ps)
        return base._steps(m, opt, ps, GRADS), opt.state_dict()

    check(fn)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_muon_steps_stay_within_a_rounding_of_torchs(dtype):
    # torch's lerp and add kernels fuse a multiply-add; the bfloat16
    # orthogonalisation itself is the same: the parameters differ by an ulp or so
    def fn(m):
        ps = [m.nn.Parameter(m.tensor(a.astype(dtype))) for a in START]
        opt = m.optim.Muon(ps, lr=0.02)
        return [[p.numpy() for p in step] for step in base._steps(m, opt, ps, GRADS)]

    for theirs, ours in zip(fn(pt), fn(ct), strict=True):
        for t, c in zip(theirs, ours, strict=True):
            assert c.dtype == t.dtype
            np.testing.assert_allclose(c, t, rtol=0, atol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (16, 16), (2, 9)])
def test_newton_schulz_equals_torchs_in_bfloat16(shape):
    from torch.optim._muon import _zeropower_via_newtonschulz

    from jaxblitz.compat.optim.muon import zeropower_via_newtonschulz

    g = np.random.default_rng(shape[0] * 31 + shape[1]).standard_normal(shape)
    coefficients = (3.4445, -4.7750, 2.0315)
    theirs = _zeropower_via_newtonschulz(pt.tensor(g), coefficients, 5, 1e-7)
    ours = zeropower_via_newtonschulz(np.asarray(g), coefficients, 5, 1e-7)
    assert str(ours.dtype) == "bfloat16" and ours.shape == shape
    np.testing.assert_array_equal(np.asarray(ours, np.float32), theirs.float().numpy())


def test_muon_param_groups_and_a_changed_lr_follow_torch():
    def fn(m):
        ps = _params(m)
        opt = m.optim.Muon(
            [{"params": ps[:1], "adjust_lr_fn": "match_rms_adamw"}, {"params": ps[1:]}],
            lr=0.03,
        )
        seen = base._steps(m, opt, ps, GRADS[:2])
        opt.param_groups[1]["lr"] = 0.1
        opt.param_groups[0]["nesterov"] = False
        return seen + base._steps(m, opt, ps, GRADS[2:]), opt.state_dict()

    check(fn)


def test_muon_state_dict_written_by_torch_continues_identically():
    tps = _params(pt)
    topt = MUON["plain_momentum_match_rms"](pt.optim, tps)
    base._steps(pt, topt, tps, GRADS[:2])
    saved = topt.state_dict()
    cps = [ct.nn.Parameter(ct.tensor(p.detach().numpy())) for p in tps]
    copt = MUON["plain_momentum_match_rms"](ct.optim, cps)
    copt.load_state_dict(
        {
            "state": {
                k: {n: ct.tensor(v.numpy()) for n, v in s.items()}
                for k, s in saved["state"].items()
            },
            "param_groups": saved["param_groups"],
        }
    )
    theirs = base._steps(pt, topt, tps, GRADS[2:])
    ours = base._steps(ct, copt, cps, GRADS[2:])
    for t_step, c_step in zip(theirs, ours, strict=True):
        for t, c in zip(t_step, c_step, strict=True):
            np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_muon_keeps_only_a_momentum_buffer_as_torch():
    ps = _params(ct)
    opt = ct.optim.Muon(ps)
    assert opt.state_dict()["state"] == {}
    base._steps(ct, opt, ps, GRADS[:1])
    state = opt.state_dict()["state"]
    assert sorted(state) == [0, 1, 2]
    assert [list(s) for s in state.values()] == [["momentum_buffer"]] * 3
    # torch: buf.lerp_(grad, 1 - momentum) from zeros
    np.testing.assert_allclose(
        state[1]["momentum_buffer"].numpy(), 0.05 * GRADS[0][1], rtol=1e-6
    )


MUON_ERRORS = {
    "lr": lambda m, p: m.optim.Muon(p, lr=-0.1),
    "momentum": lambda m, p: m.optim.Muon(p, momentum=-0.5),
    "weight_decay": lambda m, p: m.optim.Muon(p, weight_decay=-1.0),
    "lr_tensor": lambda m, p: m.optim.Muon(p, lr=m.tensor([0.1, 0.1])),
    "adjust_lr_fn": lambda m, p: m.optim.Muon(p, adjust_lr_fn="arbitrary"),
    "vector": lambda m, p: m.optim.Muon([*p, m.nn.Parameter(m.zeros(3))]),
    "3d": lambda m, p: m.optim.Muon([m.nn.Parameter(m.zeros(2, 3, 4))]),
    "scalar": lambda m, p: m.optim.Muon([m.nn.Parameter(m.tensor(1.0))]),
}


@pytest.mark.parametrize("case", MUON_ERRORS)
def test_muon_bad_arguments_raise_torchs_errors(case):
    check(lambda m: MUON_ERRORS[case](m, _params(m)))


STEP_ERRORS = {
    "ns_steps": dict(ns_steps=100),
    "coefficients": dict(ns_coefficients=(3.4, -4.7)),
}


@pytest.mark.parametrize("case", STEP_ERRORS)
def test_muon_bad_iteration_settings_raise_torchs_errors_at_the_step(case):
    def fn(m):
        ps = _params(m)
        opt = m.optim.Muon(ps, **STEP_ERRORS[case])  # accepted here, as torch
        return base._steps(m, opt, ps, GRADS[:1])

    check(fn)


def test_muon_vector_added_to_a_group_later_fails_at_the_step_as_torch():
    def fn(m):
        opt = m.optim.Muon(_params(m))
        v = m.nn.Parameter(m.zeros(3))
        opt.add_param_group({"params": [v]})  # torch checks only the constructor's
        v.grad = m.ones(3)
        return opt.step()

    check(fn)


def test_muon_defaults_and_repr_read_as_torchs():
    theirs, ours = pt.optim.Muon(_params(pt)), ct.optim.Muon(_params(ct))
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


def _count_syncs(monkeypatch, lazy) -> list:
    """The graphs this thread runs from now on, by reason (compat's warm-up
    thread records and runs its own: lazy.metrics counts those too)."""
    here, syncs = threading.get_ident(), []
    sync = lazy._sync

    def counted(graph, reason, *args, **kwargs):
        if threading.get_ident() == here:
            syncs.append(reason)
        return sync(graph, reason, *args, **kwargs)

    monkeypatch.setattr(lazy, "_sync", counted)
    return syncs


def test_a_lazy_muon_step_is_recorded_without_a_sync_and_equals_eager(
    lazily, monkeypatch
):
    from jaxblitz.compat import lazy

    monkeypatch.setattr(lazy, "STEP_ENDS", 100)  # no cut at a step's end
    syncs = _count_syncs(monkeypatch, lazy)

    def run():
        ps = _params(ct)
        opt = ct.optim.Muon(ps, lr=0.02)
        # gradients computed (pending, lazily): GRADS[0]
        sum(
            ((p * ct.tensor(g)).sum() for p, g in zip(ps, GRADS[0], strict=True))
        ).backward()
        opt.step()
        pending = [lazy.pending(p._s.pending) for p in ps]
        return pending, [p.detach().numpy() for p in ps]

    pending, lazy_values = run()
    assert all(pending) and syncs == ["a value was read"]  # by numpy() alone
    lazy.set_lazy(False)
    try:
        _, eager_values = run()
    finally:
        lazy.set_lazy(True)
    for a, b in zip(lazy_values, eager_values, strict=True):
        np.testing.assert_array_equal(a, b)
