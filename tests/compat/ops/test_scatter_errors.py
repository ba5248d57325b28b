"""The scatter family's refusals against real PyTorch: scatter, scatter_add and
scatter_reduce share scatter's kernel checks, so their dtype errors say
``scatter():``; bad dims, index shapes and reductions are torch's words too."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _args(t):
    return t.zeros(3, 4), t.zeros(3, 4, dtype=t.long), t.ones(3, 4)


CALLS = {
    "add_bad_dim": lambda t, x, i, s: t.scatter_add(x, 5, i, s),
    "reduce_bad_dim": lambda t, x, i, s: t.scatter_reduce(x, 5, i, s, "sum"),
    "add_float_index": lambda t, x, i, s: t.scatter_add(x, 0, i.float(), s),
    "add_bool_index": lambda t, x, i, s: t.scatter_add(x, 0, i.bool(), s),
    "reduce_float_index": lambda t, x, i, s: t.scatter_reduce(
        x, 0, i.float(), s, "sum"
    ),
    "add__float_index": lambda t, x, i, s: x.scatter_add_(0, i.float(), s),
    "reduce__float_index": lambda t, x, i, s: x.scatter_reduce_(
        0, i.float(), s, "amax"
    ),
    "add_src_dtype": lambda t, x, i, s: t.scatter_add(x, 0, i, s.double()),
    "add__src_dtype": lambda t, x, i, s: x.scatter_add_(0, i, s.double()),
    "add_int_self": lambda t, x, i, s: t.scatter_add(x.long(), 0, i, s),
    "reduce_src_dtype": lambda t, x, i, s: t.scatter_reduce(x, 0, i, s.double(), "sum"),
    "scatter_src_dtype": lambda t, x, i, s: t.scatter(x, 0, i, s.double()),
    # the index's dtype is checked before the source's, and before shapes
    "add_both_dtypes": lambda t, x, i, s: t.scatter_add(x, 0, i.float(), s.double()),
    "add_float_index_ndim": lambda t, x, i, s: t.scatter_add(x, 0, i[0].float(), s),
    "add_index_ndim": lambda t, x, i, s: t.scatter_add(x, 0, i[0], s),
    "add_index_too_big": lambda t, x, i, s: t.scatter_add(
        x, 0, t.zeros(4, 4, dtype=t.long), s
    ),
    "add_out_of_range": lambda t, x, i, s: t.scatter_add(x, 0, i + 5, s),
    "reduce_unknown": lambda t, x, i, s: t.scatter_reduce(x, 0, i, s, "foo"),
    "reduce_add_unknown": lambda t, x, i, s: t.scatter_reduce(x, 0, i, s, "add"),
    "add_src_number": lambda t, x, i, s: t.scatter_add(x, 0, i, 1.0),
    "reduce_src_number": lambda t, x, i, s: t.scatter_reduce(x, 0, i, 1.0, "sum"),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_scatter_family_refuses_in_torchs_words(call):
    with pytest.raises(Exception) as want:
        call(torch, *_args(torch))
    with pytest.raises(type(want.value)) as got:
        call(compat, *_args(compat)).tolist()  # lazily: bounds are read at a sync
    # lazily, a late error adds where the op was recorded
    assert str(got.value).split(" (found when compat's")[0] == str(want.value)


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_takes_torchs_max_and_min_aliases(reduce, include_self):
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5
    i = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    s = np.linspace(-6, 6, 8, dtype=np.float32).reshape(2, 4)
    want, got = (
        t.scatter_reduce(
            t.tensor(x), 0, t.tensor(i), t.tensor(s), reduce, include_self=include_self
        )
        for t in (torch, compat)
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())
