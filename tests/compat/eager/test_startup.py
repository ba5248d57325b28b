"""compat's start-up: nothing compiled to build a network, and the first step's
backward and optimizer programs compiled ahead on a spare core (compat._eager._warm) --
the same programs, each compiled once, the same results."""

from __future__ import annotations

import contextlib
import logging
import re

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import nn
from jaxblitz.compat._eager import _warm
from tests.compat.modes import eager_only


@pytest.fixture
def warm(monkeypatch):
    """_warm as in a fresh process (active until a backward finishes), counting
    the warm-ups it starts."""
    monkeypatch.setattr(_warm, "_active", True)
    monkeypatch.setattr(_warm, "_seen", set())
    started = []
    submit = _warm.submit

    def counted(*args, **kwargs):
        future = submit(*args, **kwargs)
        started.append(future)
        return future

    monkeypatch.setattr(_warm, "submit", counted)
    return started


@contextlib.contextmanager
def compiles():
    """The names of the programs XLA compiles meanwhile, on any thread."""
    names: list[str] = []

    class Names(logging.Handler):
        def emit(self, record):
            found = re.search(r"Finished XLA compilation of (\S+)", record.getMessage())
            if found:
                names.append(found.group(1))

    handler, logger = Names(), logging.getLogger("jax")
    logger.addHandler(handler)
    before = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        yield names
    finally:
        jax.config.update("jax_log_compiles", before)
        logger.removeHandler(handler)


def test_building_a_network_compiles_nothing():
    """Layers draw their initial values on the host and hand them to JAX without
    a program per parameter shape (nor does nn.init), and the generator seeds
    and splits its key on the host: no program at all, even in a new process
    (test_the_generator_seeds_and_splits_as_jax_random_does_on_the_host)."""
    with compiles() as names:
        torch.manual_seed(5)
        net = nn.Sequential(
            nn.Conv2d(3, 7, 3), nn.Conv2d(7, 5, 2), nn.Flatten(), nn.Linear(45, 13)
        )
        nn.init.normal_(net[3].weight)
        nn.init.uniform_(net[0].bias, -0.5, 0.5)
    assert names == []
    assert net[0].weight.dtype == torch.float32 and net[0].weight.shape == (7, 3, 3, 3)


def test_a_new_process_compiles_nothing_to_import_seed_and_build():
    import os
    import subprocess
    import sys

    script = (
        "import jaxblitz.compat as torch, jaxblitz.compat.nn as nn\n"
        "torch.manual_seed(1)\n"
        "net = nn.Sequential(nn.Conv2d(3, 6, 5), nn.Linear(400, 120))\n"
        "print('built')\n"
    )
    env = dict(os.environ, JAX_LOG_COMPILES="1", JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert "built" in out.stdout
    assert "Finished XLA compilation" not in out.stderr, out.stderr


def first_step(sizes: tuple[int, int, int, int], seed: int = 0):
    """One SGD-momentum step of a small net, every shape set by ``sizes`` (inputs,
    hidden, classes, batch): (the backward and update programs compiled, by
    name, and the parameters after)."""
    n_in, hidden, classes, batch = sizes
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, classes))
    with compiles() as names:
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        x, y = torch.randn(batch, n_in), torch.arange(batch) % classes
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    programs = ("jit(_bwd_impl)", "jit(_update)", "jit(_update_shared)")
    wanted = sorted(n for n in names if n in programs)
    return wanted, [p.detach().numpy().copy() for p in net.parameters()]


