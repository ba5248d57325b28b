"""``torch.nonzero_static``: nonzero's indices in a fixed number of rows, padded
with ``fill_value``, against PyTorch; lazily it runs no pending work (its shape
does not depend on the values, unlike ``nonzero``'s)."""

import numpy as np
import pytest

import jaxblitz.compat as ct
from jaxblitz.compat import lazy

pt = pytest.importorskip("torch")

CASES = [
    ([[0, 1], [2, 0]], {"size": 4}),
    ([[0, 1], [2, 0]], {"size": 1, "fill_value": 7}),
    ([0, 3, 0, 5], {"size": 3}),
    (5, {"size": 2}),
    ([True, False], {"size": 0}),
    ([[0.0, 1.5], [2.0, 0.0]], {"size": 3, "fill_value": 9}),
    (np.zeros((5, 0, 5), np.float32), {"size": 2}),
]


@pytest.mark.parametrize("values, kwargs", CASES)
def test_nonzero_static_matches_torch(values, kwargs):
    t = pt.nonzero_static(pt.tensor(values), **kwargs)
    c = ct.nonzero_static(ct.tensor(values), **kwargs)
    assert c.shape == t.shape and str(c.dtype) == str(t.dtype)
    np.testing.assert_array_equal(c.numpy(), t.numpy())
    np.testing.assert_array_equal(ct.tensor(values).nonzero_static(**kwargs), t)


def test_a_negative_size_is_refused_as_torch_refuses_it():
    for lib in (pt, ct):
        with pytest.raises(RuntimeError, match="'size' must be an non-negative"):
            lib.nonzero_static(lib.tensor([1, 0]), size=-1)


def test_lazily_it_runs_no_pending_work():
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        x = ct.tensor([0.0, 2.0, 0.0, 3.0]) * 2
        lazy.metrics(reset=True)
        out = ct.nonzero_static(x, size=3)
        assert lazy.metrics().get("syncs", 0) == 0
        assert out.tolist() == [[1], [3], [-1]]
    finally:
        lazy.set_lazy(was)
