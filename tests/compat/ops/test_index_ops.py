"""Blitz 1, "Tensors": compat's index, selection and order ops against real
PyTorch (values, dtypes, gradients, named tuples, errors)."""

import numpy as np
import pytest

import jaxblitz.compat as C

torch = pytest.importorskip("torch")

X = [[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]]
INDEX = [[0, 0], [2, 1]]


def _same(ours, theirs) -> None:
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6
    )


def _pair(data, **kwargs):
    return C.tensor(data, **kwargs), torch.tensor(data, **kwargs)


def test_gather_matches_torch_and_its_gradient_is_a_scatter_add():
    (x, tx), (i, ti) = _pair(X, requires_grad=True), _pair(INDEX)
    out, tout = C.gather(x, 1, i), torch.gather(tx, 1, ti)
    _same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    _same(x.grad, tx.grad)
    assert out.grad_fn.name() == "GatherBackward0"


def test_scatter_gives_every_duplicate_src_its_gradient_as_torch():
    (x, tx), (i, ti) = _pair(X, requires_grad=True), _pair(INDEX)
    (s, ts) = _pair([[10.0, 20.0], [30.0, 40.0]], requires_grad=True)
    w = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    out = C.scatter(x * 1, 1, i, s)
    tout = torch.scatter(tx * 1, 1, ti, ts)
    (out * C.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    _same(s.grad, ts.grad)
    _same(x.grad, tx.grad)


def test_scatter_add_and_scatter_reduce_match_torch():
    (x, tx), (i, ti) = _pair(X), _pair(INDEX)
    (s, ts) = _pair([[10.0, 20.0], [30.0, 40.0]])
    _same(C.scatter_add(x, 1, i, s), torch.scatter_add(tx, 1, ti, ts))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            ours = x.scatter_reduce(1, i, s, reduce, include_self=include_self)
            theirs = tx.scatter_reduce(1, ti, ts, reduce, include_self=include_self)
            _same(ours, theirs)


def test_scatter_in_place_with_a_value():
    (x, tx), (i, ti) = _pair(X), _pair(INDEX)
    x.scatter_(1, i, 7.0)
    tx.scatter_(1, ti, 7.0)
    _same(x, tx)


def test_gather_out_of_bounds_raises_torchs_error():
    with pytest.raises(
        RuntimeError, match="index 5 is out of bounds for dimension 1 with size 3"
    ):
        C.gather(C.tensor(X), 1, C.tensor([[5]]))


def test_index_select_take_and_masks_match_torch():
    (x, tx) = _pair(X, requires_grad=True)
    _same(
        C.index_select(x, 1, C.tensor([2, 0, 2])),
        tx.index_select(1, torch.tensor([2, 0, 2])),
    )
    _same(x.take(C.tensor([[0, 5], [-1, 2]])), tx.take(torch.tensor([[0, 5], [-1, 2]])))
    _same(x.masked_fill(x > 2, -1.0), tx.masked_fill(tx > 2, -1.0))
    out, tout = x.masked_select(x > 2), tx.masked_select(tx > 2)
    _same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    _same(x.grad, tx.grad)


def test_a_range_or_an_inner_tuple_indexes_like_a_list_as_in_torch():
    # "What is torch.nn really?" picks log-probabilities with input[range(n), target]
    ours, theirs = _pair([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0], [6.0, 7.0, 8.0]])
    for index in [
        range(2),
        (range(3), [2, 0, 1]),
        ((0, 2), 1),
        (slice(None), range(1, 3)),
    ]:
        _same(ours[index], theirs[index])
    ours[range(2), 0] = -1.0
    theirs[range(2), 0] = -1.0
    _same(ours, theirs)


def test_masked_fill_refuses_a_non_bool_mask_in_torchs_words():
    x = C.tensor(X)
    with pytest.raises(
        RuntimeError,
        match="only supports boolean masks, but got mask with dtype long int",
    ):
        x.masked_fill((x > 2).long(), 0.0)


