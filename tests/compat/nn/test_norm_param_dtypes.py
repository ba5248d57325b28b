"""The normalisations' parameters of another dtype than the input's, against
real PyTorch: which mixes torch's CPU kernels accept (half or bfloat16 input,
float32 parameters: the input's dtype out), and the error each other mix gets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "bfloat16", "float16"]
MIXES = list(itertools.product(DTYPES, [None, *DTYPES], [None, *DTYPES]))


def _norms(lib, x, w, b):
    F = lib.nn.functional
    c = None if w is None else w.reshape(-1)[:4]
    cb = None if b is None else b.reshape(-1)[:4]
    return {
        "layer_norm": lambda: F.layer_norm(x, (3, 3), w, b),
        "group_norm": lambda: F.group_norm(x, 2, c, cb),
        "batch_norm": lambda: F.batch_norm(x, None, None, c, cb, training=True),
        "instance_norm": lambda: F.instance_norm(x, weight=c, bias=cb),
        # the running statistics are checked as parameters too
        "batch_norm_eval": lambda: F.batch_norm(x, c, cb, training=False),
    }


def _make(lib, dtypes):
    x = np.sin(np.arange(72.0)).reshape(2, 4, 3, 3)
    p = np.linspace(0.5, 1.5, 9).reshape(3, 3)
    xd, wd, bd = dtypes
    return (
        lib.tensor(x, dtype=getattr(lib, xd)),
        None if wd is None else lib.tensor(p, dtype=getattr(lib, wd)),
        None if bd is None else lib.tensor(p - 1, dtype=getattr(lib, bd)),
    )


def _outcome(lib, dtypes, name):
    try:
        return _norms(lib, *_make(lib, dtypes))[name]()
    except RuntimeError as e:
        return e


@pytest.mark.parametrize("dtypes", MIXES, ids=lambda d: "-".join(map(str, d)))
def test_norms_with_parameters_of_another_dtype_are_torchs(dtypes):
    names = list(_norms(torch, None, None, None))
    if None in dtypes:  # evaluation needs both running statistics
        names.remove("batch_norm_eval")
    tol = 1e-2 if dtypes[0] in ("bfloat16", "float16") else 1e-5
    for name in names:
        want, got = _outcome(torch, dtypes, name), _outcome(compat, dtypes, name)
        if isinstance(want, Exception):
            assert isinstance(got, RuntimeError), name
            assert str(got) == str(want), name
            continue
        assert str(got.dtype) == str(want.dtype), name
        np.testing.assert_allclose(
            got.float().numpy(), want.float().numpy(), rtol=tol, atol=tol
        )


STATS = list(itertools.product(["float32", "float64", "bfloat16"], repeat=2))


def _instance_norm_with_stats(lib, dtypes, affine, use_input_stats):
    x = lib.tensor(
        np.sin(np.arange(24.0)).reshape(2, 3, 4), dtype=getattr(lib, dtypes[0])
    )
    stat = getattr(lib, dtypes[1])
    mean = lib.tensor([0.0, 0.1, 0.2], dtype=stat)
    var = lib.tensor([1.0, 2.0, 3.0], dtype=stat)
    w = b = None
    if affine:  # the parameters in the input's dtype
        w = lib.tensor([2.0, 3.0, 4.0], dtype=x.dtype)
        b = lib.tensor([0.0, 1.0, 2.0], dtype=x.dtype)
    out = lib.nn.functional.instance_norm(
        x, mean, var, w, b, use_input_stats=use_input_stats
    )
    return out, mean, var


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtypes", STATS, ids="-".join)
def test_instance_norm_takes_running_statistics_of_any_float_dtype_as_torch(
    dtypes, affine, use_input_stats
):
    # (batch norm refuses such statistics; torch's instance norm casts them)
    want = _instance_norm_with_stats(torch, dtypes, affine, use_input_stats)
    got = _instance_norm_with_stats(compat, dtypes, affine, use_input_stats)
    tol = 2e-2 if "bfloat16" in dtypes else 1e-5
    for g, w in zip(got, want, strict=True):
        assert str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(
            g.float().numpy(), w.float().numpy(), rtol=tol, atol=tol
        )
