"""compat's shortcuts through JAX's private API, checked against the public ways:
the host-to-device transfer (``jax.device_put``'s, array for array) and the x64
switch around one call (``jax.enable_x64``'s)."""

import jax
import ml_dtypes
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.tensor import _dtype, _tensor_base, _transfer

DTYPES = [
    np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int64, np.int32,
    np.int16, np.int8, np.uint8, np.bool_, np.complex64,
]  # fmt: skip


def test_the_direct_path_is_taken():
    # the private API is there in the JAX this project installs: a change to it
    # shows here, not as a silent fallback to the slower public path
    assert _transfer._batched is not None
    assert _transfer.put(np.zeros(3, np.float32)) is not None


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (1, 128)])
def test_put_is_device_put(dt, shape):
    n = (np.arange(int(np.prod(shape))) % 7).reshape(shape).astype(dt)
    with _dtype.x64(True):
        want = jax.device_put(n)
    got = _transfer.put(n)
    assert got.aval == want.aval and got.weak_type == want.weak_type
    assert got.committed is False and got.sharding == want.sharding
    assert got.dtype == n.dtype  # x64 dtypes kept, whatever the x64 flag
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # and programs take it as they take device_put's
    with _dtype.x64(True):
        add = jax.jit(lambda x: x + x)
        np.testing.assert_array_equal(np.asarray(add(got)), np.asarray(add(want)))


def test_a_strided_array_arrives_whole():
    n = np.arange(12.0).reshape(3, 4).T
    np.testing.assert_array_equal(np.asarray(_transfer.put(n)), n)


def test_from_host_follows_the_default_device():
    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        got = _tensor_base.from_host(np.ones(2, np.float32))
    assert got.devices() == {cpu} and not got.committed


def test_tensors_made_on_the_host_compute_as_before():
    # zeros/ones/full and torch.tensor go through it; their values and an op on them
    z = torch.zeros(1, 128)
    t = torch.tensor([[1.5, -2.0]], dtype=torch.float64)
    assert z.dtype == torch.float32 and t.dtype == torch.float64
    assert float((z + 1).sum()) == 128.0
    assert (t * 2).tolist() == [[3.0, -4.0]]


def _flag():
    return jax.config.jax_enable_x64


@pytest.mark.parametrize("before", [False, True])
def test_call_x64_switches_the_flag_for_the_call_alone(before):
    # the by-hand switch is what this JAX offers (a change shows here, not as a
    # silent fallback to the slower context manager)
    assert _dtype._X64_BY_HAND
    with jax.enable_x64(before):
        assert _dtype.call_x64(_flag) is True
        assert _flag() is before

        def boom():
            raise ValueError("inside")

        with pytest.raises(ValueError, match="inside"):
            _dtype.call_x64(boom)
        assert _flag() is before  # restored after an error too
        # and a 64-bit value made inside keeps its dtype
        made = _dtype.call_x64(lambda: jax.numpy.arange(3, dtype=np.int64))
        assert made.dtype == np.int64
