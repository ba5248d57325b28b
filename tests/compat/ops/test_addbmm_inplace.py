"""``addbmm_``, the one in-place product whose ``self`` need only broadcast to
the result: PyTorch resizes ``self`` to it (``addmm_``, ``baddbmm_`` and
``addmv_`` refuse such a ``self``), against real PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _run(lib, shape, beta):
    a = lib.tensor(np.arange(60.0).reshape(3, 4, 5) / 50, dtype=lib.float32)
    b = lib.tensor(np.arange(90.0).reshape(3, 5, 6) / 50, dtype=lib.float32)
    s = lib.full(shape, 2.0)
    try:
        r = s.addbmm_(a, b, beta=beta, alpha=0.5)
    except RuntimeError as e:
        return str(e)
    assert r is s
    return tuple(s.shape), s.numpy().tolist()


@pytest.mark.parametrize("shape", [(), (1,), (6,), (4, 1), (4, 6), (3,), (2, 4, 6)])
@pytest.mark.parametrize("beta", [1, 0.6])
def test_addbmm_in_place_resizes_a_broadcasting_self_as_torch(shape, beta):
    want, got = _run(torch, shape, beta), _run(compat, shape, beta)
    if isinstance(want, str):
        assert got == want
        return
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
