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
