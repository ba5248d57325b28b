"""compat's optimizer state as objects, against real PyTorch: ``state_dict()``
hands out the optimizer's own state dicts and tensors (live across steps, edits
taking effect), ``load_state_dict`` keeps the loaded tensors where torch's cast
does, param groups are copied as torch copies them, deepcopy and a
``torch.save``/``torch.load`` round trip; lazily, none of it adds a sync or a
compile to a training loop."""

from __future__ import annotations

import copy
import io

import numpy as np
import pytest

import jaxblitz.compat
from jaxblitz.compat import lazy
from tests.compat.blitz_net import Net

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(5)
START = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(4)]
GRADS = [
    [RNG.standard_normal(s.shape).astype(np.float32) for s in START] for _ in range(6)
]

OPTIMIZERS = {
    "sgd_momentum": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda o, p: o.Adam(p, lr=0.05),
    "adamw": lambda o, p: o.AdamW(p, lr=0.05, weight_decay=0.1),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda o, p: o.Adagrad(p, lr=0.1),
    "nadam": lambda o, p: o.NAdam(p, lr=0.05),
}
NAMES = list(OPTIMIZERS)
BUFFER = {  # a buffer of each, of the parameter's shape
    "sgd_momentum": "momentum_buffer",
    "adam": "exp_avg",
    "adamw": "exp_avg",
    "rmsprop": "square_avg",
    "adagrad": "sum",
    "nadam": "exp_avg",
}
STEPPED = ["adam", "adamw", "rmsprop", "adagrad", "nadam"]  # with a `step` tensor


def _numpy(t):
    return t.detach().numpy().copy()


def make(lib, name, steps=2):
    """Params from START and ``name``'s optimizer after ``steps`` steps."""
    params = [lib.nn.Parameter(lib.tensor(a.astype(np.float32))) for a in START]
    opt = OPTIMIZERS[name](lib.optim, params)
    for i in range(steps):
        step(lib, opt, params, i)
    return params, opt


def step(lib, opt, params, i):
    for p, g in zip(params, GRADS[i], strict=True):
        p.grad = lib.tensor(g)
    opt.step()


def close(ours, theirs):
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def both(run):
    """``run(lib)`` for compat and torch."""
    return run(ct), run(pt)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_holds_the_optimizers_own_state_dicts_and_tensors(name):
    def run(lib):
        params, opt = make(lib, name)
        sd, again = opt.state_dict(), opt.state_dict()
        return (
            [sd["state"][i] is opt.state[p] for i, p in enumerate(params)],
            [
                sd["state"][0][k] is opt.state[params[0]][k]
                for k in opt.state[params[0]]
            ],
            again["state"] is not sd["state"],
            again["state"][1] is sd["state"][1],
            list(sd["state"]),
            [list(entry) for entry in sd["state"].values()],
        )

    ours, theirs = both(run)
    assert ours == theirs
    assert all(ours[0]) and all(ours[1])


@pytest.mark.parametrize("name", NAMES)
def test_a_step_after_state_dict_shows_in_the_tensors_it_gave(name):
    def run(lib):
        params, opt = make(lib, name)
        sd = opt.state_dict()
        before = {k: _numpy(v) for k, v in sd["state"][0].items()}
        step(lib, opt, params, 2)
        after = {k: _numpy(v) for k, v in sd["state"][0].items()}
        return before, after

    (ours_before, ours), (_, theirs) = both(run)
    assert list(ours) == list(theirs)
    for key, value in theirs.items():
        close(ours[key], value)
    assert not np.allclose(ours[BUFFER[name]], ours_before[BUFFER[name]])


@pytest.mark.parametrize("name", NAMES)
def test_an_in_place_edit_of_a_state_dict_tensor_changes_the_next_step(name):
    def run(lib, edit=True):
        params, opt = make(lib, name)
        if edit:
            opt.state_dict()["state"][0][BUFFER[name]].mul_(0.5)
        step(lib, opt, params, 2)
        step(lib, opt, params, 3)
        return [_numpy(p) for p in params]

    ours, theirs = both(run)
    for a, b in zip(ours, theirs, strict=True):
        close(a, b)
    assert not np.allclose(ours[0], run(ct, edit=False)[0])


@pytest.mark.parametrize("name", NAMES)
def test_zeroing_a_buffer_through_state_then_stepping_is_torchs(name):
    def run(lib):
        params, opt = make(lib, name)
        buffer = opt.state[params[0]][BUFFER[name]]
        buffer.mul_(0)
        zeroed = _numpy(opt.state_dict()["state"][0][BUFFER[name]])
        step(lib, opt, params, 2)
        return zeroed, _numpy(params[0]), opt.state[params[0]][BUFFER[name]] is buffer

    ours, theirs = both(run)
    np.testing.assert_array_equal(ours[0], theirs[0])
    close(ours[1], theirs[1])
    assert ours[2] and theirs[2]