@eager_only("the first step's warm-ups (compat/_eager/_warm.py) and per-op programs")
def test_first_step_warms_its_programs_once_with_the_same_result(warm):
    compiled_warm, params_warm = first_step((23, 9, 3, 5))
    assert not _warm.active()  # the first backward ended the warm-ups
    started = [f for f in warm if f is not None]
    # the optimizer's update, and a backward program per recorded op
    assert len(started) >= len(compiled_warm) >= 2
    assert all(f.done() and f.exception() is None for f in started)
    # the same net at shapes of its own, nothing warmed: the same programs
    # compiled as often, so each real call found its warmed program ready
    compiled_cold, _ = first_step((29, 11, 4, 6))
    assert compiled_warm == compiled_cold
    # (the update of states whose step counts are shared: optimizer.py)
    assert compiled_cold.count("jit(_update_shared)") == 1
    assert compiled_cold.count("jit(_bwd_impl)") >= 3
    # and the same shapes again, nothing warmed: the same numbers
    compiled_again, params_again = first_step((23, 9, 3, 5))
    assert compiled_again == []  # every program reused
    for a, b in zip(params_warm, params_again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_nothing_is_warmed_inside_torch_compile(warm):
    torch.manual_seed(0)
    net = nn.Linear(17, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    warm.clear()  # the constructor's own warm-up is fine: real arrays

    @torch.compile
    def step(x):
        opt.zero_grad()
        loss = net(x).square().sum()
        loss.backward()
        opt.step()
        return loss

    assert np.isfinite(step(torch.ones(3, 17)).item())
    assert [f for f in warm if f is not None] == []  # traced ops: no warm-up


def test_a_failing_warm_up_is_ignored(warm):
    def broken():
        raise ValueError("no such program")

    future = _warm.submit(broken)
    _warm.wait(future)  # does not raise: the real call raises instead
    assert isinstance(future.exception(), ValueError)


def test_a_waiting_thread_compiles_the_warm_ups_not_yet_started(warm):
    """While the spare core is busy, wait() runs its own warm-up itself, and
    while that one runs elsewhere, the oldest not started: both cores compile
    the first backward's last programs."""
    import concurrent.futures
    import threading

    started, busy, ran = threading.Event(), threading.Event(), {}

    def block():
        started.set()
        busy.wait(10)

    def record(name):
        return lambda: ran.setdefault(name, threading.current_thread().name)

    blocker = _warm.submit(block)
    assert started.wait(10)  # the spare core is inside it
    later = _warm.ahead(record("later"))  # for later steps: never taken
    older, newer = _warm.submit(record("older")), _warm.submit(record("newer"))
    here = threading.current_thread().name
    try:
        _warm.wait(newer)  # the spare core is blocked: this thread runs it
        assert ran == {"newer": here}
        assert not older.done()
        _warm.wait(older)
        assert ran == {"newer": here, "older": here}
    finally:
        busy.set()
    _warm.wait(blocker)
    assert blocker.done() and blocker.exception() is None
    concurrent.futures.wait([later], timeout=10)
    assert ran["later"] != here  # the spare core ran it


def test_no_warm_ups_once_done(warm):
    _warm.done()
    assert _warm.submit(lambda: None) is None
    x = torch.ones(3, 19, requires_grad=True)
    y = x * 2
    assert id(y.grad_fn) not in _warm.pending


@eager_only("the optimizer's own update program (jit(_update_shared))")
def test_a_second_optimizer_reuses_the_first_ones_update_program():
    """The Optax transform, a static argument of the update program, is shared
    by optimizers of one kind and static settings: a new optimizer (a notebook's
    re-run cell, another lr) compiles nothing new; a new static setting does."""

    def step(opt_kwargs):
        torch.manual_seed(0)
        net = nn.Linear(31, 7)
        opt = torch.optim.SGD(net.parameters(), **opt_kwargs)
        with compiles() as names:
            opt.zero_grad()
            net(torch.ones(2, 31)).sum().backward()
            opt.step()
        return names.count("jit(_update_shared)"), net.weight.detach().numpy().copy()

    step(dict(lr=0.1, momentum=0.9))
    again, w1 = step(dict(lr=0.1, momentum=0.9))
    other_lr, w2 = step(dict(lr=0.5, momentum=0.9))
    nesterov, _ = step(dict(lr=0.1, momentum=0.9, nesterov=True))
    assert (again, other_lr, nesterov) == (0, 0, 1)
    # the shared transform still steps with each optimizer's own lr
    torch.manual_seed(0)
    w0 = nn.Linear(31, 7).weight.detach().numpy()
    np.testing.assert_allclose(w0 - w2, 5 * (w0 - w1), rtol=1e-5)
