"""compat's index writes (index_copy/fill/put/reduce, masked_scatter, put, the
*_scatter ops), splits, Tensor predicates and the in-place samplers, against
PyTorch: in-place forms write through views and move the version, errors match,
samplers match torch's ranges and statistics."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(c)


def _same(a, b):
    np.testing.assert_allclose(np.asarray(b.tolist()), np.asarray(a.tolist()))


@pytest.mark.parametrize(
    "name, args",
    [
        ("index_copy_", lambda T: (0, T.tensor([2, 0]), T.ones(2, 4))),
        ("index_fill_", lambda T: (1, T.tensor([3]), -1.0)),
        (
            "index_put_",
            lambda T: ((T.tensor([0, 0]), T.tensor([1, 1])), T.tensor(5.0), True),
        ),
        (
            "masked_scatter_",
            lambda T: (T.arange(12.0).reshape(3, 4) > 6, T.arange(9.0)),
        ),
        ("put_", lambda T: (T.tensor([0, -1, 0]), T.tensor([1.0, 2, 3]), True)),
        ("index_reduce_", lambda T: (0, T.tensor([0, 0]), T.full((2, 4), 2.0), "prod")),
        ("fill_diagonal_", lambda T: (7.0,)),
    ],
)
@pytest.mark.filterwarnings("ignore:index_reduce")
def test_inplace_writes_through_views_and_bumps_version(name, args):
    results = []
    for T in (torch, c):
        x = T.arange(12.0).reshape(3, 4)
        row = x[0]
        before = x._version
        out = getattr(x, name)(*args(T))
        assert out is x and x._version > before
        results.append((x.clone(), row.clone()))
    (tx, trow), (cx, crow) = results
    _same(tx, cx)
    _same(trow, crow)


def test_index_put_accumulate_gradients():
    def run(T):
        x = T.arange(6.0).reshape(2, 3).requires_grad_()
        v = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        idx = (T.tensor([0, 0, 1]), T.tensor([2, 2, 0]))
        out = T.index_put(x, idx, v, accumulate=True)
        (out * T.arange(6.0).reshape(2, 3)).sum().backward()
        return out, x.grad, v.grad, type(out.grad_fn).__name__

    t, m = _both(run)
    for a, b in zip(t[:3], m[:3], strict=True):
        _same(a, b)
    assert t[3] == m[3] == "IndexPutBackward0"


@pytest.mark.parametrize(
    "fn",
    [
        lambda T: T.zeros(2, 3).index_copy(0, T.tensor([5]), T.ones(1, 3)),
        lambda T: T.zeros(2, 3).index_copy(0, T.tensor([0]), T.ones(1, 2)),
        lambda T: T.zeros(2, 3).index_fill(0, T.tensor([[0]]), 1),
        lambda T: T.zeros(2, 3).index_fill(0, T.tensor([0]), T.ones(2)),
        lambda T: T.zeros(2, 3).masked_scatter(T.ones(2, 3, dtype=T.bool), T.ones(4)),
        lambda T: T.zeros(2, 3).masked_scatter(T.ones(2, 3), T.ones(6)),
        lambda T: T.zeros(2, 3).take_along_dim(T.tensor([0]), 1),
        lambda T: T.zeros(2, 3).index_put((T.tensor([0]),), T.ones(2)),
        lambda T: T.hsplit(T.zeros(2, 3), 2),
        lambda T: T.vsplit(T.zeros(3), 1),
        lambda T: T.zeros(3, 4).sum_to_size(2, 4),
        lambda T: T.zeros(2).H,
        lambda T: T.zeros(2, 3, 4).H,
        lambda T: T.zeros(2).imag,
        lambda T: T.zeros(2).is_nonzero(),
        lambda T: T.zeros(2, 3, 4).fill_diagonal_(1),
        lambda T: T.zeros(2).exponential_(0),
        lambda T: T.zeros(2).geometric_(1),
        lambda T: T.zeros(2, dtype=T.long).cauchy_(),
        lambda T: T.zeros(2, dtype=T.uint8).random_(-1, 5),
        lambda T: T.zeros(2, dtype=T.float16).random_(0, 2**30),
        lambda T: T.zeros(2).random_(5, 5),
        lambda T: T.zeros(2).bernoulli_(1.5),
        lambda T: T.ones(2, requires_grad=True).apply_(lambda v: v),
    ],
)
def test_errors_match(fn):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(c)
    assert str(got.value) == str(want.value)


def test_splits_and_copies():
    def run(T):
        x = T.arange(24.0).reshape(2, 3, 4).requires_grad_()
        return (
            [p.shape for p in T.hsplit(x, [1])],
            [p.shape for p in T.dsplit(x, 2)],
            [p.shape for p in T.vsplit(x, 2)],
            [p.shape for p in x.split_with_sizes([1, 2], 1)],
            [
                type(p.grad_fn).__name__
                for p in T.unsafe_chunk(x.requires_grad_() * 1, 2)
            ],
            x.ravel().shape,
            x.narrow_copy(2, 1, 2).tolist(),
            x.sum_to_size(3, 1).tolist(),
            type(x.narrow_copy(2, 1, 2).grad_fn).__name__,
        )

    assert _both(run)[0] == _both(run)[1]


def test_properties_and_predicates():
    for T in (torch, c):
        x = T.zeros(3, 4)
        assert (x.ndimension(), x.nbytes, x.itemsize) == (2, 48, 4)
        assert repr(x.layout) == "torch.strided"
        assert x.is_cpu and not (x.is_sparse or x.is_quantized or x.is_meta)
        assert not (x.is_complex() or x.is_conj() or x.is_neg() or x.is_pinned())
        assert x.is_signed() and not T.zeros(1, dtype=T.uint8).is_signed()
        assert x.is_same_size(T.ones(3, 4)) and T.tensor([2]).is_nonzero()
        assert x.conj() is x and x.real is x and x.resolve_neg() is x
        assert x.H.shape == (4, 3) and T.zeros(2, 3, 4).mH.shape == (2, 4, 3)
        assert x.requires_grad_().split(2, 1)[1].output_nr == 1


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("sigmoid_", (), {}),
        ("tanh_", (), {}),
        ("exp_", (), {}),
        ("clamp_", (), {"min": -0.5, "max": 0.5}),
        ("clamp_min_", (0.0,), {}),
        ("fill_", (2.5,), {}),
        ("zero_", (), {}),
        ("nan_to_num_", (), {"nan": 0.0}),
        ("round_", (), {"decimals": 1}),
        ("xlogy_", (2.0,), {}),
        ("index_put_", ((np.array([1, 1]),), np.ones((2, 3), np.float32), True), {}),
    ],
)
def test_torch_inplace_functions_write_their_input_as_the_method_does(
    name, args, kwargs
):
    def run(T):
        x = T.tensor([[-1.25, 0.5, 2.0], [0.75, -0.1, 3.0]])
        targs = tuple(
            tuple(T.tensor(a) for a in arg)
            if isinstance(arg, tuple)
            else T.tensor(arg)
            if isinstance(arg, np.ndarray)
            else arg
            for arg in args
        )
        view = x[0]
        out = getattr(T, name)(x, *targs, **kwargs)
        return out is x, x, view

    (t_same, t_x, t_view), (c_same, c_x, c_view) = _both(run)
    assert t_same and c_same
    _same(t_x, c_x)
    _same(t_view, c_view)


def test_torch_functions_of_tensor_methods():
    for T in (torch, c):
        x = T.arange(6.0).view(2, 3).requires_grad_()
        assert T.is_floating_point(x) and not T.is_floating_point(T.arange(2))
        assert not T.detach(x).requires_grad and T.get_device(x) == -1
        assert T.adjoint(x).shape == (3, 2) and T.adjoint(x).grad_fn is not None
        with pytest.raises(TypeError, match="argument 'input'"):
            T.is_floating_point([1.0])


def test_resize_within_storage():
    for T in (torch, c):
        x = T.arange(12.0).reshape(3, 4)
        assert x.resize_(5).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert x[1:].resize_(2, 2).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(NotImplementedError, match="resize_"):
        c.zeros(3).resize_(5)


def test_apply_and_map():
    for T in (torch, c):
        x = T.zeros(4)
        x[1:].apply_(lambda v: v + 2)
        assert x.tolist() == [0.0, 2.0, 2.0, 2.0]
        assert x.map_(T.ones(4), lambda a, b: a * 3 + b).tolist() == [
            1.0,
            7.0,
            7.0,
            7.0,
        ]


@pytest.mark.parametrize(
    "dtype, low, high",
    [("float32", 0, 2**24), ("float16", 0, 2**11), ("int8", 0, 127), ("bool", 0, 1)],
)
def test_random_ranges(dtype, low, high):
    x = c.zeros(20000, dtype=getattr(c, dtype)).random_()
    a = x.numpy().astype(np.float64)
    assert a.min() >= low and a.max() <= high and a.max() > high * 0.9
    assert set(np.unique(c.zeros(5000).random_(3, 6).numpy())) == {3.0, 4.0, 5.0}


def test_sampler_statistics():
    c.manual_seed(0)
    n = 20000

    def draw(method, *args):
        return getattr(c.zeros(n), method)(*args).numpy()

    assert abs(draw("exponential_", 2).mean() - 0.5) < 0.02
    assert abs(draw("geometric_", 0.25).mean() - 4.0) < 0.1
    assert draw("geometric_", 0.5).min() == 1.0
    assert abs(np.log(draw("log_normal_", 0, 0.5)).std() - 0.5) < 0.02
    assert abs(np.median(draw("cauchy_", 1.0)) - 1.0) < 0.05
    assert abs(draw("bernoulli_", 0.3).mean() - 0.3) < 0.015
    p = c.full((4,), 0.5, requires_grad=True)
    b = c.bernoulli(p)
    assert type(b.grad_fn).__name__ == "BernoulliBackward0"
    b.sum().backward()
    assert p.grad.tolist() == [0.0] * 4
    x = c.zeros(4)
    view = x[1:3]
    view.exponential_()
    a = x.numpy()
    assert a[0] == a[3] == 0.0 and (a[1:3] > 0).all()


def test_post_accumulate_grad_hook():
    def run(T):
        x = T.ones(2, requires_grad=True)
        seen = []
        handle = x.register_post_accumulate_grad_hook(
            lambda p: seen.append(p.grad.tolist())
        )
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        handle.remove()
        (x * 3).sum().backward()
        x.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(0).tolist().clear())
        (x * 3).sum().backward()
        y = T.ones(1, requires_grad=True)
        y.register_post_accumulate_grad_hook(lambda p: p.grad)
        with pytest.raises(RuntimeError, match="should return None"):
            y.sum().backward()
        return seen, x.grad.tolist()

    assert run(torch) == run(c)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (c.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)