def test_nonzero_argwhere_and_one_argument_where_match_torch():
    (x, tx) = _pair([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]])
    _same(C.nonzero(x), torch.nonzero(tx))
    _same(C.argwhere(x), torch.argwhere(tx))
    for ours, theirs in zip(C.where(x > 1), torch.where(tx > 1), strict=True):
        _same(ours, theirs)
    for ours, theirs in zip(
        x.nonzero(as_tuple=True), tx.nonzero(as_tuple=True), strict=True
    ):
        _same(ours, theirs)


def test_topk_is_a_named_tuple_and_its_gradient_goes_to_the_picked():
    (x, tx) = _pair(X, requires_grad=True)
    values, indices = C.topk(x, 2)
    theirs = torch.topk(tx, 2)
    _same(values, theirs.values)
    _same(indices, theirs.indices)
    assert type(C.topk(x, 2)).__name__ == "topk"
    values.sum().backward()
    theirs.values.sum().backward()
    _same(x.grad, tx.grad)
    _same(x.topk(1, largest=False).values, tx.topk(1, largest=False).values)


def test_kthvalue_median_and_mode_match_torch():
    (x, tx) = _pair(X)
    for name in ("values", "indices"):
        _same(
            getattr(C.kthvalue(x, 2, 1), name), getattr(torch.kthvalue(tx, 2, 1), name)
        )
        _same(getattr(x.median(1), name), getattr(tx.median(1), name))
    _same(C.median(x), torch.median(tx))
    m, tm = _pair([[3.0, 3.0, 1.0, 1.0]])
    _same(C.mode(m, 1).values, torch.mode(tm, 1).values)
    _same(C.mode(m, 1).indices, torch.mode(tm, 1).indices)


