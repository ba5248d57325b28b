"""compat's LBFGS with its curvature pairs in fixed-size buffers: lazily, one set
of programs for every length of the history; the iterates and torch's state
(``old_dirs``, ``old_stps``, ``ro``, ``al``) as real PyTorch's while the history
fills and wraps; state dicts saved, loaded and continued as torch's."""

from __future__ import annotations

import io

import numpy as np
import pytest

import jaxblitz.compat
from jaxblitz.compat import lazy
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(5)
X, Y = RNG.standard_normal((32, 4)), RNG.standard_normal((32, 2))
SEARCHES = [None, "strong_wolfe"]


def _problem(m, hidden=8, **kwargs):
    """A small tanh network in float64 (every iterate agrees with torch's), its
    weights from a formula, under LBFGS; the closure and the optimizer."""
    net = m.nn.Sequential(
        m.nn.Linear(4, hidden), m.nn.Tanh(), m.nn.Linear(hidden, 2)
    ).double()
    with m.no_grad():
        for i, p in enumerate(net.parameters()):
            n = p.numel()
            p.copy_(m.arange(n, dtype=m.float64).mul(0.7 + 0.3 * i).sin().view(p.shape))
    opt = m.optim.LBFGS(net.parameters(), **kwargs)
    x, y = m.tensor(X), m.tensor(Y)

    def closure():
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        return loss

    return closure, opt


# each its own width: no program of one serves the other; in these 12 steps the
# line search takes all its paths in the first 2 (a new path is a new graph)
@pytest.mark.parametrize(
    ("line_search_fn", "hidden"), [(None, 8), ("strong_wolfe", 10)]
)
def test_lazily_no_program_is_compiled_while_the_history_grows_and_wraps(
    lazily, line_search_fn, hidden
):
    # 16 pairs at most, at most 3 iterations a step: fewer than 6 pairs after 2
    # steps, then the history fills and wraps, each length another graph were
    # the recursion unrolled over it (the state is read after: a read makes its
    # lists)
    closure, opt = _problem(
        ct, hidden, history_size=16, max_iter=3, line_search_fn=line_search_fn
    )
    for _ in range(2):  # the line search takes its other paths by then
        opt.step(closure)
    lazy.metrics(reset=True)
    for _ in range(10):
        opt.step(closure)
    counts = lazy.metrics()
    state = opt.state_dict()["state"][0]
    assert len(state["old_dirs"]) == 16 and state["n_iter"] > 16 + 4
    assert counts["syncs"] > 50
    assert counts.get("compiles", 0) == 0


@pytest.mark.parametrize("line_search_fn", SEARCHES)
def test_iterates_and_history_match_torchs_as_the_history_fills_and_wraps(
    line_search_fn,
):
    def fn(m):
        closure, opt = _problem(
            m, history_size=4, max_iter=5, line_search_fn=line_search_fn
        )
        losses = [opt.step(closure) for _ in range(5)]
        return losses, list(opt._params), opt.state_dict()

    check(fn)


def _saved(m, obj):
    buffer = io.BytesIO()
    m.save(obj, buffer)
    buffer.seek(0)
    return m.load(buffer)


@pytest.mark.parametrize("line_search_fn", SEARCHES)
def test_a_saved_and_loaded_state_continues_as_torchs_and_as_if_never_saved(
    line_search_fn,
):
    def fn(m):
        kwargs = {"history_size": 3, "max_iter": 4, "line_search_fn": line_search_fn}
        closure, opt = _problem(m, **kwargs)
        for _ in range(2):
            opt.step(closure)
        again, fresh = _problem(m, **kwargs)
        with m.no_grad():
            for p, q in zip(fresh._params, opt._params, strict=True):
                p.copy_(q)
        fresh.load_state_dict(_saved(m, opt.state_dict()))
        ours = [fresh.step(again) for _ in range(2)]
        theirs = [opt.step(closure) for _ in range(2)]
        same = all(
            np.array_equal(p.detach().numpy(), q.detach().numpy())
            for p, q in zip(fresh._params, opt._params, strict=True)
        )
        return same, ours, theirs, fresh.state_dict()

    check(fn)


def test_a_state_compat_saved_continues_in_torch_as_in_compat():
    kwargs = {"history_size": 3, "max_iter": 4}
    closure, opt = _problem(ct, **kwargs)
    for _ in range(2):
        opt.step(closure)
    buffer = io.BytesIO()
    ct.save(opt.state_dict(), buffer)
    buffer.seek(0)
    tclosure, topt = _problem(pt, **kwargs)
    with pt.no_grad():
        for p, q in zip(topt._params, opt._params, strict=True):
            p.copy_(pt.from_numpy(q.detach().numpy()))
    topt.load_state_dict(pt.load(buffer))
    assert len(topt.state_dict()["state"][0]["old_dirs"]) == 3
    for _ in range(2):
        topt.step(tclosure)
        opt.step(closure)
    for p, q in zip(topt._params, opt._params, strict=True):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-10)