@pytest.mark.parametrize("name", STEPPED)
def test_step_is_a_float32_scalar_tensor_counted_in_place(name):
    def run(lib):
        params, opt = make(lib, name)
        held = opt.state[params[0]]["step"]
        saved = opt.state_dict()["state"][0]["step"]
        step(lib, opt, params, 2)
        return (
            type(held).__name__,
            str(held.dtype),
            tuple(held.shape),
            float(held),
            float(saved),
            saved is held,
            opt.state[params[0]]["step"] is held,
        )

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[3] == 3.0


@pytest.mark.parametrize("name", NAMES)
def test_state_dicts_param_groups_are_new_dicts_of_indices_and_the_same_values(name):
    def run(lib):
        params, opt = make(lib, name)
        sd = opt.state_dict()
        group, packed = opt.param_groups[0], sd["param_groups"][0]
        same = sorted(k for k in packed if k != "params" and packed[k] is group[k])
        packed["lr"] = 123.0
        return (
            packed is not group,
            sd["param_groups"] is not opt.param_groups,
            packed["params"],
            sorted(packed),
            same,
            opt.param_groups[0]["lr"],
        )

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("name", NAMES)
def test_load_state_dict_keeps_the_loaded_tensors_as_torch(name):
    def run(lib):
        _, source = make(lib, name)
        params, opt = make(lib, name, steps=0)
        saved = source.state_dict()
        opt.load_state_dict(saved)
        entry, loaded = opt.state[params[0]], saved["state"][0]
        kept = [entry[k] is loaded[k] for k in loaded]
        fresh_dict = entry is not loaded
        loaded[BUFFER[name]].mul_(0.5)  # the optimizer's own tensor now
        step(lib, opt, params, 2)
        # ... which the optimizer's step writes into, in place
        return (
            kept,
            fresh_dict,
            [_numpy(p) for p in params],
            _numpy(source.state[source.param_groups[0]["params"][0]][BUFFER[name]]),
            _numpy(entry[BUFFER[name]]),
        )

    ours, theirs = both(run)
    assert ours[:2] == theirs[:2]
    assert all(ours[0]) and ours[1]
    for a, b in zip(ours[2], theirs[2], strict=True):
        close(a, b)
    close(ours[3], theirs[3])
    np.testing.assert_array_equal(ours[3], ours[4])  # the source sees the step


@pytest.mark.parametrize("name", ["sgd_momentum", "adam"])
def test_load_state_dict_copies_a_tensor_it_must_cast(name):
    def run(lib):
        _, source = make(lib, name)
        params, opt = make(lib, name, steps=0)
        saved = source.state_dict()
        wide = saved["state"][0][BUFFER[name]].double()
        saved["state"][0][BUFFER[name]] = wide
        opt.load_state_dict(saved)
        mine = opt.state[params[0]][BUFFER[name]]
        wide.mul_(0)  # the optimizer holds a float32 copy: unchanged
        step(lib, opt, params, 2)
        return mine is wide, str(mine.dtype), _numpy(params[0])

    ours, theirs = both(run)
    assert ours[:2] == theirs[:2] == (False, "torch.float32")
    close(ours[2], theirs[2])


@pytest.mark.parametrize("name", ["sgd_momentum", "adam"])
def test_load_state_dict_makes_a_new_state_and_param_groups_list(name):
    def run(lib):
        params, opt = make(lib, name)
        state, groups = opt.state, opt.param_groups
        old = state[params[0]]
        old_buffer = _numpy(old[BUFFER[name]])
        _, other = make(lib, name, steps=4)
        opt.load_state_dict(other.state_dict())
        step(lib, opt, params, 4)
        return (
            opt.state is not state,
            opt.param_groups is not groups,
            state[params[0]] is old,  # the old mapping keeps its dicts ...
            np.array_equal(_numpy(old[BUFFER[name]]), old_buffer),  # ... unchanged
            opt.state[params[0]] is not old,
        )

    ours, theirs = both(run)
    assert ours == theirs == (True,) * 5


