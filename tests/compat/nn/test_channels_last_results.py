"""conv2d, batch_norm and the 2-d pools of a channels-last input (or, for
conv2d, weight) against real PyTorch: the result is channels-last too, read
through ``stride()`` and ``is_contiguous(memory_format=...)``, with the same
values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)

CALLS = {
    "conv2d": lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1),
    "conv2d_cl_weight": lambda t, x, w: t.nn.functional.conv2d(
        x.contiguous(), w.contiguous(memory_format=t.channels_last)
    ),
    "batch_norm_train": lambda t, x, w: t.nn.functional.batch_norm(
        x, None, None, training=True
    ),
    "batch_norm_eval": lambda t, x, w: t.nn.functional.batch_norm(
        x, t.zeros(3), t.ones(3)
    ),
    "max_pool2d": lambda t, x, w: t.nn.functional.max_pool2d(x, 2),
    "max_pool2d_indices": lambda t, x, w: t.nn.functional.max_pool2d(
        x, 2, return_indices=True
    )[1],
    "avg_pool2d": lambda t, x, w: t.nn.functional.avg_pool2d(x, 3, 1),
    "row_major_input": lambda t, x, w: t.nn.functional.max_pool2d(x.contiguous(), 2),
}


def _run(t, name):
    x = t.tensor(X).contiguous(memory_format=t.channels_last).requires_grad_()
    w = t.tensor(W).requires_grad_()
    out = CALLS[name](t, x, w)
    if out.dtype.is_floating_point:
        (out * t.arange(out.numel()).reshape(out.shape)).sum().backward()
    return out, x.grad


@pytest.mark.parametrize("name", list(CALLS))
def test_channels_last_input_gives_a_channels_last_result_as_torch(name):
    (want, want_grad), (got, got_grad) = _run(torch, name), _run(compat, name)
    assert got.stride() == want.stride()
    assert got.is_contiguous() == want.is_contiguous()
    cl = got.is_contiguous(memory_format=compat.channels_last)
    assert cl == want.is_contiguous(memory_format=torch.channels_last)
    np.testing.assert_allclose(
        got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5
    )
    if want_grad is not None:
        np.testing.assert_allclose(
            got_grad.numpy(), want_grad.numpy(), rtol=1e-4, atol=1e-3
        )


def test_a_channels_last_conv_result_cannot_be_viewed_flat_as_torchs():
    for t in (torch, compat):
        x = t.tensor(X).contiguous(memory_format=t.channels_last)
        out = t.nn.Conv2d(3, 4, 3)(x)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            out.view(-1)
        assert out.reshape(-1).shape == (2 * 4 * 4 * 4,)
