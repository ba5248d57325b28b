"""New tensors asked for in a memory format, against real PyTorch: ``empty``,
the ``*_like`` factories (whose default, preserve, keeps a dense source's
strides) and ``to(dtype)``, read through ``stride()`` and
``is_contiguous(memory_format=...)``; the values are unaffected."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _sources(t):
    x = t.tensor(np.arange(120.0, dtype=np.float32).reshape(2, 3, 4, 5))
    return {
        "contiguous": x,
        "channels_last": x.contiguous(memory_format=t.channels_last),
        "transposed": x.transpose(1, 3),
        "permuted": x.permute(0, 2, 3, 1),
        "sliced": x[:, :, ::2],  # not dense: a row-major result
    }


CALLS = {
    "empty_cl": lambda t, x: t.empty(2, 3, 4, 5, memory_format=t.channels_last),
    "empty_cl3d": lambda t, x: t.empty(
        (2, 3, 4, 5, 6), memory_format=t.channels_last_3d
    ),
    "empty_contiguous": lambda t, x: t.empty(
        2, 3, 4, 5, memory_format=t.contiguous_format
    ),
    "empty_like": lambda t, x: t.empty_like(x),
    "zeros_like": lambda t, x: t.zeros_like(x),
    "ones_like_cl": lambda t, x: t.ones_like(x, memory_format=t.channels_last),
    "rand_like_contiguous": lambda t, x: t.rand_like(
        x, memory_format=t.contiguous_format
    ),
    "randn_like": lambda t, x: t.randn_like(x),
    "full_like": lambda t, x: t.full_like(x, 2.0),
    "randint_like": lambda t, x: t.randint_like(x, 5),
    "to_float64": lambda t, x: x.to(t.float64),
    "double": lambda t, x: x.double(),
    "to_float64_cl": lambda t, x: x.to(t.float64, memory_format=t.channels_last),
    "clone": lambda t, x: x.clone(),
}
REFUSED = {
    "empty_preserve": lambda t: t.empty(2, 3, memory_format=t.preserve_format),
    "empty_cl_rank_3": lambda t: t.empty(2, 3, 4, memory_format=t.channels_last),
    "zeros_like_cl_rank_3": lambda t: t.zeros_like(
        t.zeros(2, 3, 4), memory_format=t.channels_last
    ),
}


def _described(t, r):
    return (
        tuple(r.shape),
        r.stride(),
        r.is_contiguous(),
        r.is_contiguous(memory_format=t.channels_last) if r.dim() == 4 else None,
        str(r.dtype),
    )


@pytest.mark.parametrize("source", list(_sources(torch)))
@pytest.mark.parametrize("name", list(CALLS))
def test_new_tensor_in_a_memory_format_has_torchs_strides(name, source):
    want = CALLS[name](torch, _sources(torch)[source])
    got = CALLS[name](compat, _sources(compat)[source])
    assert _described(compat, got) == _described(torch, want)
    if name in ("zeros_like", "full_like", "to_float64", "double", "clone"):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_memory_format_refusals_are_torchs(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(compat)
    assert str(got.value) == str(want.value)


def test_a_channels_last_empty_cannot_be_viewed_flat_as_torchs():
    for t in (torch, compat):
        x = t.empty(2, 3, 4, 5, memory_format=t.channels_last)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            x.view(-1)
