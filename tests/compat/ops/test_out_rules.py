"""The rules around torch's ``out=`` against real PyTorch: the resize warning,
the dtype refusals, the autograd refusal, tuple outs, and the write into
``out``'s own storage (views, strides, version counter)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _outcome(lib, call):
    """(values or error, warnings' texts) of ``call(lib)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = call(lib)
            got = np.asarray(r.tolist()), str(r.dtype), tuple(r.shape)
        except Exception as e:  # noqa: BLE001 -- the error is the outcome
            got = type(e).__name__, str(e)
    texts = [str(w.message) for w in caught if "resized" in str(w.message)]
    return got, texts


def _same_as_torch(call):
    (t, t_warned), (c, c_warned) = _outcome(torch, call), _outcome(compat, call)
    assert c_warned == t_warned
    if isinstance(t[0], np.ndarray):
        np.testing.assert_allclose(c[0], t[0])
        assert c[1:] == t[1:]
    else:
        assert c == t


CASES = {
    "add into a larger out": lambda t: t.add(t.ones(2, 3), 1, out=t.empty(5)),
    "add into an empty out": lambda t: t.add(t.ones(2, 3), 1, out=t.empty(0)),
    "add into a float64 out": lambda t: t.add(
        t.ones(2, 3), 1, out=t.empty(2, 3, dtype=t.float64)
    ),
    "add into a long out": lambda t: t.add(
        t.ones(2, 3), 1, out=t.empty(2, 3, dtype=t.long)
    ),
    "exp into an int out": lambda t: t.exp(t.ones(2), out=t.empty(2, dtype=t.int32)),
    "sum into a smaller out": lambda t: t.sum(t.ones(2, 3), 0, out=t.empty(7)),
    "sum into a long out": lambda t: t.sum(
        t.tensor([0.6, 0.6]), 0, out=t.empty((), dtype=t.long)
    ),
    "cumsum into a long out": lambda t: t.cumsum(
        t.tensor([0.6, 0.6]), 0, out=t.empty(2, dtype=t.long)
    ),
    "mean into a long out": lambda t: t.mean(
        t.ones(2, 3), 1, out=t.empty(2, dtype=t.long)
    ),
    "mm into a float64 out": lambda t: t.mm(
        t.ones(2, 3), t.ones(3, 2), out=t.empty(2, 2, dtype=t.float64)
    ),
    "cat into a long out": lambda t: t.cat(
        [t.ones(2), t.ones(2)], out=t.empty(4, dtype=t.long)
    ),
    "stack into a one-element out": lambda t: t.stack(
        [t.ones(2), t.ones(2)], out=t.empty(1)
    ),
    "index_select into a float64 out": lambda t: t.index_select(
        t.ones(2, 3), 0, t.tensor([1]), out=t.empty(1, 3, dtype=t.float64)
    ),
    "where into a float64 out": lambda t: t.where(
        t.ones(2) > 0, t.ones(2), t.zeros(2), out=t.empty(2, dtype=t.float64)
    ),
    "eq into a float out": lambda t: t.eq(t.ones(2), t.ones(2), out=t.empty(2)),
    "argmax into an int out": lambda t: t.argmax(
        t.ones(2, 3), 1, out=t.empty(2, dtype=t.int32)
    ),
    "linalg.solve into a float64 out": lambda t: t.linalg.solve(
        t.eye(2), t.ones(2), out=t.empty(2, dtype=t.float64)
    ),
    "arange into a smaller out": lambda t: t.arange(5, out=t.empty(3)),
    "matmul of vectors into a float64 out": lambda t: t.matmul(
        t.ones(3), t.ones(3), out=t.empty((), dtype=t.float64)
    ),
    "nonzero as a tuple into an out": lambda t: t.nonzero(
        t.ones(2), as_tuple=True, out=t.empty(0, dtype=t.long)
    ),
    "zeros into a long out": lambda t: t.zeros(3, out=t.empty(3, dtype=t.long)),
    "zeros of another dtype than its out": lambda t: t.zeros(
        3, dtype=t.float32, out=t.empty(3, dtype=t.long)
    ),
    "a grad-requiring input": lambda t: t.add(
        t.ones(2, requires_grad=True), 1, out=t.empty(2)
    ),
    "a grad-requiring input, refused before the dtype": lambda t: t.floor(
        t.ones(2, requires_grad=True), out=t.empty(2, dtype=t.long)
    ),
    "a grad-requiring out": lambda t: t.add(
        t.ones(2), 1, out=t.empty(2, requires_grad=True)
    ),
    "a grad-requiring input to an op without a derivative": lambda t: t.eq(
        t.ones(2, requires_grad=True), 1, out=t.empty(2, dtype=t.bool)
    ),
    "an alias, named as torch's kernel": lambda t: t.true_divide(
        t.ones(2, requires_grad=True), 2, out=t.empty(2)
    ),
    # outs sharing elements with an input (refused by ATen's assert_no_overlap)
    "cat into one of its inputs": lambda t: (
        lambda x: t.cat((x, t.ones(4, 6)), dim=0, out=x)
    )(t.zeros(0)),
    "cat into a view of an input": lambda t: (
        lambda z: t.cat((t.ones(4, 6), z), out=z[:2, :])
    )(t.zeros(4, 6)),
    "gather into an out that grows over its index": lambda t: (
        lambda i: t.gather(i.clone(), 0, i[1:], out=i[:1])
    )(t.tensor([2, 1, 0])),
    "index_select into its input": lambda t: (
        lambda a: t.index_select(a, 0, t.tensor([0, 1]), out=a[:2])
    )(t.arange(6.0)),
    "take into its input": lambda t: (lambda a: t.take(a, t.tensor([0, 1]), out=a[:2]))(
        t.arange(6.0)
    ),
    "stack into its inputs": lambda t: (
        lambda a: t.stack([a[:2], a[2:4]], out=a[:4].view(2, 2))
    )(t.arange(6.0)),
    "index_select into another part of its storage": lambda t: (
        lambda a: t.index_select(a[:3], 0, t.tensor([0, 1]), out=a[4:])
    )(t.arange(6.0)),
    "arange of an integer dtype whose step truncates to 0": lambda t: t.arange(
        0, 64, 0.5, out=t.empty(0, dtype=t.long)
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_out_rules_match_torch(case):
    _same_as_torch(CASES[case])


def test_a_grad_requiring_input_is_fine_under_no_grad():
    x = compat.ones(2, requires_grad=True)
    out = compat.empty(2)
    with compat.no_grad():
        assert compat.add(x, 1, out=out) is out
    assert out.tolist() == [2.0, 2.0]


def test_a_tuple_result_takes_a_tuple_of_outs_and_returns_them_named():
    values, indices = compat.empty(2), compat.empty(2, dtype=compat.long)
    r = compat.max(compat.tensor([[1.0, 3.0], [4.0, 2.0]]), 1, out=(values, indices))
    expected = torch.max(
        torch.tensor([[1.0, 3.0], [4.0, 2.0]]),
        1,
        out=(torch.empty(2), torch.empty(2, dtype=torch.long)),
    )
    assert type(r).__name__ == type(expected).__name__ == "max_out"
    assert r.values is values and r.indices is indices
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [1, 0]


def test_sort_outs_of_the_wrong_index_dtype_are_refused_as_torch():
    def call(t):
        return t.sort(
            t.ones(2, 3), 1, out=(t.empty(2, 3), t.empty(2, 3, dtype=t.int32))
        )

    _same_as_torch(lambda t: call(t).values)


def test_a_tuple_of_the_wrong_length_is_refused_as_torch():
    _same_as_torch(lambda t: t.max(t.ones(2, 3), 1, out=(t.empty(2),)).values)


def test_an_out_that_is_a_view_writes_into_its_base():
    for t in (torch, compat):
        base = t.zeros(4)
        t.add(t.ones(2), 1, out=base[1:3])
        assert base.tolist() == [0.0, 2.0, 2.0, 0.0]


def test_an_out_of_the_result_shape_keeps_its_strides():
    for t in (torch, compat):
        out = t.empty(3, 2).t()
        assert t.add(t.ones(2, 3), 1, out=out) is out
        assert out.stride() == (1, 2)
        assert out.tolist() == [[2.0] * 3] * 2


def test_an_out_resized_smaller_keeps_its_storage():
    for t in (torch, compat):
        base = t.zeros(6)
        view = base[:4]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t.add(t.ones(2), 1, out=view)
        assert tuple(view.shape) == (2,)
        assert base.tolist() == [2.0, 2.0, 0.0, 0.0, 0.0, 0.0]


def test_writing_an_out_bumps_its_version_as_an_inplace_op():
    for t in (torch, compat):
        out = t.zeros(2)
        before = out._version
        t.add(t.ones(2), 1, out=out)
        assert out._version == before + 1
