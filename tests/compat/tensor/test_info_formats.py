"""torch.finfo / torch.iinfo and the memory formats, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _info(lib):
    out = []
    for name in ("float32", "float64", "float16", "bfloat16"):
        f = lib.finfo(getattr(lib, name))
        out.append((repr(f), f.eps, f.max, f.min, f.tiny, f.resolution, f.bits))
    out.append(repr(lib.finfo()))
    for name in ("int8", "uint8", "int16", "int32", "int64"):
        i = lib.iinfo(getattr(lib, name))
        out.append((repr(i), i.bits, i.max, i.min, i.dtype))
    return out


def test_finfo_and_iinfo_are_torchs():
    assert _info(compat) == _info(torch)
    for bad, message in (
        (lambda: compat.finfo(compat.int32), "requires a floating point input type"),
        (lambda: compat.iinfo(compat.float32), "requires an integer input type"),
        (lambda: compat.iinfo(compat.bool), "torch.bool is not supported"),
    ):
        with pytest.raises(TypeError, match=message):
            bad()


def _formats(lib):
    x = lib.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    y = x.contiguous(memory_format=lib.channels_last)
    conv = lib.nn.Conv2d(3, 4, 3).to(memory_format=lib.channels_last)
    return [
        repr(lib.channels_last),
        x.is_contiguous(memory_format=lib.channels_last),
        y.stride(),
        y.is_contiguous(),
        y.is_contiguous(memory_format=lib.channels_last),
        y.contiguous().stride(),
        y.clone().stride(),
        x.clone(memory_format=lib.channels_last).stride(),
        y.to(memory_format=lib.contiguous_format).stride(),
        y.permute(0, 2, 3, 1).is_contiguous(),
        lib.ones(2, 1, 4, 5).is_contiguous(memory_format=lib.channels_last),
        lib.ones(2, 3, 4, 5, 6).contiguous(memory_format=lib.channels_last_3d).stride(),
        conv.weight.stride(),
        np.asarray(y.numpy()).tolist() == np.asarray(x.numpy()).tolist(),
    ]


def test_memory_formats_lay_tensors_out_as_torchs():
    assert _formats(compat) == _formats(torch)
    with pytest.raises(RuntimeError, match="required rank 4 tensor"):
        compat.ones(2, 3, 4).contiguous(memory_format=compat.channels_last)
