"""compat ``optimizer.state`` as a mapping, against real PyTorch: torch's is a
``collections.defaultdict(dict)``, and so is compat's, answering every dict and
defaultdict method (``get``, ``setdefault``, ``pop``, ``popitem``, ``update``,
``|``, ``==``, ``repr``, copies, ``json``, ``dict(...)``, ``{**...}``) as
torch's does; a step nobody reads still converts nothing."""

from __future__ import annotations

import collections
import copy
import json

import numpy as np
import pytest

import jaxblitz.compat

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(23)
START = [RNG.standard_normal((3, 2)).astype(np.float32), RNG.standard_normal(3)]
GRADS = [
    [RNG.standard_normal(s.shape).astype(np.float32) for s in START] for _ in range(5)
]
OPTIMIZERS = {
    "sgd_momentum": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda o, p: o.Adam(p, lr=0.05),
}
NAMES = list(OPTIMIZERS)


def _numpy(value):
    return value.detach().numpy().copy()


def make(lib, name, steps=2):
    params = [lib.nn.Parameter(lib.tensor(a.astype(np.float32))) for a in START]
    opt = OPTIMIZERS[name](lib.optim, params)
    for i in range(steps):
        step(lib, opt, params, i)
    return params, opt


def step(lib, opt, params, i):
    for p, g in zip(params, GRADS[i], strict=True):
        p.grad = lib.tensor(g)
    opt.step()


def both(run):
    return run(ct), run(pt)


def index(params, mapping):
    """``mapping``'s keys as indices into ``params`` (None: another key)."""
    ids = [id(p) for p in params]
    return [ids.index(id(k)) if id(k) in ids else None for k in mapping]


def values(entry):
    return {k: _numpy(v) for k, v in entry.items()}


def same_values(ours, theirs):
    assert list(ours) == list(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_state_is_a_defaultdict_of_dict_as_torchs(name):
    def run(lib):
        _, opt = make(lib, name)
        s = opt.state
        kinds = (isinstance(s, dict), isinstance(s, collections.defaultdict))
        return kinds, s.default_factory, len(s)

    ours, theirs = both(run)
    assert ours == theirs == ((True, True), dict, 2)


@pytest.mark.parametrize("name", NAMES)
def test_dict_of_state_and_unpacking_hold_the_states_own_dicts(name):
    def run(lib):
        params, opt = make(lib, name)
        made, unpacked = dict(opt.state), {**opt.state}
        merged: dict = {}
        merged.update(opt.state)
        out = []
        for mapping in (made, unpacked, merged):
            assert type(mapping) is dict
            assert all(mapping[p] is opt.state[p] for p in params)
            out.append(index(params, mapping))
        return out, [values(made[p]) for p in params]

    (order, ours), (want, theirs) = both(run)
    assert order == want == [[0, 1]] * 3
    for mine, their in zip(ours, theirs, strict=True):
        same_values(mine, their)


@pytest.mark.parametrize("name", NAMES)
def test_a_step_nobody_reads_converts_no_state(name):
    params, opt = make(ct, name, steps=3)
    assert dict.__len__(opt.state) == 0  # nothing made yet: no dict, no tensor
    assert len(opt.state) == 2  # a read makes them
    assert dict.__len__(opt.state) == 2


@pytest.mark.parametrize("name", NAMES)
def test_c_level_reads_see_the_dicts_handed_out_live_across_steps(name):
    def run(lib):
        params, opt = make(lib, name)
        held = opt.state[params[0]]
        step(lib, opt, params, 2)
        step(lib, opt, params, 3)
        raw = dict.get(opt.state, params[0])  # the dict's own item, no method
        assert raw is held
        return values(raw)

    ours, theirs = both(run)
    same_values(ours, theirs)


@pytest.mark.parametrize("name", NAMES)
def test_get_contains_and_setdefault_answer_as_torchs(name):
    def run(lib):
        params, opt = make(lib, name)
        frozen, other = lib.nn.Parameter(lib.zeros(2)), lib.ones(1)
        opt.add_param_group({"params": [frozen]})
        s = opt.state
        out = [
            s.get(params[0]) is s[params[0]],
            s.get(frozen),
            s.get(frozen, "none"),
            frozen in s,
            other in s,
            len(s),
            s.setdefault(params[1], {"x": 1}) is s[params[1]],
            s.setdefault(frozen, {"x": 1}),
            s.setdefault(other),
            frozen in s,
            len(s),
            index([*params, frozen], s),
        ]
        return out

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("name", NAMES)
def test_equality_with_plain_dicts_is_torchs_both_ways(name):
    def run(lib):
        params, opt = make(lib, name)
        s = opt.state
        same = {p: s[p] for p in params}
        fewer = {params[0]: s[params[0]]}
        return [s == same, same == s, s != same, s == fewer, fewer != s, s == {}]

    ours, theirs = both(run)
    assert ours == theirs == [True, True, False, False, True, False]


def test_repr_is_torchs():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.SGD([p], lr=0.5, momentum=0.9)
        p.grad = lib.tensor([0.5, -0.25])
        opt.step()
        empty = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1, momentum=0.9)
        return repr(opt.state), str(opt.state), repr(empty.state)

    ours, theirs = both(run)
    assert ours == theirs
    assert theirs[2] == "defaultdict(<class 'dict'>, {})"


