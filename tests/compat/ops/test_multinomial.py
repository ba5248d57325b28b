"""``torch.multinomial`` in compat: PyTorch's shapes, dtype and errors exactly; the
draws from compat's generator (repeatable under ``manual_seed``, not PyTorch's
numbers), shown right by chi-square tests at a fixed seed (deterministic: they
cannot flake; the bounds are the chi-square distribution's 1e-6 upper tail)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")

# scipy.stats.chi2.ppf(1 - 1e-6, df)
CHI2_TAIL = {3: 30.665, 11: 48.866}


def chi2(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def test_with_replacement_each_category_comes_in_proportion_to_its_weight():
    ct.manual_seed(0)
    weights = ct.tensor([1.0, 2.0, 3.0, 4.0, 0.0])  # not normalised; one zero
    n = 100_000
    drawn = ct.multinomial(weights, n, replacement=True)
    assert drawn.shape == (n,) and drawn.dtype == ct.int64
    counts = np.bincount(drawn.numpy(), minlength=5)
    assert counts[4] == 0  # a zero weight is never drawn
    expected = n * np.array([0.1, 0.2, 0.3, 0.4])
    assert chi2(counts[:4], expected) < CHI2_TAIL[3]


def test_without_replacement_ordered_pairs_come_as_sequential_draws():
    """The first pick with probability p_i, the second p_j / (1 - p_i)."""
    ct.manual_seed(1)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    rows = 40_000
    drawn = ct.tensor(p, dtype=ct.float32).expand(rows, 4).multinomial(2)
    assert drawn.shape == (rows, 2) and drawn.dtype == ct.int64
    pairs = drawn.numpy()
    assert (pairs[:, 0] != pairs[:, 1]).all()
    outcomes = list(itertools.permutations(range(4), 2))
    counts = np.array([np.sum((pairs[:, 0] == i) & (pairs[:, 1] == j))
                       for i, j in outcomes])  # fmt: skip
    expected = rows * np.array([p[i] * p[j] / (1 - p[i]) for i, j in outcomes])
    assert counts.sum() == rows
    assert chi2(counts, expected) < CHI2_TAIL[11]


def test_one_sample_with_replacement_per_row_follows_each_rows_weights():
    ct.manual_seed(2)
    weights = ct.tensor([[0.0, 1.0, 0.0, 3.0], [5.0, 5.0, 0.0, 0.0]] * 20_000)
    drawn = ct.multinomial(weights, 1, True).numpy()[:, 0]
    first, second = drawn[0::2], drawn[1::2]
    assert set(first) <= {1, 3} and set(second) <= {0, 1}
    assert abs((first == 3).mean() - 0.75) < 0.02
    assert abs((second == 0).mean() - 0.5) < 0.02


def test_draws_repeat_under_manual_seed_and_follow_a_generator():
    weights = ct.rand(3, 6)
    ct.manual_seed(7)
    a = ct.multinomial(weights, 4)
    b = ct.multinomial(weights, 4, replacement=True)
    ct.manual_seed(7)
    assert ct.equal(ct.multinomial(weights, 4), a)
    assert ct.equal(ct.multinomial(weights, 4, replacement=True), b)
    g = ct.Generator().manual_seed(3)
    c = ct.multinomial(weights, 6, generator=g)
    g.manual_seed(3)
    assert ct.equal(weights.multinomial(6, generator=g), c)
    assert sorted(c[0].tolist()) == list(range(6))  # all categories: a permutation


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_every_floating_dtype_gives_int64_indices_of_pytorchs_shape(dtype):
    for shape, n, replacement in [
        ((5,), 3, False),
        ((2, 5), 7, True),
        ((0, 4), 2, False),
    ]:
        ours = ct.multinomial(ct.ones(shape, dtype=getattr(ct, dtype)), n, replacement)
        theirs = pt.multinomial(
            pt.ones(shape, dtype=getattr(pt, dtype)), n, replacement
        )
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.dtype == ct.int64 and not ours.requires_grad


def test_zero_weights_come_last_in_index_order_as_in_pytorch():
    for torch in (ct, pt):
        assert torch.multinomial(torch.tensor([1.0, 0.0, 0.0]), 2).tolist() == [0, 1]
        assert torch.multinomial(torch.tensor([0.0, 0.0, 2.0]), 3).tolist() == [2, 0, 1]


def test_a_weight_that_requires_grad_and_out_work_as_in_pytorch():
    w = ct.tensor([0.0, 1.0]).requires_grad_()
    assert ct.multinomial(w, 1).tolist() == [1]
    out = ct.empty(3, dtype=ct.int64)
    assert ct.multinomial(w, 3, True, out=out) is out and out.tolist() == [1, 1, 1]


BAD = [
    ("0-d", lambda t: (t.tensor(1.0), 1)),
    ("3-d", lambda t: (t.ones(2, 2, 2, dtype=t.long), 0)),
    ("ints", lambda t: (t.tensor([1, 2]), 1)),
    ("bools", lambda t: (t.tensor([True, False]), 1)),
    ("no samples", lambda t: (t.ones(3), 0)),
    ("negative samples", lambda t: (t.ones(3), -2)),
    ("too many", lambda t: (t.ones(3), 4)),
    ("empty", lambda t: (t.tensor([]), 1)),
    ("negative", lambda t: (t.tensor([1.0, -1.0]), 1)),
    ("inf", lambda t: (t.tensor([1.0, float("inf")]), 2)),
    ("nan", lambda t: (t.tensor([float("nan"), 1.0]), 1)),
    ("zero row", lambda t: (t.tensor([[0.0, 0.0], [1.0, 1.0]]), 1)),
    ("replacement negative", lambda t: (t.tensor([1.0, -1.0]), 2, True)),
    ("replacement inf", lambda t: (t.tensor([1.0, float("inf")]), 2, True)),
    ("replacement nan", lambda t: (t.tensor([1.0, float("nan")]), 2, True)),
    ("replacement zero row", lambda t: (t.tensor([[1.0, 0.0], [0.0, 0.0]]), 3, True)),
    (
        "replacement one zero row",
        lambda t: (t.tensor([[1.0, 0.0], [0.0, 0.0]]), 1, True),
    ),
    ("replacement no categories", lambda t: (t.empty(3, 0), 2, True)),
]


@pytest.mark.parametrize("name, args", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_pytorchs_error(name, args):
    with pytest.raises(RuntimeError) as theirs:
        pt.multinomial(*args(pt))
    with pytest.raises(RuntimeError) as ours:
        ct.multinomial(*args(ct))
    assert str(ours.value) == str(theirs.value)


def test_bad_num_samples_and_out_raise_pytorchs_errors():
    for torch in (ct, pt):
        with pytest.raises(TypeError, match="'num_samples' .* must be int, not float"):
            torch.multinomial(torch.ones(3), 2.0)
        with pytest.raises(RuntimeError, match="expects Long tensor out, got: Float"):
            torch.multinomial(torch.ones(3), 2, out=torch.empty(2))
