"""Where XLA would round otherwise, compat makes torch's CPU bits: arange and
linspace's float points (so a sampling grid on pixel centres, a positional
encoding are too), a division by a broadcast divisor; and torch's thread-count
functions."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

RANGES = [
    (0, 1, 0.1),
    (-3.3, 7.1, 0.37),
    (0, 10, 0.001),
    (5, -3, -0.7),
    (1.7, 50, 0.013),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arange_makes_torchs_points_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    ranges = list(RANGES)
    for _ in range(10):
        start, step = rng.uniform(-100, 100), rng.choice([-1, 1]) * rng.uniform(1e-3, 3)
        ranges.append((float(start), float(start + step * rng.integers(1, 3000)), step))
    ranges.append((0.0, 70000.0, 1.3))  # long enough to be shared among threads
    for args in ranges:
        want = torch.arange(*args, dtype=getattr(torch, dtype)).numpy()
        got = compat.arange(*args, dtype=getattr(compat, dtype)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str(args))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_makes_torchs_points_bit_for_bit(dtype):
    rng = np.random.default_rng(1)
    for _ in range(20):
        start, end = (float(v) for v in rng.uniform(-100, 100, 2))
        steps = int(rng.integers(0, 3000))
        want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        got = compat.linspace(start, end, steps, dtype=getattr(compat, dtype)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str((start, end, steps)))


@pytest.mark.parametrize("align_corners", [False, True])
def test_an_identity_grid_samples_pixel_centres_as_torch_and_so_its_gradient(
    align_corners,
):
    """Samples on pixel centres sit on bilinear's kinks: a grid an ulp away
    takes the other side's slope (the spatial transformer tutorial starts
    from the identity)."""
    x = np.random.default_rng(0).standard_normal((2, 1, 7, 9)).astype(np.float32)
    eye = np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    grads = []
    for lib in (torch, compat):
        theta = lib.tensor(eye, requires_grad=True)
        grid = lib.nn.functional.affine_grid(
            theta, (2, 1, 7, 9), align_corners=align_corners
        )
        out = lib.nn.functional.grid_sample(
            lib.tensor(x), grid, align_corners=align_corners
        )
        out.sum().backward()
        grads.append((grid.detach().numpy(), theta.grad.numpy()))
    np.testing.assert_array_equal(grads[1][0], grads[0][0])
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-5)


def test_thread_counts_are_kept_and_checked_as_torchs():
    was = compat.get_num_threads()
    assert was >= 1
    try:
        compat.set_num_threads(3)
        assert compat.get_num_threads() == 3
        for bad, message in ((0, "expects a positive integer"), (1.5, "but got float")):
            with pytest.raises(RuntimeError, match=message):
                compat.set_num_threads(bad)
        with pytest.raises(RuntimeError, match="but got bool"):
            compat.set_num_threads(True)
    finally:
        compat.set_num_threads(was)
    assert compat.get_num_interop_threads() >= 1


def test_division_by_a_scalar_or_a_row_rounds_as_torchs():
    """XLA turns ``x / c`` into ``x * (1 / c)``, two roundings; torch's CPU
    kernel divides."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 50)).astype(np.float32)
    r = rng.standard_normal((64, 1)).astype(np.float32) + 3
    for f in (
        lambda lib, x, y: x / 7,
        lambda lib, x, y: x / 255.0,
        lambda lib, x, y: x / y,
        lambda lib, x, y: x.clone().div_(7.0),
    ):
        want = f(torch, torch.tensor(a), torch.tensor(r)).numpy()
        got = f(compat, compat.tensor(a), compat.tensor(r)).numpy()
        np.testing.assert_array_equal(got, want)
    assert (compat.arange(2000.0) / 7)[350].item() == 50.0


