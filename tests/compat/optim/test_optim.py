"""compat ``torch.optim`` against real PyTorch: parameter trajectories for the same
gradients, param groups, ``step(closure)``, errors in torch's words, and
``state_dict``/``load_state_dict`` in torch's structure (also one written by torch)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check
from tests.jit_counts import jit_cache_size

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(7)
START = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(4)]
GRADS = [
    [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(4)]
    for _ in range(6)
]

OPTIMIZERS = {
    "sgd_dampening": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, dampening=0.5),
    "sgd_dampening_decay": lambda o, p: o.SGD(
        p, lr=0.1, momentum=0.8, dampening=0.3, weight_decay=0.1
    ),
    "sgd_nesterov_decay_max": lambda o, p: o.SGD(
        p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.2, maximize=True
    ),
    "sgd_decay_only": lambda o, p: o.SGD(p, lr=0.1, dampening=0.5, weight_decay=0.3),
    "adam_amsgrad": lambda o, p: o.Adam(p, lr=0.05, amsgrad=True),
    "adam_amsgrad_decay": lambda o, p: o.Adam(
        p, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True
    ),
    "adam_decoupled": lambda o, p: o.Adam(
        p, lr=0.05, weight_decay=0.1, decoupled_weight_decay=True
    ),
    "adamw": lambda o, p: o.AdamW(p, lr=0.05),
    "adamw_amsgrad_max": lambda o, p: o.AdamW(
        p, lr=0.05, weight_decay=0.3, amsgrad=True, maximize=True
    ),
    "adadelta": lambda o, p: o.Adadelta(p),
    "adadelta_options": lambda o, p: o.Adadelta(
        p, lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True
    ),
    "adagrad": lambda o, p: o.Adagrad(p),
    "adagrad_options": lambda o, p: o.Adagrad(
        p,
        lr=0.1,
        lr_decay=0.5,
        weight_decay=0.1,
        initial_accumulator_value=0.2,
        eps=1e-6,
        maximize=True,
    ),
    "rmsprop_all": lambda o, p: o.RMSprop(
        p, lr=0.01, momentum=0.5, centered=True, weight_decay=0.1
    ),
}


def _params(m):
    return [m.nn.Parameter(m.tensor(a)) for a in START]


def _steps(m, opt, ps, grads):
    seen = []
    for step_grads in grads:
        for p, g in zip(ps, step_grads, strict=True):
            p.grad = m.tensor(g).to(p.dtype)
        opt.step()
        seen.append([p.detach().clone() for p in ps])
    return seen


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_optimizer_follows_torchs_trajectory_for_the_same_gradients(case):
    def fn(m):
        ps = _params(m)
        return _steps(m, OPTIMIZERS[case](m.optim, ps), ps, GRADS)

    check(fn)


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_optimizer_state_dict_matches_torchs_after_steps(case):
    def fn(m):
        ps = _params(m)
        opt = OPTIMIZERS[case](m.optim, ps)
        # a copy: torch's state_dict() holds the live state tensors (compat's are
        # snapshots), and Adagrad has state before its first step
        before = copy.deepcopy(opt.state_dict())
        _steps(m, opt, ps, GRADS[:3])
        return before, opt.state_dict()

    check(fn)


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_state_dict_written_by_torch_continues_identically_in_compat(case):
    tps = _params(pt)
    topt = OPTIMIZERS[case](pt.optim, tps)
    _steps(pt, topt, tps, GRADS[:3])
    saved = topt.state_dict()
    cps = [ct.nn.Parameter(ct.tensor(p.detach().numpy())) for p in tps]
    copt = OPTIMIZERS[case](ct.optim, cps)
    copt.load_state_dict(
        {
            "state": {
                k: {n: ct.tensor(v.numpy()) for n, v in s.items()}
                for k, s in saved["state"].items()
            },
            "param_groups": saved["param_groups"],
        }
    )
    theirs = _steps(pt, topt, tps, GRADS[3:])
    ours = _steps(ct, copt, cps, GRADS[3:])
    for t_step, c_step in zip(theirs, ours, strict=True):
        for t, c in zip(t_step, c_step, strict=True):
            np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_adagrad_fills_every_sum_from_the_constructors_value_as_torch():
    # torch ignores a group's own initial_accumulator_value, also in a later group
    def fn(m):
        ps = _params(m)
        late = m.nn.Parameter(m.ones(2))
        opt = m.optim.Adagrad(
            [{"params": ps[:1]}, {"params": ps[1:], "initial_accumulator_value": 2.0}],
            lr=0.1,
            initial_accumulator_value=0.3,
        )
        opt.add_param_group({"params": [late], "initial_accumulator_value": 1.0})
        late.grad = m.ones(2)
        trajectory = _steps(m, opt, ps, GRADS[:2])
        return trajectory, late, opt.state_dict()

    check(fn)


def test_sgd_loads_a_none_momentum_buffer_as_none_yet():
    # torch 1.x saved SGD's buffer as None before (or without) momentum
    def fn(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1, momentum=0.9)
        saved = opt.state_dict()
        saved["state"] = {0: {"momentum_buffer": None}, 1: {"momentum_buffer": None}}
        opt.load_state_dict(saved)
        return _steps(m, opt, ps, GRADS[:3]), opt.state_dict()

    check(fn)


def test_sgd_momentum_switched_on_later_starts_its_buffer_then():
    def fn(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1, dampening=0.5)
        first = _steps(m, opt, ps, GRADS[:2])
        empty = opt.state_dict()["state"]
        opt.param_groups[0]["momentum"] = 0.9
        return first, empty, _steps(m, opt, ps, GRADS[2:]), opt.state_dict()

    check(fn)


def test_sgd_momentum_and_weight_decay_switched_off_and_on_between_steps():
    # compat builds SGD's update for whether momentum and weight_decay are zero
    # (a static of the program): each switch changes the program, not the state.
    def fn(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.2)
        seen = [_steps(m, opt, ps, GRADS[:2])]
        for momentum, decay in ((0.0, 0.1), (0.5, 0.0), (0.7, 0.3)):
            opt.param_groups[0].update(momentum=momentum, weight_decay=decay)
            seen.append(_steps(m, opt, ps, GRADS[2:4]))
        return seen, opt.state_dict()

    check(fn)


def test_sgd_without_weight_decay_never_reads_the_parameter_into_the_gradient():
    # torch: `if weight_decay != 0: grad = grad.add(param, ...)`, so an infinite
    # parameter stays infinite (0 * inf would have made it NaN).
    def fn(m):
        p = m.nn.Parameter(m.tensor([float("inf"), 1.0, -2.0]))
        opt = m.optim.SGD([p], lr=0.1, momentum=0.9)
        for _ in range(2):
            p.grad = m.tensor([1.0, 2.0, 3.0])
            opt.step()
        return p.detach().clone(), opt.state_dict()["state"]

    check(fn)


def test_param_groups_with_their_own_lr_and_a_changed_lr_take_effect():
    def fn(m):
        base, head = _params(m)
        opt = m.optim.SGD(
            [{"params": [base]}, {"params": [head], "lr": 1e-3}], lr=1e-2, momentum=0.9
        )
        first = _steps(m, opt, [base, head], GRADS[:2])
        opt.param_groups[0]["lr"] = 0.5
        opt.param_groups[1]["momentum"] = 0.1
        return first, _steps(m, opt, [base, head], GRADS[2:4]), opt.state_dict()

    check(fn)


def test_add_param_group_takes_the_defaults_and_steps_the_new_group():
    def fn(m):
        base, head = _params(m)
        opt = m.optim.Adam([base], lr=0.05, amsgrad=True)
        opt.add_param_group({"params": [head], "betas": (0.5, 0.6)})
        # (state_dict's groups: compat's Adam groups also hold the betas split)
        groups = opt.state_dict()["param_groups"]
        return groups, _steps(m, opt, [base, head], GRADS[:3]), opt.state_dict()

    check(fn)


def test_parameters_without_grad_are_skipped_and_keep_no_state():
    def fn(m):
        ps = _params(m)
        opt = m.optim.AdamW(ps, lr=0.1)
        ps[0].grad = m.tensor(GRADS[0][0])
        opt.step()
        return [p.detach().clone() for p in ps], opt.state_dict()["state"]

    check(fn)


def test_first_step_makes_the_states_without_compiling():
    """Optax's init, run eagerly, compiled a zeros program per parameter shape;
    jitted, one program on the first step's critical path. compat computes the
    states with NumPy from init's jaxpr (compat._host_eval): none compiled."""
    from jaxblitz.compat import nn
    from jaxblitz.compat.optim import optimizer

    net = nn.Sequential(nn.Linear(7, 5), nn.ReLU(), nn.Linear(5, 3), nn.Linear(3, 2))
    before = jit_cache_size(optimizer._init_jit)
    # (the constructor may warm the update up ahead on another thread: compat._warm)
    opt = jaxblitz.compat.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(jaxblitz.compat.ones(4, 7)).sum().backward()
    opt.step()
    assert jit_cache_size(optimizer._init_jit) == before
    assert len(opt.state) == 6
    state = opt.state_dict()["state"]
    for i, p in enumerate(net.parameters()):  # torch: the first gradient
        np.testing.assert_array_equal(
            state[i]["momentum_buffer"].numpy(), p.grad.numpy()
        )


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_states_made_on_the_host_are_the_compiled_inits(name):
    import jax

    from jaxblitz.compat import nn
    from jaxblitz.compat.optim import optimizer

    params = [*nn.Linear(3, 2).parameters(), nn.Parameter(jaxblitz.compat.tensor(2.0))]
    opt = OPTIMIZERS[name](jaxblitz.compat.optim, params)
    tx = opt._tx(opt.param_groups[0])
    arrays = [p._data for p in params]
    host = optimizer.init_states(tx, arrays)
    key = (tx, tuple((a.shape, a.dtype) for a in arrays))
    assert optimizer._INIT_PLANS[key] is not None  # made with NumPy
    compiled = optimizer._init_jit(arrays, tx=tx)
    assert jax.tree.structure(host) == jax.tree.structure(compiled)
    for a, b in zip(jax.tree.leaves(host), jax.tree.leaves(compiled), strict=True):
        assert isinstance(a, jax.Array) and (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_host_evaluation_refuses_what_numpy_would_not_do_exactly():
    import jax.numpy as jnp

    from jaxblitz.compat._eager import _host_eval

    x = jnp.ones(3)
    assert _host_eval.plan(lambda a: jnp.exp(jnp.zeros_like(a)), x) is None
    assert _host_eval.plan(lambda a: a * 2.0, x) is None  # reads the input's values

    def nan_to_int(a):  # XLA's conversion, not NumPy's
        return jnp.full((2,), jnp.nan, jnp.float32).astype(jnp.int32)

    assert _host_eval.plan(nan_to_int, x) is None

    def init(a):
        return {"z": jnp.zeros((2, *a.shape)), "n": jnp.asarray(0.1, jnp.float32) * 3}

    planned = _host_eval.plan(init, x)
    out = _host_eval.run(planned)
    np.testing.assert_array_equal(out["z"], np.zeros((2, 3), np.float32))
    assert out["n"].dtype == np.float32 and out["n"] == np.float32(0.1) * np.float32(3)


def test_zero_grad_sets_none_by_default_and_zeros_when_asked():
    def fn(m):
        ps = _params(m)
        opt = m.optim.Adagrad(ps)
        for p in ps:
            p.grad = m.ones_like(p)
        opt.zero_grad(set_to_none=False)
        zeroed = [p.grad.clone() for p in ps]
        opt.zero_grad()
        return zeroed, [p.grad for p in ps]

    check(fn)


def test_zero_grad_without_none_zeroes_the_same_grad_tensor_in_place():
    def fn(m):
        p = m.nn.Parameter(m.ones(3))
        opt = m.optim.SGD([p], lr=0.1)
        p.grad = m.ones(3)
        held = p.grad
        opt.zero_grad(set_to_none=False)
        return p.grad is held, held, p.grad.requires_grad

    check(fn)


def test_repr_and_betas_read_as_torchs():
    def fn(m):
        opt = m.optim.Adam([m.nn.Parameter(m.ones(3))], lr=0.1, betas=[0.8, 0.9])
        second = m.nn.Parameter(m.ones(2))
        opt.add_param_group({"params": [second], "betas": (0.5, 0.6)})
        return repr(opt), opt.defaults["betas"], opt.state_dict()["param_groups"]

    check(fn)


def test_step_with_a_closure_returns_its_loss_and_uses_its_grads():
    def fn(m):
        w = m.nn.Parameter(m.tensor([1.0, -2.0, 3.0]))
        opt = m.optim.Adadelta([w], lr=1.0)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        losses = [opt.step(closure) for _ in range(3)]
        return losses, w

    check(fn)


ERRORS = {
    "nesterov_no_momentum": lambda o, p: o.SGD(p, lr=0.1, nesterov=True),
    "nesterov_dampening": lambda o, p: o.SGD(
        p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True
    ),
    "sgd_momentum": lambda o, p: o.SGD(p, lr=0.1, momentum=-0.5),
    "adamw_beta": lambda o, p: o.AdamW(p, betas=(0.9, 1.0)),
    "adamw_decay": lambda o, p: o.AdamW(p, weight_decay=-1),
    "adam_eps": lambda o, p: o.Adam(p, eps=-1e-8),
    "adadelta_rho": lambda o, p: o.Adadelta(p, rho=1.1),
    "adadelta_rho_one": lambda o, p: o.Adadelta(p, rho=1.0).defaults["rho"],
    "adadelta_lr": lambda o, p: o.Adadelta(p, lr=-1.0),
    "adagrad_lr_decay": lambda o, p: o.Adagrad(p, lr_decay=-0.5),
    "adagrad_initial": lambda o, p: o.Adagrad(p, initial_accumulator_value=-1),
    "adagrad_eps": lambda o, p: o.Adagrad(p, eps=-1),
    "adagrad_fused_foreach": lambda o, p: o.Adagrad(p, fused=True, foreach=True),
}


@pytest.mark.parametrize("case", ERRORS)
def test_bad_arguments_raise_torchs_errors(case):
    check(lambda m: ERRORS[case](m.optim, _params(m)))


def test_differentiable_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        ct.optim.AdamW(_params(ct), differentiable=True)


@pytest.mark.parametrize("scalar", [False, True])
@pytest.mark.parametrize("case", ["sgd_dampening_decay", "adam_amsgrad", "adagrad"])
def test_params_that_join_late_or_are_scalars_keep_their_own_step_counts(case, scalar):
    # step() updates a group's shared scalar state (step counts, SGD's started
    # flag) once while every state has the same one; a param whose grad first
    # comes at step 3, and a 0-dim param, must still count their own steps.
    def fn(m):
        extra = [m.nn.Parameter(m.tensor(0.5))] if scalar else []
        ps = [*_params(m), m.nn.Parameter(m.tensor(START[0] * 2)), *extra]
        opt = OPTIMIZERS[case](m.optim, ps)
        seen = []
        for i, step_grads in enumerate(GRADS):
            grads = [*step_grads, step_grads[0] * 0.5, 0.3][: len(ps)]
            for j, (p, g) in enumerate(zip(ps, grads, strict=True)):
                p.grad = m.tensor(g).to(p.dtype) if i >= 2 or j != 1 else None
            opt.step()
            seen.append([p.detach().clone() for p in ps])
        return seen, opt.state_dict()["state"]

    check(fn)


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_scalar_state_updates_from_scalars_and_hyperparameters_alone(case):
    """What step()'s shared update (optimizer._update_shared) relies on: in every
    optimizer's update, the new state's scalar leaves depend on no array input
    (parameters, gradients, buffers), so every parameter's are the same."""
    import jax

    from jaxblitz.compat import lazy
    from jaxblitz.compat.optim import optimizer
    from jaxblitz.compat.tensor._dtype import x64

    ps = _params(ct)
    opt = OPTIMIZERS[case](ct.optim, ps)
    group = opt.param_groups[0]
    tx, hyper = opt._tx(group), opt._hyperparams(group)
    arrays = [p._data for p in ps]
    # (in lazy mode the states are pending: their values, to trace with)
    states = jax.tree.map(lazy.concrete, optimizer.init_states(tx, arrays))
    assert optimizer._shares_scalars(states)  # made shared
    args = (arrays, [a + 1 for a in arrays], states, hyper)
    with x64(True):
        closed = jax.make_jaxpr(lambda *a: optimizer._update(*a, tx=tx))(*args)
    jaxpr = closed.jaxpr
    flat_in = jax.tree.leaves(args)
    flat_out = jax.tree.leaves(
        jax.eval_shape(lambda *a: optimizer._update(*a, tx=tx), *args)
    )
    arrays_in = {v for v, x in zip(jaxpr.invars, flat_in, strict=True) if np.ndim(x)}
    scalar_out = [v for v, x in zip(jaxpr.outvars, flat_out, strict=True) if not x.ndim]
    assert scalar_out  # every optimizer here keeps a step count or a flag
    deps = {}  # var -> does it depend on an array input?
    for v in jaxpr.invars:
        deps[v] = v in arrays_in
    for eqn in jaxpr.eqns:
        hit = any(deps.get(v, False) for v in eqn.invars if not hasattr(v, "val"))
        for v in eqn.outvars:
            deps[v] = hit
    assert not [v for v in scalar_out if deps.get(v, False)]
