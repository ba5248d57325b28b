"""What ``optimizer.step()`` keeps of a param group from one step to the next
(its Optax transform and hyperparameters while the group's settings stay the
same objects; the states it stored, updated shared), checked against real
PyTorch where each of those changes between steps, steps already taken."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.compat.nn.test_nn_parity import check

pytest.importorskip("torch")

RNG = np.random.default_rng(11)
SHAPES = [(4, 3), (4,), (2, 3), (3,)]
START = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[RNG.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(9)]


def _params(m):
    return [m.nn.Parameter(m.tensor(a)) for a in START]


def _step(m, opt, ps, grads, skip=()):
    for i, (p, g) in enumerate(zip(ps, grads, strict=True)):
        p.grad = None if i in skip else m.tensor(g)
    opt.step()
    return [p.detach().clone() for p in ps]


def test_settings_changed_between_steps_take_effect_at_the_next():
    def fn(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1, momentum=0.9)
        group = opt.param_groups[0]
        seen = [_step(m, opt, ps, g) for g in GRADS[:3]]
        group["lr"] = 0.05  # a scheduler's
        seen.append(_step(m, opt, ps, GRADS[3]))
        group["lr"] = 0.05  # the same value again
        group["momentum"] = 0.0  # the update's program changes
        seen.append(_step(m, opt, ps, GRADS[4]))
        group.update(momentum=0.5, weight_decay=0.1, nesterov=True)
        seen += [_step(m, opt, ps, g) for g in GRADS[5:7]]
        group["dampening"] = 0.0
        group["maximize"] = True
        seen += [_step(m, opt, ps, g) for g in GRADS[7:]]
        return seen, opt.state_dict()

    check(fn)


def test_a_tensor_lr_changed_in_place_between_steps_takes_effect():
    def fn(m):
        ps = _params(m)
        lr = m.tensor(0.1)
        opt = m.optim.SGD(ps, lr=lr, momentum=0.9)
        seen = [_step(m, opt, ps, g) for g in GRADS[:2]]
        lr.fill_(0.01)
        seen += [_step(m, opt, ps, g) for g in GRADS[2:4]]
        return seen, opt.state_dict()["state"]

    check(fn)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_grad_that_becomes_none_and_comes_back_between_steps(name):
    def fn(m):
        ps = _params(m)
        options = {"momentum": 0.9} if name == "SGD" else {}
        opt = getattr(m.optim, name)(ps, lr=0.1, **options)
        seen = [_step(m, opt, ps, g) for g in GRADS[:2]]
        seen.append(_step(m, opt, ps, GRADS[2], skip={1}))
        seen.append(_step(m, opt, ps, GRADS[3], skip={0, 3}))
        seen += [_step(m, opt, ps, g) for g in GRADS[4:6]]
        return seen, opt.state_dict()

    check(fn)


def test_a_param_that_stops_requiring_grad_still_steps_on_the_grad_it_has():
    def fn(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1, momentum=0.9)
        seen = [_step(m, opt, ps, g) for g in GRADS[:2]]
        ps[2].requires_grad_(False)
        seen += [_step(m, opt, ps, g) for g in GRADS[2:4]]
        ps[2].requires_grad_(True)
        seen += [_step(m, opt, ps, g) for g in GRADS[4:6]]
        return seen, opt.state_dict()

    check(fn)


def test_a_group_added_and_a_state_dict_loaded_between_steps():
    def fn(m):
        ps = _params(m)
        opt = m.optim.Adam(ps[:2], lr=0.05)
        seen = [_step(m, opt, ps[:2], g[:2]) for g in GRADS[:2]]
        opt.add_param_group({"params": ps[2:], "lr": 0.01})
        seen += [_step(m, opt, ps, g) for g in GRADS[2:4]]
        saved = copy.deepcopy(opt.state_dict())  # torch's aliases its state
        seen += [_step(m, opt, ps, g) for g in GRADS[4:6]]
        opt.load_state_dict(saved)  # the states of two steps ago, new groups
        seen += [_step(m, opt, ps, g) for g in GRADS[6:]]
        return seen, opt.state_dict()

    check(fn)


def test_the_states_stored_are_the_ones_the_next_step_reads():
    # a state replaced by hand between steps (not the one step() stored) is the
    # one the next step updates
    def fn(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1, momentum=0.9)
        seen = [_step(m, opt, ps, g) for g in GRADS[:2]]
        other = m.optim.SGD(ps, lr=0.1, momentum=0.9)
        _step(m, other, ps, GRADS[2])
        opt.load_state_dict(other.state_dict())
        seen += [_step(m, opt, ps, g) for g in GRADS[3:5]]
        return seen, opt.state_dict()

    check(fn)