@pytest.mark.parametrize("name", NAMES)
def test_two_optimizers_loaded_from_one_state_dict_share_its_tensors(name):
    def run(lib):
        first_params, first = make(lib, name)
        params, opt = make(lib, name)
        opt.load_state_dict(first.state_dict())
        step(lib, opt, params, 2)  # writes into `first`'s tensors too (torch)
        shown = _numpy(first.state[first_params[0]][BUFFER[name]])
        step(lib, first, first_params, 3)
        return (
            shown,
            _numpy(first_params[0]),
            _numpy(opt.state[params[0]][BUFFER[name]]),
        )

    ours, theirs = both(run)
    for a, b in zip(ours, theirs, strict=True):
        close(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_a_deepcopy_of_an_optimizer_steps_on_its_own(name):
    def run(lib):
        params, opt = make(lib, name)
        sd = opt.state_dict()  # dicts handed out before the copy
        twin = copy.deepcopy(opt)
        copies = twin.param_groups[0]["params"]
        step(lib, twin, copies, 2)
        step(lib, twin, copies, 3)
        untouched = _numpy(sd["state"][0][BUFFER[name]])
        step(lib, opt, params, 2)
        step(lib, opt, params, 3)
        return (
            copies[0] is not params[0],
            copies[0] in twin.state and params[0] not in twin.state,
            twin.state_dict()["state"][0] is twin.state[copies[0]],
            twin.state[copies[0]][BUFFER[name]]
            is not opt.state[params[0]][BUFFER[name]],
            untouched,
            _numpy(copies[0]),
            _numpy(params[0]),
        )

    ours, theirs = both(run)
    assert ours[:4] == theirs[:4] == (True,) * 4
    for a, b in zip(ours[4:], theirs[4:], strict=True):
        close(a, b)
    np.testing.assert_array_equal(ours[5], ours[6])  # the same steps, the same bits


@pytest.mark.parametrize("name", NAMES)
def test_torch_save_and_load_of_a_state_dict_resumes_as_torch(name):
    def run(lib):
        params, opt = make(lib, name)
        buffer = io.BytesIO()
        lib.save(opt.state_dict(), buffer)
        buffer.seek(0)
        loaded = lib.load(buffer)
        resumed = [lib.nn.Parameter(p.detach().clone()) for p in params]
        again = OPTIMIZERS[name](lib.optim, resumed)
        again.load_state_dict(loaded)
        kept = again.state[resumed[0]][BUFFER[name]] is loaded["state"][0][BUFFER[name]]
        for i in (2, 3):
            step(lib, opt, params, i)
            step(lib, again, resumed, i)
        return kept, [_numpy(p) for p in params], [_numpy(p) for p in resumed]

    ours, theirs = both(run)
    assert ours[0] and theirs[0]
    for a, b in zip(ours[2], ours[1], strict=True):
        np.testing.assert_array_equal(a, b)  # resumed exactly
    for a, b in zip(ours[2], theirs[2], strict=True):
        close(a, b)


def test_a_state_dict_taken_before_the_first_step_stays_empty_as_torchs():
    def run(lib):
        params, opt = make(lib, "adam", steps=0)
        sd = opt.state_dict()
        step(lib, opt, params, 0)
        return sd["state"], len(opt.state_dict()["state"])

    ours, theirs = both(run)
    assert ours == theirs == ({}, 2)


# -- lazily: no sync, no compile ----------------------------------------------------


def _lazy_loop(kind, touch):
    """The Blitz's loop with ``kind``'s optimizer, reading nothing between steps
    (the loss at the end): ``touch(optimizer)`` after 3 steps; the engine's
    counts over the 9 steps after it."""
    ct.manual_seed(0)
    net = Net()
    criterion = ct.nn.CrossEntropyLoss()
    params = list(net.parameters())
    opt = (
        ct.optim.SGD(params, lr=0.001, momentum=0.9)
        if kind == "sgd"
        else ct.optim.Adam(params, lr=0.001)
    )
    rng = np.random.default_rng(0)
    images = [rng.standard_normal((4, 3, 32, 32), dtype=np.float32) for _ in range(3)]
    labels = [rng.integers(0, 10, 4) for _ in range(3)]

    def steps(n):
        for i in range(n):
            opt.zero_grad()
            out = net(ct.tensor(images[i % 3]))
            loss = criterion(out, ct.tensor(labels[i % 3]))
            loss.backward()
            opt.step()
        return loss.item()

    steps(3)
    kept = touch(opt)
    steps(6)  # any new program compiled here (a graph spans 1.5 steps)
    lazy.metrics(reset=True)
    loss = steps(9)
    counts = lazy.metrics(reset=True)
    del kept
    return {k: counts.get(k, 0) for k in ("syncs", "compiles", "donated")}, loss


def _state_dict(opt):
    return opt.state_dict()


def _saved_and_loaded(opt):
    buffer = io.BytesIO()
    ct.save(opt.state_dict(), buffer)  # a sync point, before the counts
    buffer.seek(0)
    opt.load_state_dict(ct.load(buffer))
    return opt.state_dict()


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("touch", [_state_dict, _saved_and_loaded])
def test_a_state_dict_held_adds_no_sync_or_compile_to_a_lazy_loop(lazily, kind, touch):
    plain, plain_loss = _lazy_loop(kind, lambda opt: None)
    held, loss = _lazy_loop(kind, touch)
    # fewer syncs than steps: a read of the state during a step would add one each
    assert held["syncs"] == plain["syncs"] < 9
    assert held["compiles"] == plain["compiles"] == 0
    assert held["donated"] >= plain["donated"] > 0  # the state updated in place
    assert loss == plain_loss