@pytest.mark.parametrize("name", NAMES)
def test_copies_are_plain_defaultdicts_as_torchs(name):
    def run(lib):
        params, opt = make(lib, name)
        s = opt.state
        out = []
        for made in (s.copy(), copy.copy(s), s | {}, {} | s):
            assert type(made) is collections.defaultdict
            assert made.default_factory is dict
            out.append((index(params, made), all(made[p] is s[p] for p in params)))
        deep = copy.deepcopy(s)
        assert type(deep) is collections.defaultdict
        assert all(deep[p] is not s[p] for p in deep)
        out.append(len(deep))
        return out, [values(e) for e in deep.values()]

    (ours, mine), (theirs, their) = both(run)
    assert ours == theirs
    for a, b in zip(mine, their, strict=True):
        same_values(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_reduce_pickles_a_defaultdict_of_the_states_as_torchs(name):
    def run(lib):
        params, opt = make(lib, name)
        kind, args, state, items, pairs = opt.state.__reduce__()
        pairs = list(pairs)
        assert all(entry is opt.state[p] for p, entry in pairs)
        return kind, args, state, items, index(params, dict(pairs))

    ours, theirs = both(run)
    assert ours == theirs == (collections.defaultdict, (dict,), None, None, [0, 1])


@pytest.mark.parametrize("name", NAMES)
def test_json_sees_the_states_keys_as_torchs(name):
    def run(lib):
        params, opt = make(lib, name)
        # C's json reads the dict's size before its items: compat's holds the
        # states once one is read (unread, it shows none: see _state_view)
        opt.state[params[0]]
        with pytest.raises(TypeError) as info:
            json.dumps(opt.state)
        return str(info.value), json.dumps(opt.state, skipkeys=True)

    ours, theirs = both(run)
    assert (
        ours
        == theirs
        == (
            "keys must be str, int, float, bool or None, not Parameter",
            "{}",
        )
    )


def test_fromkeys_makes_a_defaultdict_without_a_factory_as_torchs():
    def run(lib):
        _, opt = make(lib, "adam")
        made = opt.state.fromkeys(["a", "b"], 0)
        return type(made), made.default_factory, dict(made)

    ours, theirs = both(run)
    assert ours == theirs == (collections.defaultdict, None, {"a": 0, "b": 0})


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("how", ["pop", "popitem", "clear", "update", "ior"])
def test_edits_through_dict_methods_take_effect_at_the_next_step_as_torchs(name, how):
    def run(lib):
        params, opt = make(lib, name)
        s = opt.state
        if how == "pop":
            assert s.pop(params[0]) is not None
            assert s.pop(params[0], "gone") == "gone"
        elif how == "popitem":
            key, _ = s.popitem()
            assert key is params[1]
        elif how == "clear":
            s.clear()
            assert len(s) == 0
        else:
            doubled = {k: v * 2 for k, v in s[params[1]].items() if k != "step"}
            doubled.update(
                {k: v.clone() for k, v in s[params[1]].items() if k == "step"}
            )
            if how == "update":
                s.update({params[1]: doubled})
            else:
                s |= {params[1]: doubled}
            assert s[params[1]] is doubled
        after = (len(s), index(params, s))
        for i in (2, 3):
            step(lib, opt, params, i)
        return after, [_numpy(p) for p in params], [values(s[p]) for p in params]

    (ours, mine, our_states), (theirs, their, their_states) = both(run)
    assert ours == theirs
    for a, b in zip(mine, their, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(our_states, their_states, strict=True):
        same_values(a, b)


def test_a_popitem_of_an_empty_state_is_torchs_error():
    for lib in (ct, pt):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1, momentum=0.9)
        with pytest.raises(KeyError, match=r"popitem\(\): dictionary is empty"):
            opt.state.popitem()


@pytest.mark.parametrize("name", NAMES)
def test_the_order_is_torchs_when_a_later_state_is_read_first(name):
    def run(lib):
        params, opt = make(lib, name)
        frozen = lib.nn.Parameter(lib.zeros(2))
        opt.add_param_group({"params": [frozen]})
        opt.state[params[1]]
        opt.state[frozen]  # torch adds it now: after the states made at the steps
        everyone = [*params, frozen]
        return (
            index(everyone, opt.state),
            index(everyone, [k for k, _ in opt.state.items()]),
            list(opt.state_dict()["state"]),
        )

    ours, theirs = both(run)
    assert ours == theirs == ([0, 1, 2], [0, 1, 2], [0, 1, 2])


@pytest.mark.parametrize("name", NAMES)
def test_a_state_held_across_load_state_dict_keeps_its_dicts_as_torchs(name):
    def run(lib):
        _, twin = make(lib, name)
        params, opt = make(lib, name)
        held = opt.state  # nothing read from it yet
        opt.load_state_dict(twin.state_dict())
        assert opt.state is not held
        return len(held), index(params, held), [values(held[p]) for p in params]

    (ours, order, mine), (theirs, want, their) = both(run)
    assert (ours, order) == (theirs, want) == (2, [0, 1])
    for a, b in zip(mine, their, strict=True):
        same_values(a, b)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "kind", [dict, lambda items: collections.defaultdict(dict, items)]
)
def test_assigning_a_mapping_of_the_states_keeps_them_in_effect(name, kind):
    def run(lib):
        params, opt = make(lib, name)
        opt.state = kind(opt.state)
        for i in (2, 3):
            step(lib, opt, params, i)
        return [_numpy(p) for p in params], [values(opt.state[p]) for p in params]

    (mine, our_states), (their, their_states) = both(run)
    for a, b in zip(mine, their, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(our_states, their_states, strict=True):
        same_values(a, b)