def test_reading_the_state_between_steps_changes_no_iterate():
    def run(read):
        closure, opt = _problem(ct, history_size=3, max_iter=4)
        seen = []
        for _ in range(4):
            opt.step(closure)
            if read:
                state = opt.state[opt._params[0]]
                seen.append([a.item() for a in state["al"] if a is not None])
        return [p.detach().numpy() for p in opt._params], seen

    quiet, _ = run(False)
    read, seen = run(True)
    assert all(np.array_equal(a, b) for a, b in zip(quiet, read, strict=True))
    assert [len(al) for al in seen] == [3, 3, 3, 3]


def test_eagerly_a_pair_is_written_into_the_buffers_in_place():
    """Eagerly the buffers are the history's own, so a push hands them to the
    program that writes the pair (no copy of ``history_size`` rows a push)."""
    was = lazy.is_lazy()
    lazy.set_lazy(False)
    try:
        closure, opt = _problem(ct, history_size=8, max_iter=3)
        opt.step(closure)
        before = opt._history.dirs
        opt.step(closure)
        assert before.is_deleted()  # handed over, not copied
        assert not opt._history.dirs.is_deleted()
    finally:
        lazy.set_lazy(was)


def _steps(opt, closure, n, change=None):
    """``n`` steps, each one's loss or its error's type and words; ``change``
    (``{step: history_size}``) sets the group's history_size before that step."""
    out = []
    for i in range(n):
        if change and i in change:
            opt.param_groups[0]["history_size"] = change[i]
        try:
            out.append(float(opt.step(closure)))
        except IndexError as e:
            out.append(("IndexError", str(e)))
    return out


def _lengths(state):
    return [len(state.get(k) or []) for k in ("old_dirs", "old_stps", "ro", "al")]


@pytest.mark.parametrize(
    "change",
    [{2: 2}, {2: 3}, {2: 6}, {1: 6}],
    ids=["lowered_below_the_pairs", "lowered_to_the_pairs", "raised", "raised_early"],
)
def test_a_history_size_changed_between_steps_acts_as_torchs(change):
    # torch pops only at exactly history_size pairs and sizes al when it makes
    # it: a lowered size lets the lists grow, and pairs past al's end raise
    def fn(m):
        closure, opt = _problem(m, history_size=4, max_iter=3)
        losses = _steps(opt, closure, 6, change)
        state = opt.state[opt._params[0]]
        return losses, _lengths(state), list(opt._params), opt.state_dict()

    check(fn)


def test_the_changed_history_sizes_raise_as_torchs():
    def run(m, change):
        closure, opt = _problem(m, history_size=4, max_iter=3)
        return [r for r in _steps(opt, closure, 6, change) if type(r) is tuple]

    error = ("IndexError", "list assignment index out of range")
    for change in ({2: 2}, {2: 6}):
        assert run(pt, change) and set(run(pt, change)) == {error}
        assert run(ct, change) == run(pt, change)
    assert run(ct, {2: 3}) == run(pt, {2: 3}) == []


def test_a_state_held_across_steps_shows_each_steps_lists_as_torchs():
    def fn(m):
        closure, opt = _problem(m, history_size=3, max_iter=2)
        opt.step(closure)
        state = opt.state[opt._params[0]]  # held, never read through opt again
        dirs = state["old_dirs"]
        seen = []
        for _ in range(4):
            before = list(dirs)
            opt.step(closure)
            kept = [any(t is u for u in before) for t in state["old_dirs"]]
            seen.append((state["old_dirs"] is dirs, kept, _lengths(state)))
            seen.append([state[k] for k in ("old_dirs", "old_stps", "ro", "al")])
        return seen, state["n_iter"], state["d"]

    check(fn)


@pytest.mark.parametrize("edit", ["drop_oldest", "clear"])
def test_an_edit_of_the_held_lists_takes_effect_at_the_next_step_as_torchs(edit):
    def fn(m):
        closure, opt = _problem(m, history_size=4, max_iter=3)
        opt.step(closure)
        state = opt.state[opt._params[0]]
        opt.step(closure)
        for key in ("old_dirs", "old_stps", "ro"):
            if edit == "clear":
                state[key].clear()
            else:
                del state[key][0]
        losses = [float(opt.step(closure)) for _ in range(2)]
        return losses, list(opt._params), opt.state_dict()

    check(fn)
