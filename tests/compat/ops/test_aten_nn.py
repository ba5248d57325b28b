"""compat's ``torch.*`` spellings of the layers' ATen ops (torch.dropout,
embedding, batch_norm, instance_norm, native_*_norm, constant_pad_nd,
convolution, norm_except_dim) against PyTorch: values, gradients, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
W = RNG.standard_normal(3).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
TABLE = RNG.standard_normal((5, 3)).astype(np.float32)
CONV = RNG.standard_normal((5, 3, 2)).astype(np.float32)
CONV_T = RNG.standard_normal((3, 5, 2)).astype(np.float32)
BIAS5 = RNG.standard_normal(5).astype(np.float32)


def _run(T, call, arrays):
    xs = [T.tensor(a.tolist(), requires_grad=True) for a in arrays]
    out = call(T, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * (i + 1)).sum() for i, o in enumerate(outs) if o.requires_grad)
    loss.backward()
    return outs, [x.grad for x in xs]


CASES = {
    "dropout_eval": (lambda T, x: T.dropout(x, 0.5, False), X),
    "dropout_p0": (lambda T, x: T.dropout(x, p=0.0, train=True), X),
    "dropout_p1": (lambda T, x: T.dropout(x, 1.0, True), X),
    "feature_dropout_p1": (lambda T, x: T.feature_dropout(x, 1.0, True), X),
    "alpha_dropout_p1": (lambda T, x: T.alpha_dropout(x, 1.0, True), X),
    "native_dropout_eval": (lambda T, x: T.native_dropout(x, 0.5, False), X),
    "native_dropout_p0": (lambda T, x: T.native_dropout(x, 0.0, None), X),
    "embedding": (lambda T, w: T.embedding(w, T.tensor([[0, 4], [4, 1]])), TABLE),
    "embedding_padding": (
        lambda T, w: T.embedding(w, T.tensor([0, 4, 4, 2]), 4, True),
        TABLE,
    ),
    "batch_norm_train": (
        lambda T, x, w, b: T.batch_norm(
            x, w, b, T.zeros(3), T.ones(3), True, 0.1, 1e-5, False
        ),
        X,
        W,
        B,
    ),
    "batch_norm_one_value_per_channel": (
        lambda T, x: T.batch_norm(
            x[:1, :, :1], None, None, None, None, True, 0.1, 1e-5, False
        ),
        X,
    ),
    "batch_norm_eval": (
        lambda T, x, w: T.batch_norm(
            x, w, None, T.zeros(3) + 0.5, T.ones(3) * 2, False, 0.1, 1e-5, True
        ),
        X,
        W,
    ),
    "instance_norm": (
        lambda T, x, w, b: T.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
        X,
        W,
        B,
    ),
    "native_batch_norm_train": (
        lambda T, x, w, b: T.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
        X,
        W,
        B,
    ),
    "native_batch_norm_eval": (
        lambda T, x: T.native_batch_norm(
            x, None, None, T.zeros(3), T.ones(3), False, 0.1, 1e-5
        ),
        X,
    ),
    "native_layer_norm": (
        lambda T, x: T.native_layer_norm(x, (3, 4), None, None, 1e-5),
        X,
    ),
    "native_group_norm": (
        lambda T, x, w, b: T.native_group_norm(x, w, b, 2, 3, 4, 3, 1e-5),
        X,
        W,
        B,
    ),
    "norm_except_dim_0": (lambda T, x: T.norm_except_dim(x), X),
    "norm_except_dim_1": (lambda T, x: T.norm_except_dim(x, 3, 1), X),
    "norm_except_dim_last": (lambda T, x: T.norm_except_dim(x, pow=1, dim=2), X),
    "norm_except_dim_all": (lambda T, x: T.norm_except_dim(x, 2, -1), X),
    "constant_pad_nd": (lambda T, x: T.constant_pad_nd(x, [1, 2, -1, 0], 3.5), X),
    "constant_pad_nd_int": (
        lambda T, x: T.constant_pad_nd(x.detach().long(), (1, 1), 2.5) + x.sum(),
        X,
    ),
    "convolution": (
        lambda T, x, w, b: T.convolution(x, w, b, [2], [1], [1], False, [0], 1),
        X,
        CONV,
        BIAS5,
    ),
    "convolution_transposed": (
        lambda T, x, w: T.convolution(x, w, None, (2,), (1,), (1,), True, (1,), 1),
        X,
        CONV_T,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_aten_layer_op_matches_torch(case):
    call, *arrays = CASES[case]
    theirs, their_grads = _run(torch, call, arrays)
    ours, our_grads = _run(c, call, arrays)
    assert len(ours) == len(theirs)
    for a, b in zip(theirs, ours, strict=True):
        assert tuple(b.shape) == tuple(a.shape)
        assert str(b.dtype) == str(a.dtype)
        assert b.requires_grad == a.requires_grad
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)
    for a, b in zip(their_grads, our_grads, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)


def test_dropout_in_training_zeroes_and_scales_as_torch():
    x = c.ones(2000)
    y = c.dropout(x, 0.25, True)
    kept = y != 0
    np.testing.assert_allclose(y[kept].tolist(), [1 / 0.75] * int(kept.sum()))
    assert 0.65 < kept.float().mean().item() < 0.85
    out, mask = c.native_dropout(x, 0.25, True)
    assert str(mask.dtype) == "torch.bool"
    assert (out == mask.float() / 0.75).all().item()
    z = c.ones(4, 8, 3)
    channels = c.feature_dropout(z, 0.5, True)
    assert all(len(set(row)) == 1 for row in channels.view(32, 3).tolist())


def test_dropout_in_place_returns_its_input():
    x = c.ones(3)
    assert c.dropout_(x, 0.5, False) is x
    y = c.ones(2, 3)
    assert c.feature_alpha_dropout_(y, 1.0, True) is y
    theirs = torch.feature_alpha_dropout_(torch.ones(2, 3), 1.0, True)
    np.testing.assert_allclose(y.tolist(), theirs.tolist())


def test_batch_norm_updates_the_running_statistics_as_torch():
    stats = {}
    for T in (torch, c):
        mean, var = T.zeros(3), T.ones(3)
        T.batch_norm(
            T.tensor(X.tolist()), None, None, mean, var, True, 0.3, 1e-5, False
        )
        stats[T] = (mean.tolist(), var.tolist())
    np.testing.assert_allclose(stats[c], stats[torch], rtol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.dropout(x, 1.5, True),
        lambda T, x: T.alpha_dropout(x, -0.1, False),
        lambda T, x: T.feature_dropout(x[0, 0], 0.5, True),
        lambda T, x: T.native_dropout(x, 1.5, True),
        lambda T, x: T.dropout(x, 0.5),
        lambda T, x: T.embedding(x[0], T.tensor([0, 5])),
        lambda T, x: T.embedding(x[0], T.tensor([0.0, 1.0])),
        lambda T, x: T.batch_norm(x, None, None, None, None, False, 0.1, 1e-5, False),
        lambda T, x: T.instance_norm(
            x, None, None, None, None, False, 0.1, 1e-5, False
        ),
        lambda T, x: T.native_batch_norm(x[:0], None, None, None, None, True, 0.1, 0.1),
        lambda T, x: T.native_group_norm(x, None, None, 2, 3, 5, 1, 1e-5),
        lambda T, x: T.constant_pad_nd(x, (1,)),
        lambda T, x: T.constant_pad_nd(x, (1,) * 8),
        lambda T, x: T.convolution(x[0], x, None, [1], [0], [1], False, [0], 1),
        lambda T, x: T.convolution(x, x, None, [1, 1], [0], [1], False, [0], 1),
        lambda T, x: T.convolution(x, x, None, 1, [0], [1], False, [0], 1),
        lambda T, x: T.convolution(x, x, None, [1], [0], [1], False, [0]),
    ],
)
def test_aten_layer_op_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(X.tolist()))
    with pytest.raises(type(theirs.value)) as ours:
        call(c, c.tensor(X.tolist()))
    if type(theirs.value) is not TypeError:
        assert str(ours.value) == str(theirs.value)


def test_what_compat_refuses_says_so():
    with pytest.raises(NotImplementedError, match="sparse"):
        c.native_norm(c.ones(3))
    x = c.ones(2, 3, 4, requires_grad=True)
    with pytest.raises(NotImplementedError, match="output_padding"):
        c.convolution(x, c.ones(5, 3, 2), None, [2], [0], [1], False, [1], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.native_layer_norm(x, [4], None, None, 1e-5)


@pytest.mark.parametrize(
    ("mode", "padding_idx", "include_last_offset"),
    [(0, None, False), (0, 3, True), (1, None, True), (1, -1, False), (2, 3, False)],
)
def test_embedding_bag_returns_atens_four_results(
    mode, padding_idx, include_last_offset
):
    offsets = [0, 2, 2, 5] if include_last_offset else [0, 2, 2]
    results = []
    for T in (torch, c):
        w = T.tensor(TABLE[:, :2].tolist() + [[0.5, -0.5]], requires_grad=True)
        out = T.embedding_bag(
            w,
            T.tensor([3, 0, 5, 3, 1]),
            T.tensor(offsets),
            False,
            mode,
            False,
            None,
            include_last_offset,
            padding_idx,
        )
        out[0].sum().backward()
        results.append([*out, w.grad])
    for a, b in zip(*results, strict=True):
        assert tuple(b.shape) == tuple(a.shape) and str(b.dtype) == str(a.dtype)
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-5, atol=1e-6)


def test_embedding_bag_refuses_where_torchs_kernels_disagree():
    w, i = c.ones(6, 2), c.tensor([3, 0, 5, 3, 1])
    with pytest.raises(NotImplementedError, match="include_last_offset"):
        c.embedding_bag(w, i, c.tensor([0, 2, 2]), False, 1, False, None, True)
    with pytest.raises(NotImplementedError, match="1-D indices"):
        c.embedding_bag(w, i.view(1, 5), c.tensor([0]))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_embedding_bag_sum_extras_follow_atens_kernel_for_grad_or_not(requires_grad):
    """A sum's ``bag_size`` and ``max_indices``: one per offset from ATen's
    forward-only kernel (nothing requires grad), one per bag otherwise."""
    got = []
    for T in (torch, c):
        w = T.tensor(TABLE[:, :2].tolist(), requires_grad=requires_grad)
        out = T.embedding_bag(
            w, T.tensor([3, 0, 4, 3, 1]), T.tensor([0, 2, 2, 5]),
            False, 0, False, None, True, None,
        )  # fmt: skip
        got.append([(tuple(o.shape), o.tolist()) for o in out[1:]])
    assert got[1] == got[0]
