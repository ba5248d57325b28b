"""compat's window functions (torch.hann_window ... kaiser_window and
torch.signal.windows) against PyTorch: values, dtypes, requires_grad and
errors."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

WINDOWS = ["hann", "hamming", "blackman", "bartlett", "kaiser"]


def _close(theirs, ours, exact=False):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.requires_grad == theirs.requires_grad
    want = theirs.detach().double().numpy()
    got = np.asarray(ours.detach().double().tolist(), np.float64).reshape(want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:  # float32's cos and i0 may differ from torch's (SLEEF) in the last bit
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=3e-7)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8, 33])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name, length, periodic, dtype):
    def make(T):
        fn = getattr(T, f"{name}_window")
        return fn(length, periodic, dtype=getattr(T, dtype))

    _close(make(torch), make(c))


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_windows_round_each_step_as_torch(name, dtype):
    def make(T):
        return getattr(T, f"{name}_window")(33, dtype=getattr(T, dtype))

    _close(make(torch), make(c), exact=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.hamming_window(7, True, 0.5, 0.25),
        lambda T: T.hamming_window(6, False, 0.6),
        lambda T: T.kaiser_window(9, False, 3.5),
        lambda T: T.kaiser_window(8, True, 0.0, dtype=T.float64),
        lambda T: T.hamming_window(5, periodic=False, alpha=0.5),
        lambda T: T.kaiser_window(6, False, beta=3.0),
        lambda T: T.hann_window(4, requires_grad=True),
        lambda T: T.bartlett_window(1, requires_grad=True),
    ],
)
def test_window_parameters_match_torch(call):
    _close(call(torch), call(c))


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize(
    "call",
    [
        lambda T, f: f(-1),
        lambda T, f: f(3, dtype=T.int64),
        lambda T, f: f(2.5),
        lambda T, f: f(5, alpha=0.5) if f.__name__ == "hamming_window" else f(-1),
        lambda T, f: f(5, beta=3.0) if f.__name__ == "kaiser_window" else f(-1),
    ],
)
def test_bad_window_arguments_raise_torch_errors(name, call):
    with pytest.raises(Exception) as theirs:
        call(torch, getattr(torch, f"{name}_window"))
    with pytest.raises(theirs.type) as ours:
        call(c, getattr(c, f"{name}_window"))
    first = str(theirs.value).split(" - got")[0]
    assert str(ours.value).startswith(first)


SIGNAL = ["bartlett", "blackman", "cosine", "exponential", "gaussian",
          "general_hamming", "hamming", "hann", "kaiser", "nuttall"]  # fmt: skip


@pytest.mark.parametrize("name", SIGNAL)
@pytest.mark.parametrize("length", [0, 1, 6, 7])
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows_match_torch(name, length, sym):
    def make(T):
        return getattr(T.signal.windows, name)(length, sym=sym)

    _close(make(torch), make(c))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.signal.windows.general_cosine(8, a=[0.5, 0.3, 0.2]),
        lambda T: T.signal.windows.gaussian(9, std=2.5, dtype=T.float64),
        lambda T: T.signal.windows.exponential(8, sym=False, center=2.0, tau=3.0),
        lambda T: T.signal.windows.kaiser(6, beta=2.0, requires_grad=True),
    ],
)
def test_signal_window_parameters_match_torch(call):
    _close(call(torch), call(c))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.signal.windows.hann(-1),
        lambda T: T.signal.windows.hann(3, dtype=T.float16),
        lambda T: T.signal.windows.gaussian(3, std=0.0),
        lambda T: T.signal.windows.exponential(3, center=1.0),
        lambda T: T.signal.windows.kaiser(3, beta=-1.0),
        lambda T: T.signal.windows.general_cosine(3, a=[]),
    ],
)
def test_bad_signal_window_arguments_raise_torch_errors(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    assert str(ours.value) == str(theirs.value)