def test_median_without_dim_splits_its_gradient_over_ties_as_torch():
    (x, tx) = _pair([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    C.median(x).backward()
    torch.median(tx).backward()
    _same(x.grad, tx.grad)


def test_std_mean_and_var_mean_match_torch():
    (x, tx) = _pair(X)
    for ours, theirs in zip(C.std_mean(x, 1), torch.std_mean(tx, 1), strict=True):
        _same(ours, theirs)
    kw = dict(dim=1, correction=0, keepdim=True)
    for ours, theirs in zip(C.var_mean(x, **kw), torch.var_mean(tx, **kw), strict=True):
        _same(ours, theirs)


def test_counting_ops_match_torch():
    (v, tv) = _pair([3, 1, 3, 2])
    for ours, theirs in zip(
        C.unique(v, return_inverse=True, return_counts=True),
        torch.unique(tv, return_inverse=True, return_counts=True),
        strict=True,
    ):
        _same(ours, theirs)
    _same(C.bincount(v, minlength=6), torch.bincount(tv, minlength=6))
    (h, th) = _pair([1.0, 2.0, 1.0, 7.0])
    _same(C.histc(h, bins=4, min=0, max=3), torch.histc(th, bins=4, min=0, max=3))
    _same(C.count_nonzero(C.tensor(X), 0), torch.count_nonzero(torch.tensor(X), 0))


def test_rearranging_ops_match_torch():
    (x, tx) = _pair(X)
    _same(C.flip(x, [0, 1]), torch.flip(tx, [0, 1]))
    _same(C.roll(x, (1, 2), (0, 1)), torch.roll(tx, (1, 2), (0, 1)))
    _same(x.roll(1), tx.roll(1))
    _same(C.tril(x, -1), torch.tril(tx, -1))
    _same(x.triu(1), tx.triu(1))
    _same(x.repeat_interleave(2), tx.repeat_interleave(2))
    counts = [1, 2]
    _same(
        C.repeat_interleave(x, C.tensor(counts), dim=0),
        torch.repeat_interleave(tx, torch.tensor(counts), dim=0),
    )
    _same(
        C.outer(C.tensor([1, 2]), C.tensor([1.0, 2.0])),
        torch.outer(torch.tensor([1, 2]), torch.tensor([1.0, 2.0])),
    )
    _same(C.einsum("ij,kj->ik", x, x), torch.einsum("ij,kj->ik", tx, tx))


def test_softmax_as_torch_function_and_method():
    (x, tx) = _pair(X)
    _same(C.softmax(x, 1), torch.softmax(tx, 1))
    _same(x.log_softmax(0, dtype=C.float64), tx.log_softmax(0, dtype=torch.float64))


def test_legacy_tensor_types_build_and_check_as_torch():
    assert tuple(C.FloatTensor(2, 3).shape) == (2, 3)
    _same(C.LongTensor([1.7, 2.0]), torch.LongTensor([1.7, 2.0]))
    assert isinstance(C.zeros(2), C.FloatTensor)
    assert not isinstance(C.zeros(2, dtype=C.long), C.FloatTensor)
    assert repr(C.FloatTensor) == repr(torch.FloatTensor)
    x = C.tensor(X)
    assert x.type() == "torch.FloatTensor"
    assert x.type(C.LongTensor).dtype is C.int64
    assert x.type("torch.IntTensor").dtype is C.int32
    assert x.type_as(C.tensor([1])).dtype is C.int64
    assert x.byte().dtype is C.uint8


def test_gather_writes_into_out_as_torch():
    out, t_out = C.zeros(2, 2), torch.zeros(2, 2)
    assert C.gather(C.tensor(X), 1, C.tensor(INDEX), out=out) is out
    torch.gather(torch.tensor(X), 1, torch.tensor(INDEX), out=t_out)
    assert out.tolist() == t_out.tolist()


# -- one element set to a number (a corpus reader's ``ids[i] = j``) -------------------
@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("int64", 7),
        ("int64", -3.7),  # truncated toward zero
        ("int32", True),
        ("uint8", 255),
        ("float32", 0.1),  # rounded to float32
        ("float64", 2**60 + 1),
        ("bool", 2),
        ("float16", 65519.0),
    ],
)
@pytest.mark.parametrize("index", [1, -1, (1, 2), (-2, 0)])
def test_one_element_set_to_a_number_is_stored_as_torch_stores_it(dtype, value, index):
    shape = (3,) if type(index) is int else (2, 3)
    ours = C.zeros(shape, dtype=getattr(C, dtype))
    theirs = torch.zeros(shape, dtype=getattr(torch, dtype))
    ours[index] = value
    theirs[index] = value
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours._version == theirs._version == 1


def test_an_element_write_is_seen_by_every_tensor_on_the_storage():
    n = np.zeros(4, np.int64)
    x = C.from_numpy(n)
    y = C.zeros(4, dtype=C.int64)
    view = y[1:]
    x[2] = 5
    y[2] = 6
    assert n.tolist() == [0, 0, 5, 0]
    assert view.tolist() == [0, 6, 0]
    assert (y + 1).tolist() == [1, 1, 7, 1]


def test_an_element_write_after_a_save_for_backward_is_caught_as_torch_catches_it():
    for lib in (C, torch):
        w = lib.ones(3, requires_grad=True)
        x = lib.zeros(3)
        out = (w * x).sum()  # saves x
        x[0] = 1.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


@pytest.mark.parametrize("index", [3, -4, (0, 0)])
def test_an_element_write_out_of_range_raises_torchs_error(index):
    messages = []
    for lib in (C, torch):
        with pytest.raises(IndexError) as caught:
            lib.zeros(3)[index] = 1
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_an_element_write_into_a_leaf_that_requires_grad_raises_torchs_error():
    for lib in (C, torch):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.zeros(3, requires_grad=True)[0] = 1.0


def test_a_result_read_on_the_host_then_edited_through_data_as_torch_sees_it():
    grads = []
    for lib in (C, torch):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x.log_softmax(0)
        y.detach().numpy()  # read on the host: not an edit
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        z = x.exp()
        z.data[1] = 5.0  # an edit torch's backward sees (ExpBackward0 reads z)
        z.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