@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_a_mean_divides_its_sum_by_the_count_as_torchs(dtype, mode, request):
    """jnp.mean divides by the count as a constant, which XLA multiplies by
    its reciprocal: the mean of twelve episode lengths summing to 160 came out
    an ulp above torch's 160 / 12. Whole numbers: the sums are exact, so only
    the division's rounding is compared."""
    request.getfixturevalue(mode)
    rng = np.random.default_rng(3)
    a = rng.integers(0, 30, size=(7, 12, 9)).astype(np.float32)
    cases = (
        lambda x: x.mean(),
        lambda x: x.mean(1),
        lambda x: x.mean((0, 2), keepdim=True),
        lambda x: x[0, :, 0].mean(),
    )
    for f in cases:
        want = f(torch.tensor(a, dtype=getattr(torch, dtype))).float().numpy()
        got = f(compat.tensor(a, dtype=getattr(compat, dtype))).float().numpy()
        np.testing.assert_array_equal(got, want)
    episodes = [16.0, 12, 9, 14, 11, 10, 11, 28, 12, 9, 17, 11]
    assert compat.tensor(episodes).mean().item() == torch.tensor(episodes).mean().item()


@pytest.fixture
def pool(monkeypatch):
    """compat's record of XLA's pool, fresh, with JAX's start-up faked: the calls
    ``set_cpu_threads`` gets; ``started`` makes it raise as once JAX runs."""
    from jaxblitz import runtime
    from jaxblitz.compat import _threads

    state = {"calls": [], "started": False}

    def set_cpu_threads(n):
        if state["started"]:
            raise RuntimeError("set_cpu_threads must run before JAX starts")
        state["calls"].append(n)
        state["started"] = True
        return n < 2

    monkeypatch.setattr(runtime, "set_cpu_threads", set_cpu_threads)
    monkeypatch.setattr(runtime, "accelerator_installed", lambda: False)
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(_threads, "_pool", {"size": None, "warned": False})
    monkeypatch.setattr(_threads, "_numbers", {"intra": None, "interop": None})
    return state


def test_set_num_threads_before_jax_starts_sizes_xlas_pool(pool, recwarn):
    compat.set_num_threads(1)
    compat.set_num_threads(1)  # the pool has that size already
    assert pool["calls"] == [1]
    assert compat.get_num_threads() == 1
    assert not recwarn.list


def test_set_num_threads_after_jax_started_warns_once_that_the_pool_keeps_its_size(
    pool,
):
    pool["started"] = True
    with pytest.warns(UserWarning, match=r"set_num_threads\(1\) came after JAX"):
        compat.set_num_threads(1)
    assert compat.get_num_threads() == 1  # kept all the same, as torch reads it
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.set_num_threads(1)  # said once


def test_set_num_threads_cannot_grow_a_pool_it_sized(pool):
    compat.set_num_threads(1)
    with pytest.warns(UserWarning, match="keeps its 1 thread\\."):
        compat.set_num_threads(2)


def test_set_num_threads_leaves_the_pool_alone_where_an_accelerator_may_start(
    pool, monkeypatch, recwarn
):
    from jaxblitz import runtime

    monkeypatch.setattr(runtime, "accelerator_installed", lambda: True)
    compat.set_num_threads(1)
    assert pool["calls"] == [] and not recwarn.list
    assert compat.get_num_threads() == 1


def test_set_num_threads_at_or_above_the_cores_keeps_jaxs_own_pool(pool, recwarn):
    pool["started"] = True
    compat.set_num_threads(2)
    compat.set_num_threads(8)  # torch would run 8; XLA's pool has every core
    assert pool["calls"] == [] and not recwarn.list


def test_set_num_threads_first_in_a_script_gives_xla_fewer_threads():
    """In a fresh process: XLA's pool starts with one thread, not one per core
    (its threads counted by name, as XLA:CPU names them)."""
    import os
    import subprocess
    import sys

    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs sched_setaffinity and two cores")
    code = """
import os, sys
import jaxblitz.compat as torch
if sys.argv[1] == "1":
    torch.set_num_threads(1)
x = torch.ones(64, 64) @ torch.ones(64, 64)
tasks = os.listdir("/proc/self/task")
names = [open(f"/proc/self/task/{t}/comm").read() for t in tasks]
print(float(x.sum()), sum("xla" in name.lower() for name in names))
"""
    counts = []
    for arg in ("1", "default"):
        out = subprocess.run(
            [sys.executable, "-c", code, arg],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        value, threads = out.stdout.split()
        assert value == str(64.0**3)
        counts.append(int(threads))
    if not counts[1]:
        pytest.skip("XLA's pool threads are not named here")
    assert counts[0] < counts[1]
