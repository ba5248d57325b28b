"""compat's fractional max pooling (``nn.FractionalMaxPool2d``/``3d``,
``F.fractional_max_pool2d``/``3d`` and their ``_with_indices`` forms) against
real PyTorch: with the same ``_random_samples`` the values, indices and
gradients are torch's exactly; without, compat draws the samples from its own
generator; errors in torch's words; a lazy call recorded without a sync."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(5)

# (rank, input shape, kernel_size, output_size, dtype, what to put in the input)
CASES = {
    "2d": (2, (2, 3, 7, 9), 3, (5, 7), "float32", None),
    "2d_rect_kernel": (2, (2, 3, 7, 9), (2, 3), (4, 5), "float32", None),
    "2d_unbatched": (2, (3, 10, 11), 2, (9, 3), "float32", None),
    "2d_one_output": (2, (2, 3, 7, 9), 3, (1, 1), "float32", None),
    "2d_kernel_one": (2, (2, 3, 7, 9), 1, (7, 9), "float32", None),
    "2d_float64": (2, (2, 3, 7, 9), 3, (5, 7), "float64", None),
    "2d_nans": (2, (2, 3, 8, 8), 2, (5, 5), "float32", "nan"),
    "2d_ties": (2, (2, 3, 8, 8), 2, (5, 5), "float32", "ties"),
    "2d_large": (2, (2, 3, 30, 31), 3, (17, 13), "float32", None),
    "3d": (3, (2, 3, 5, 6, 7), 2, (3, 4, 5), "float32", None),
    "3d_unbatched_rect": (3, (3, 5, 6, 7), (1, 2, 3), (4, 4, 4), "float32", None),
    "3d_float64": (3, (2, 2, 9, 8, 7), 2, (5, 6, 4), "float64", None),
    "3d_nans": (3, (2, 2, 6, 6, 6), 2, (3, 3, 3), "float32", "nan"),
}


def _data(case):
    n, shape, _, _, dtype, fill = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    x = rng.standard_normal(shape).astype(dtype)
    if fill == "ties":
        x = np.round(x)
    if fill == "nan":
        x[rng.random(shape) < 0.2] = np.nan
    batch = 1 if len(shape) == n + 1 else shape[0]
    # one sample row more than the batch: torch reads the first ones
    samples = rng.random((batch + 1, shape[-n - 1], n)).astype(dtype)
    return x, samples


def _pooled(m, case):
    n, _, kernel, out, _, _ = CASES[case]
    x_np, samples = _data(case)
    pool = getattr(m.nn.functional, f"fractional_max_pool{n}d")
    x = m.tensor(x_np, requires_grad=True)
    values, indices = pool(
        x, kernel, out, return_indices=True, _random_samples=m.tensor(samples)
    )
    weights = m.tensor(np.arange(values.numel()).reshape(values.shape)).to(x.dtype)
    (values.nan_to_num() * weights).sum().backward()
    return (
        values.detach().numpy(),
        indices.numpy(),
        x.grad.numpy(),
        type(values.grad_fn).__name__,
    )


@pytest.mark.parametrize("case", CASES)
def test_fractional_max_pool_equals_torchs_for_the_same_samples(case):
    theirs, ours = _pooled(pt, case), _pooled(ct, case)
    np.testing.assert_array_equal(ours[0], theirs[0])  # values (NaN where torch's)
    assert ours[1].dtype == theirs[1].dtype == np.int64
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_array_equal(ours[2], theirs[2])  # the gradient scattered
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fractional_max_pool_in_half_precision_equals_torchs(dtype):
    # the windows are computed in the input's dtype, rounded as ATen's are
    x = RNG.standard_normal((2, 3, 40, 37)).astype(np.float32)
    samples = RNG.random((2, 3, 2)).astype(np.float32)

    def fn(m):
        d = getattr(m, dtype)
        values, indices = m.nn.functional.fractional_max_pool2d_with_indices(
            m.tensor(x).to(d),
            3,
            (19, 23),
            _random_samples=m.tensor(samples).to(d),
        )
        return values.float().numpy(), indices.numpy()

    theirs, ours = fn(pt), fn(ct)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("n", [2, 3])
def test_output_ratio_and_modules_follow_torch(n):
    shape = (2, 3, 9, 11) if n == 2 else (2, 3, 7, 8, 9)
    x = RNG.standard_normal(shape).astype(np.float32)
    samples = RNG.random((2, 3, n)).astype(np.float32)

    def fn(m):
        layer = getattr(m.nn, f"FractionalMaxPool{n}d")
        pool = layer(
            2,
            output_ratio=0.6,
            return_indices=True,
            _random_samples=m.tensor(samples),
        )
        values, indices = pool(m.tensor(x))
        functional = getattr(m.nn.functional, f"fractional_max_pool{n}d")
        ratio = (0.5, 0.7, 0.6)[:n]
        alone = functional(
            m.tensor(x), 2, output_ratio=ratio, _random_samples=m.tensor(samples)
        )
        return values, indices, alone, repr(pool), pool.state_dict(), pool.kernel_size

    check(fn)


@pytest.mark.parametrize("n", [2, 3])
def test_without_samples_compat_draws_them_from_its_generator(n):
    shape = (2, 3, 9, 10) if n == 2 else (2, 3, 6, 7, 8)
    x = ct.tensor(RNG.standard_normal(shape).astype(np.float32))
    pool = getattr(ct.nn.functional, f"fractional_max_pool{n}d")
    out = (4, 5, 6)[:n]
    ct.manual_seed(3)
    values, indices = pool(x, 2, out, return_indices=True)
    ct.manual_seed(3)
    drawn = ct.rand(2, 3, n)  # torch's draw: (N, C, n) in [0, 1), input's dtype
    again = pool(x, 2, out, return_indices=True, _random_samples=drawn)
    assert values.shape == (2, 3, *out) and indices.dtype == ct.int64
    np.testing.assert_array_equal(values.numpy(), again[0].numpy())
    np.testing.assert_array_equal(indices.numpy(), again[1].numpy())
    # each value is the input's at its index, inside the plane
    planes = x.numpy().reshape(2, 3, -1)
    flat = indices.numpy().reshape(2, 3, -1)
    assert ((flat >= 0) & (flat < planes.shape[-1])).all()
    picked = np.take_along_axis(planes, flat, -1)
    np.testing.assert_array_equal(picked, values.numpy().reshape(2, 3, -1))
    # another draw places other windows
    ct.manual_seed(4)
    assert not np.array_equal(pool(x, 2, out).numpy(), values.numpy())


def test_an_unbatched_input_draws_one_row_of_samples():
    ct.manual_seed(0)
    x = ct.tensor(RNG.standard_normal((3, 9, 10)).astype(np.float32))
    values = ct.nn.functional.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5))
    ct.manual_seed(0)
    samples = ct.rand(1, 3, 2)
    again = ct.nn.functional.fractional_max_pool2d(
        x, 3, output_ratio=(0.5, 0.5), _random_samples=samples
    )
    assert values.shape == (3, 4, 5)
    np.testing.assert_array_equal(values.numpy(), again.numpy())


def test_an_empty_pool_gives_minus_infinity_at_each_windows_start_as_torch():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)

    def fn(m):
        pool = m.nn.functional.fractional_max_pool2d_with_indices
        kept = {"_random_samples": m.full((1, 2, 2), 0.5)}
        return pool(m.tensor(x), 0, 2, **kept), pool(m.tensor(x), (2, -1), 2, **kept)

    check(fn)


def _s3(s):
    """(1, 2, 3) samples from (2, 3, 2) ones."""
    return s[:1, :2].repeat(1, 1, 2)[..., :3]


ERRORS = {
    "neither": lambda f, x, s: f.fractional_max_pool2d(x, 3),
    "ratio_of_three": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, output_ratio=(0.5, 0.5, 0.5)
    ),
    "ratio_float": lambda f, x, s: f.fractional_max_pool2d(x, 3, output_ratio=0.5),
    "ratio_short_3d": lambda f, x, s: f.fractional_max_pool3d(
        x[None], 2, output_ratio=(0.5, 0.5)
    ),
    "kernel_of_three": lambda f, x, s: f.fractional_max_pool2d(
        x, (3, 2, 1), 5, _random_samples=s
    ),
    "kernel_of_one": lambda f, x, s: f.fractional_max_pool2d(
        x, [3], 5, _random_samples=s
    ),
    "kernel_float": lambda f, x, s: f.fractional_max_pool2d(
        x, 3.0, 5, _random_samples=s
    ),
    "kernel_of_three_output_float": lambda f, x, s: f.fractional_max_pool2d(
        x, (3, 2, 1), 5.0, _random_samples=s
    ),
    "output_of_three": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, (5, 5, 1), _random_samples=s
    ),
    "output_float": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5.0, _random_samples=s
    ),
    "pool_height": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, (6, 7), _random_samples=s
    ),
    "pool_width": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, (5, 8), _random_samples=s
    ),
    "negative_output": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, (2, -1), _random_samples=s
    ),
    "2d_input": lambda f, x, s: f.fractional_max_pool2d(
        x[0, 0], 3, 5, _random_samples=s
    ),
    "2d_input_drawing": lambda f, x, s: f.fractional_max_pool2d(x[0, 0], 3, 5),
    "empty_channels": lambda f, x, s: f.fractional_max_pool2d(
        x[:, :0], 3, 5, _random_samples=s
    ),
    "samples_dtype": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5, _random_samples=s.double()
    ),
    "samples_rank": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5, _random_samples=s[0]
    ),
    "samples_batch": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5, _random_samples=s[:1]
    ),
    "samples_channels": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5, _random_samples=s[:, :2]
    ),
    "samples_width": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5, _random_samples=s.repeat(1, 1, 2)[..., :3]
    ),
    "samples_list": lambda f, x, s: f.fractional_max_pool2d(
        x, 3, 5, _random_samples=[1.0]
    ),
    "integer_input": lambda f, x, s: f.fractional_max_pool2d(
        x.long(), 3, 5, _random_samples=s.long()
    ),
    "integer_input_drawing": lambda f, x, s: f.fractional_max_pool2d(x.long(), 3, 5),
    # x[None]: (1, 2, 3, 7, 9), two channels of 3 x 7 x 9; s3 its samples
    "3d_pool_time": lambda f, x, s: f.fractional_max_pool3d(
        x[None], 2, (2, 3, 3), _random_samples=_s3(s)
    ),
    "3d_pool_width_before_height": lambda f, x, s: f.fractional_max_pool3d(
        x[None], 2, (1, 7, 9), _random_samples=_s3(s)
    ),
    "3d_kernel_of_two": lambda f, x, s: f.fractional_max_pool3d(
        x[None], (2, 2), 1, _random_samples=_s3(s)
    ),
    "3d_input_rank": lambda f, x, s: f.fractional_max_pool3d(
        x[0], 1, 1, _random_samples=_s3(s)
    ),
    "3d_samples_width": lambda f, x, s: f.fractional_max_pool3d(
        x[None], 1, 1, _random_samples=s[:1, :2]
    ),
    "3d_integer": lambda f, x, s: f.fractional_max_pool3d(
        x[None].long(), 1, 1, _random_samples=_s3(s).long()
    ),
}


@pytest.mark.parametrize("case", ERRORS)
def test_bad_fractional_max_pool_arguments_raise_torchs_errors(case):
    x = RNG.standard_normal((2, 3, 7, 9)).astype(np.float32)
    s = RNG.random((2, 3, 2)).astype(np.float32)
    check(lambda m: ERRORS[case](m.nn.functional, m.tensor(x), m.tensor(s)))


MODULE_ERRORS = {
    "neither": lambda nn: nn.FractionalMaxPool2d(3),
    "both": lambda nn: nn.FractionalMaxPool2d(3, output_size=2, output_ratio=0.5),
    "ratio_one": lambda nn: nn.FractionalMaxPool2d(3, output_ratio=1.0),
    "3d_neither": lambda nn: nn.FractionalMaxPool3d(2),
    "3d_kernel_zero": lambda nn: nn.FractionalMaxPool3d(0, output_ratio=0.5),
    "3d_kernel_has_zero": lambda nn: nn.FractionalMaxPool3d((2, 0, 1), output_size=2),
    "3d_ratio": lambda nn: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1, 0.5)),
}


@pytest.mark.parametrize("case", MODULE_ERRORS)
def test_bad_fractional_max_pool_modules_raise_torchs_errors(case):
    check(lambda m: MODULE_ERRORS[case](m.nn))


def test_fractional_max_pool_runs_in_float32_under_cpu_autocast_as_torch():
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    s = RNG.random((2, 3, 2)).astype(np.float32)

    def fn(m):
        low = m.tensor(x).to(m.bfloat16)
        with m.autocast("cpu", dtype=m.bfloat16):
            return m.nn.functional.fractional_max_pool2d(
                low,
                2,
                5,
                return_indices=True,
                _random_samples=m.tensor(s).to(m.bfloat16),
            )

    check(fn)


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


def test_a_lazy_fractional_max_pool_records_without_a_sync_and_equals_eager(
    lazily, monkeypatch
):
    from jaxblitz.compat import lazy

    x_np = RNG.standard_normal((2, 3, 9, 9)).astype(np.float32)
    s_np = RNG.random((2, 3, 2)).astype(np.float32)
    syncs = _count_syncs(monkeypatch, lazy)

    def run():
        x = ct.tensor(x_np, requires_grad=True)
        samples = ct.tensor(s_np) * 1  # computed: pending, lazily
        values, indices = ct.nn.functional.fractional_max_pool2d(
            x * 2, 3, 6, return_indices=True, _random_samples=samples
        )
        pending = lazy.pending(values._s.pending), lazy.pending(indices._s.pending)
        ran = len(syncs)
        values.sum().backward()
        return ran, pending, values.detach().numpy(), indices.numpy(), x.grad.numpy()

    ran, pending, *lazily_done = run()
    assert ran == 0 and all(pending)
    lazy.set_lazy(False)
    try:
        _, _, *eagerly_done = run()
    finally:
        lazy.set_lazy(True)
    for a, b in zip(lazily_done, eagerly_done, strict=True):
        np.testing.assert_array_equal(a, b)
