"""compat's nn.PixelShuffle / PixelUnshuffle and F.pixel_shuffle / pixel_unshuffle
against real PyTorch: values, gradients, shapes, dtypes and PyTorch's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

SHAPES = {
    "unbatched": ((8, 2, 3), 2),
    "batched": ((2, 18, 2, 1), 3),
    "two_batch_dims": ((3, 2, 4, 1, 2), 2),
    "factor_one": ((2, 3, 2, 2), 1),
}


@pytest.mark.parametrize("case", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("name", ["pixel_shuffle", "pixel_unshuffle"])
def test_pixel_shuffle_matches_torch_in_values_and_gradients(name, case):
    shape, r = case
    if name == "pixel_unshuffle":  # the shuffled shape, unshuffled back
        shape = torch.nn.functional.pixel_shuffle(torch.zeros(shape), r).shape
    a = np.random.default_rng(0).standard_normal(tuple(shape)).astype(np.float32)
    x, tx = compat.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out = getattr(compat.nn.functional, name)(x, r)
    expected = getattr(torch.nn.functional, name)(tx, r)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    assert out.grad_fn.name() == expected.grad_fn.name()
    g = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(compat.tensor(g.astype(np.float32)))
    expected.backward(torch.tensor(g.astype(np.float32)))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_pixel_modules_round_trip_integers_and_print_as_torch():
    x = compat.arange(2 * 8 * 2 * 2).reshape(2, 8, 2, 2)
    shuffle, unshuffle = compat.nn.PixelShuffle(2), compat.nn.PixelUnshuffle(2)
    up = shuffle(x)
    expected = torch.nn.PixelShuffle(2)(torch.arange(64).reshape(2, 8, 2, 2))
    assert up.dtype == compat.int64
    np.testing.assert_array_equal(up.numpy(), expected.numpy())
    np.testing.assert_array_equal(unshuffle(up).numpy(), x.numpy())
    assert repr(shuffle) == repr(torch.nn.PixelShuffle(2))
    assert repr(unshuffle) == repr(torch.nn.PixelUnshuffle(2))


BAD = {
    "channels": lambda F, lib: F.pixel_shuffle(lib.zeros(2, 8, 3, 3), 3),
    "shuffle_2d": lambda F, lib: F.pixel_shuffle(lib.zeros(8, 3), 2),
    "shuffle_zero": lambda F, lib: F.pixel_shuffle(lib.zeros(2, 8, 3, 3), 0),
    "shuffle_float": lambda F, lib: F.pixel_shuffle(lib.zeros(2, 8, 3, 3), 2.0),
    "height": lambda F, lib: F.pixel_unshuffle(lib.zeros(1, 8, 3, 4), 2),
    "width": lambda F, lib: F.pixel_unshuffle(lib.zeros(1, 8, 4, 3), 2),
    "unshuffle_2d": lambda F, lib: F.pixel_unshuffle(lib.zeros(8, 3), 2),
    "unshuffle_negative": lambda F, lib: F.pixel_unshuffle(lib.zeros(1, 2, 2), -1),
}


@pytest.mark.parametrize("call", BAD.values(), ids=BAD.keys())
def test_bad_pixel_shuffle_is_refused_in_torchs_words(call):
    with pytest.raises(Exception) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        call(compat.nn.functional, compat)
