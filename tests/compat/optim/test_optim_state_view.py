"""compat ``optimizer.state`` against real PyTorch: each parameter's state in torch's
format (keys, dtypes, shapes, values), torch's ``defaultdict`` behaviour (``len``,
``in``, iteration), and edits through it (in place, replaced entries, deleted
states) taking effect at the next ``step()`` as in torch."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import jaxblitz.compat

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(11)
START = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(4)]
GRADS = [
    [RNG.standard_normal(s.shape).astype(np.float32) for s in START] for _ in range(6)
]

OPTIMIZERS = {
    "sgd_momentum": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.1),
    "adam": lambda o, p: o.Adam(p, lr=0.05),
    "adam_amsgrad": lambda o, p: o.Adam(p, lr=0.05, amsgrad=True),
    "adamw": lambda o, p: o.AdamW(p, lr=0.05, weight_decay=0.1),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda o, p: o.Adagrad(
        p, lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1
    ),
}
NAMES = list(OPTIMIZERS)


def _numpy(value):
    return value.detach().cpu().numpy() if hasattr(value, "detach") else value


def train(lib, name, steps=3, edit=None, more=3, read=None):
    """``steps`` steps, ``edit(optimizer, params)``, ``more`` steps: the params
    and the optimizer (``read``: "state" or "params", read after every step)."""
    params = [lib.nn.Parameter(lib.tensor(a.astype(np.float32))) for a in START]
    opt = OPTIMIZERS[name](lib.optim, params)
    for i in range(steps + more):
        if i == steps and edit is not None:
            edit(opt, params)
        for p, g in zip(params, GRADS[i], strict=True):
            p.grad = lib.tensor(g)
        opt.step()
        if read == "state":
            for p in params:
                [_numpy(v) for v in opt.state[p].values()]
        elif read == "params":
            for p in params:
                _numpy(p)
    return [_numpy(p) for p in params], opt


def states(opt, params):
    return [{k: _numpy(v) for k, v in opt.state[p].items()} for p in params]


def same_params(ours, theirs, exact=False):
    for a, b in zip(ours, theirs, strict=True):
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def both(name, edit, steps=3, more=3):
    """Train with compat and torch, the same ``edit`` between; check the params
    agree, and return compat's params and the unedited run's."""
    ours, opt = train(ct, name, steps, edit, more)
    theirs, _ = train(pt, name, steps, edit, more)
    same_params(ours, theirs)
    plain, _ = train(ct, name, steps, None, more)
    return ours, plain


@pytest.mark.parametrize("name", NAMES)
def test_state_after_steps_is_torchs_keys_dtypes_shapes_and_values(name):
    ours, opt = train(ct, name, more=0)
    theirs, topt = train(pt, name, more=0)
    params = [p for g in opt.param_groups for p in g["params"]]
    tparams = [p for g in topt.param_groups for p in g["params"]]
    for p, tp in zip(params, tparams, strict=True):
        mine, want = opt.state[p], topt.state[tp]
        assert list(mine) == list(want)
        for key, value in want.items():
            assert isinstance(mine[key], ct.Tensor)
            assert str(mine[key].dtype) == str(value.dtype)
            assert tuple(mine[key].shape) == tuple(value.shape)
            np.testing.assert_allclose(
                _numpy(mine[key]), _numpy(value), rtol=1e-5, atol=1e-6
            )


@pytest.mark.parametrize("name", NAMES)
def test_state_before_any_step_is_torchs(name):
    for lib in (ct, pt):
        params = [lib.nn.Parameter(lib.tensor(a.astype(np.float32))) for a in START]
        opt = OPTIMIZERS[name](lib.optim, params)
        if lib is pt:
            want = (len(opt.state), params[0] in opt.state, states(opt, params))
        else:
            got = (len(opt.state), params[0] in opt.state, states(opt, params))
    assert got[:2] == want[:2]
    for mine, theirs in zip(got[2], want[2], strict=True):
        assert list(mine) == list(theirs)
        for key in theirs:
            np.testing.assert_array_equal(mine[key], theirs[key])


@pytest.mark.parametrize("name", NAMES)
def test_len_in_and_iteration_are_torchs(name):
    results = []
    for lib in (ct, pt):
        params = [lib.nn.Parameter(lib.tensor(a.astype(np.float32))) for a in START]
        frozen = lib.nn.Parameter(lib.zeros(2))  # never given a grad
        opt = OPTIMIZERS[name](lib.optim, [*params, frozen])
        for p, g in zip(params, GRADS[0], strict=True):
            p.grad = lib.tensor(g)
        opt.step()
        order = [id(p) for g in opt.param_groups for p in g["params"]]
        results.append(
            (
                len(opt.state),
                [order.index(id(p)) for p in opt.state],
                [order.index(id(p)) for p, _ in opt.state.items()],
                [p in opt.state for p in [*params, frozen]],
                [sorted(s) for s in opt.state.values()],
            )
        )
    assert results[0] == results[1]


def _scale_buffers(opt, params):
    for p in params:
        for key, value in opt.state[p].items():
            if key != "step":
                value.mul_(0.5)


def _zero_buffers(opt, params):
    for key, value in opt.state[params[0]].items():
        if key != "step":
            value.zero_()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("edit", [_scale_buffers, _zero_buffers])
def test_an_in_place_edit_of_the_state_takes_effect_at_the_next_step(name, edit):
    ours, plain = both(name, edit)
    assert not np.allclose(ours[0], plain[0])  # the edit mattered


def _replace_buffer(opt, params):
    state = opt.state[params[0]]
    key = next(k for k in state if k != "step")
    lib = pt if isinstance(state[key], pt.Tensor) else ct
    state[key] = lib.full_like(state[key], 0.25)


def _replace_step(opt, params):
    state = opt.state[params[0]]
    lib = pt if isinstance(state["step"], pt.Tensor) else ct
    state["step"] = lib.tensor(10.0)


def _replace_whole_dict(opt, params):
    old = opt.state[params[1]]
    opt.state[params[1]] = {k: v.clone() * 2 for k, v in old.items()}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("edit", [_replace_buffer, _replace_whole_dict])
def test_replacing_a_state_entry_takes_effect_at_the_next_step(name, edit):
    ours, plain = both(name, edit)
    assert not all(np.allclose(a, b) for a, b in zip(ours, plain, strict=True))


@pytest.mark.parametrize("name", ["adam", "adamw", "rmsprop", "adagrad"])
def test_replacing_the_step_count_takes_effect_at_the_next_step(name):
    ours, plain = both(name, _replace_step)
    if name != "rmsprop":  # RMSprop's update does not read its step
        assert not np.allclose(ours[0], plain[0])


@pytest.mark.parametrize("name", ["sgd_momentum", "adam", "adamw", "rmsprop"])
def test_deleting_a_params_state_starts_it_afresh_as_torch(name):
    def forget(opt, params):
        del opt.state[params[0]]
        assert params[0] not in opt.state

    ours, plain = both(name, forget)
    assert not np.allclose(ours[0], plain[0])


@pytest.mark.parametrize("name", ["sgd_momentum", "adam"])
def test_assigning_a_new_defaultdict_resets_the_state_as_torch(name):
    def reset(opt, params):
        opt.state = collections.defaultdict(dict)
        assert len(opt.state) == 0

    ours, plain = both(name, reset)
    assert not np.allclose(ours[0], plain[0])


def test_a_buffer_held_across_steps_stays_live_as_torchs():
    held = []
    for lib in (ct, pt):
        p = lib.nn.Parameter(lib.tensor(START[0]))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        p.grad = lib.tensor(GRADS[0][0])
        opt.step()
        buf = opt.state[p]["momentum_buffer"]
        p.grad = lib.tensor(GRADS[1][0])
        opt.step()
        seen = _numpy(buf).copy()  # the buffer after the second step
        buf.zero_()  # not read through `state` again
        p.grad = lib.tensor(GRADS[2][0])
        opt.step()
        held.append((seen, _numpy(p), opt.state[p]["momentum_buffer"] is buf))
    np.testing.assert_allclose(held[0][0], held[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(held[0][1], held[1][1], rtol=1e-5, atol=1e-6)
    assert held[0][2] and held[1][2]


@pytest.mark.parametrize("name", NAMES)
def test_reading_the_state_every_step_leaves_the_results_the_same(name):
    # against reading the params as often: lazily, reading anything between steps
    # ends the recorded work there, which can change the bits by itself
    read, _ = train(ct, name, read="state")
    params, _ = train(ct, name, read="params")
    same_params(read, params, exact=True)


def test_sgd_without_momentum_keeps_no_state_as_torch():
    for lib in (ct, pt):
        p = lib.nn.Parameter(lib.tensor(START[0]))
        opt = lib.optim.SGD([p], lr=0.1)
        p.grad = lib.tensor(GRADS[0][0])
        opt.step()
        assert len(opt.state) == 0 and p not in opt.state
        assert opt.state[p] == {}  # defaultdict: now kept, empty
        assert p in opt.state and len(opt.state) == 1


def test_a_state_lacking_a_buffer_is_an_error_naming_it():
    p = ct.nn.Parameter(ct.tensor(START[0]))
    opt = ct.optim.Adam([p], lr=0.1)
    p.grad = ct.tensor(GRADS[0][0])
    opt.step()
    del opt.state[p]["exp_avg"]  # torch's next step raises KeyError too
    with pytest.raises(KeyError, match="exp_avg"):
        opt.step()


@pytest.mark.parametrize("name", ["sgd_momentum", "adam"])
def test_state_dict_shows_edits_made_through_state(name):
    ours, opt = train(ct, name, more=0)
    params = [p for g in opt.param_groups for p in g["params"]]
    _scale_buffers(opt, params)
    want = states(opt, params)
    saved = opt.state_dict()["state"]
    for i, entry in enumerate(want):
        for key, value in entry.items():
            np.testing.assert_array_equal(_numpy(saved[i][key]), value)


def test_load_state_dict_gives_a_new_state_as_torch():
    ours, opt = train(ct, "adam", more=0)
    p = opt.param_groups[0]["params"][0]
    before = opt.state[p]
    opt.load_state_dict(opt.state_dict())
    after = opt.state[p]
    assert after is not before
    np.testing.assert_array_equal(_numpy(after["exp_avg"]), _numpy(before["exp_avg"]))


OTHERS = {
    "NAdam": {},
    "RAdam": {},
    "Adamax": {},
    "Adadelta": {},
    "Rprop": {},
    "ASGD": {},
    "Adafactor": {},
}


@pytest.mark.parametrize("name", list(OTHERS))
def test_every_other_optimizers_state_reads_and_takes_edits_as_torchs(name):
    def run(lib):
        params = [lib.nn.Parameter(lib.tensor(a.astype(np.float32))) for a in START]
        opt = getattr(lib.optim, name)(params, lr=0.01, **OTHERS[name])
        for i in range(6):
            if i == 3:  # scale every buffer of the parameter's shape or rank
                for p in params:
                    for key, value in opt.state[p].items():
                        if key != "step" and value.dim():
                            value.mul_(0.5)
            for p, g in zip(params, GRADS[i], strict=True):
                p.grad = lib.tensor(g)
            opt.step()
        return [_numpy(p) for p in params], opt, params

    ours, opt, params = run(ct)
    theirs, topt, tparams = run(pt)
    same_params(ours, theirs)
    for p, tp in zip(params, tparams, strict=True):
        assert list(opt.state[p]) == list(topt.state[tp])
        for key, value in topt.state[tp].items():
            assert str(opt.state[p][key].dtype) == str(value.dtype)
            np.testing.assert_allclose(
                _numpy(opt.state[p][key]), _numpy(value), rtol=1e-5, atol=1e-6
            )


def test_an_edit_between_compiled_steps_takes_effect_as_torchs_eager():
    def run(lib, compile):
        p = lib.nn.Parameter(lib.tensor(START[0]))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)

        def step():
            p.grad = p * 2.0
            opt.step()

        step = compile(step)
        for i in range(4):
            step()
            if i == 1:
                opt.state[p]["momentum_buffer"].zero_()
        return _numpy(p), _numpy(opt.state[p]["momentum_buffer"])

    ours = run(ct, ct.compile)
    theirs = run(pt, lambda f: f)
    same_params(ours, theirs)
