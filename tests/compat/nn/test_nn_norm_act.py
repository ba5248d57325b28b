"""compat's remaining norms, activations and dropout variants against real
PyTorch: what the OpInfo/ModuleInfo samples do not cover (module options,
parameter names, repr, errors, running statistics, random ops' statistics,
torch's legacy CrossMapLRN2d and a training step)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

F, TF = compat.nn.functional, torch.nn.functional


def _pair(shape, seed=0, requires_grad=True):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return (
        compat.tensor(a, requires_grad=requires_grad),
        torch.tensor(a, requires_grad=requires_grad),
    )


def _close(got, expected, atol=1e-5):
    np.testing.assert_allclose(
        got.detach().numpy(), expected.detach().numpy(), rtol=1e-4, atol=atol
    )


REPRS = [
    ("PReLU", (3, 0.1), {}),
    ("RReLU", (0.1, 0.3, True), {}),
    ("Threshold", (0.1, 20), {}),
    ("Hardshrink", (), {}),
    ("Softshrink", (0.3,), {}),
    ("SELU", (True,), {}),
    ("Mish", (), {}),
    ("Hardsigmoid", (True,), {}),
    ("Hardswish", (True,), {}),
    ("CELU", (0.5, True), {}),
    ("GLU", (), {}),
    ("Softmin", (1,), {}),
    ("Softmax2d", (), {}),
    ("GroupNorm", (2, 4), {"affine": False}),
    ("RMSNorm", ([2, 3],), {"eps": 1e-6}),
    ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}),
    ("InstanceNorm3d", (3,), {"bias": False, "affine": True}),
    ("BatchNorm3d", (3,), {}),
    ("LocalResponseNorm", (2,), {}),
    ("CrossMapLRN2d", (3,), {}),
    ("Dropout1d", (0.2,), {}),
    ("Dropout3d", (), {"inplace": True}),
    ("AlphaDropout", (0.1,), {}),
    ("FeatureAlphaDropout", (), {}),
]


@pytest.mark.parametrize("name,args,kwargs", REPRS, ids=[r[0] for r in REPRS])
def test_modules_print_and_hold_parameters_as_torch(name, args, kwargs):
    got = getattr(compat.nn, name)(*args, **kwargs)
    expected = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(got) == repr(expected)
    assert list(got.state_dict()) == list(expected.state_dict())
    for (n, v), (tn, tv) in zip(
        got.state_dict().items(), expected.state_dict().items(), strict=True
    ):
        assert n == tn and tuple(v.shape) == tuple(tv.shape)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())


def test_class_hierarchy_follows_torch():
    assert not isinstance(compat.nn.InstanceNorm2d(3), compat.nn.BatchNorm2d)
    assert not isinstance(compat.nn.Mish(), compat.nn.SELU)
    assert not isinstance(compat.nn.Softmin(), compat.nn.LogSoftmax)
    assert not isinstance(compat.nn.Softshrink(), compat.nn.Hardshrink)
    assert not isinstance(compat.nn.CrossMapLRN2d(3), compat.nn.LocalResponseNorm)


@pytest.mark.parametrize("track", [False, True])
def test_instance_norm_updates_running_stats_as_torch(track):
    kwargs = {"affine": True, "track_running_stats": track, "momentum": 0.3}
    got, expected = (
        compat.nn.InstanceNorm2d(3, **kwargs),
        torch.nn.InstanceNorm2d(3, **kwargs),
    )
    for seed in range(2):
        x, tx = _pair((2, 3, 4, 5), seed)
        _close(got(x), expected(tx))
    for name, buffer in expected.state_dict().items():
        _close(got.state_dict()[name], buffer)
    got.eval(), expected.eval()
    x, tx = _pair((3, 4, 5), 5)  # unbatched
    _close(got(x), expected(tx))


def test_instance_norm_warns_and_refuses_channel_mismatch_as_torch():
    x = compat.zeros(2, 4, 5)
    with pytest.warns(UserWarning, match="does not match num_features"):
        compat.nn.InstanceNorm1d(3)(x)
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match"):
        compat.nn.InstanceNorm1d(3, affine=True)(x)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        compat.nn.InstanceNorm1d(3)(compat.zeros(1, 3, 2, 2))


ERRORS = {
    "group_norm_groups": lambda F, lib: F.group_norm(lib.zeros(2, 4, 3), 3),
    "group_norm_weight": lambda F, lib: F.group_norm(lib.zeros(2, 4), 2, lib.ones(3)),
    "group_norm_one": lambda F, lib: F.group_norm(lib.zeros(1, 4), 4),
    "group_norm_int": lambda F, lib: F.group_norm(lib.zeros(2, 4, dtype=lib.long), 2),
    "rms_norm_shape": lambda F, lib: F.rms_norm(lib.zeros(2, 3), [4]),
    "instance_norm_spatial": lambda F, lib: F.instance_norm(lib.zeros(2, 3, 1)),
    "softshrink_lambda": lambda F, lib: F.softshrink(lib.zeros(2), -1.0),
    "celu_zero": lambda F, lib: F.celu(lib.zeros(2), 0.0),
    "glu_odd": lambda F, lib: F.glu(lib.zeros(2, 3), 1),
    "glu_scalar": lambda F, lib: F.glu(lib.tensor(1.0)),
    "prelu_channels": lambda F, lib: F.prelu(lib.zeros(2, 3), lib.ones(2)),
    "prelu_dtype": lambda F, lib: F.prelu(
        lib.zeros(2, 3), lib.ones(3, dtype=lib.float64)
    ),
    "rrelu_bounds": lambda F, lib: F.rrelu(lib.zeros(2), 0.5, 0.1),
    "threshold_overflow": lambda F, lib: F.threshold(
        lib.zeros(2, dtype=lib.uint8), 1, 300
    ),
    "mish_int": lambda F, lib: F.mish(lib.zeros(2, dtype=lib.long)),
    "dropout1d_rank": lambda F, lib: F.dropout1d(lib.zeros(2, 3, 4, 5)),
    "dropout_p": lambda F, lib: F.alpha_dropout(lib.zeros(2), 1.5),
    "feature_rank": lambda F, lib: F.feature_alpha_dropout(lib.zeros(3), 0.5, True),
    "lrn_rank": lambda F, lib: F.local_response_norm(lib.zeros(2, 3), 2),
    "softmax2d_rank": lambda F, lib: lib.nn.Softmax2d()(lib.zeros(2, 3)),
    "group_norm_module": lambda F, lib: lib.nn.GroupNorm(3, 4),
}


@pytest.mark.parametrize("make", ERRORS.values(), ids=ERRORS.keys())
def test_bad_input_raises_torchs_error(make):
    with pytest.raises(Exception) as expected:
        make(TF, torch)
    with pytest.raises(type(expected.value)) as got:
        make(F, compat)
    assert str(got.value) == str(expected.value)


def test_threshold_casts_its_bounds_to_an_integer_input_as_torch():
    a = np.arange(-3, 3)
    got = F.threshold(compat.tensor(a), -1.5, 7.9)
    np.testing.assert_array_equal(
        got.numpy(), TF.threshold(torch.tensor(a), -1.5, 7.9).numpy()
    )


def test_inplace_variants_modify_their_input():
    for name, args in [
        ("celu_", ()),
        ("selu_", ()),
        ("elu_", (0.5,)),
        ("hardtanh_", (-0.5, 0.5)),
        ("leaky_relu_", (0.2,)),
        ("relu_", ()),
        ("threshold_", (0.1, 2.0)),
        ("rrelu_", ()),
    ]:
        x, tx = _pair((2, 3), requires_grad=False)
        assert getattr(F, name)(x, *args) is x
        getattr(TF, name)(tx, *args)
        _close(x, tx)


def test_rrelu_draws_slopes_between_its_bounds_and_scales_the_gradient():
    x = compat.full((20000,), -2.0, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = (y / -2.0).detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)
    m = compat.nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(m(compat.tensor([-2.0, 3.0])).numpy(), [-0.4, 3.0])


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_a_standard_input_standard(feature):
    compat.manual_seed(0)
    x = compat.randn(400, 50, 4) if feature else compat.randn(100000)
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    y = fn(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.03 and abs(y.std() - 1) < 0.03
    # a dropped element is the SELU's negative saturation, scaled
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.3 + 1) * 0.7)
    dropped = -1.7580993408473766 * a * 0.7
    assert np.isclose(y, dropped, atol=1e-6).mean() == pytest.approx(0.3, abs=0.02)
    if feature:  # whole channels dropped together
        per_channel = np.isclose(y, dropped, atol=1e-6).all(-1)
        assert per_channel.mean() == pytest.approx(0.3, abs=0.02)


def test_channel_dropout_zeroes_whole_channels_and_keeps_unbatched_shapes():
    compat.manual_seed(1)
    for fn, shape in [(F.dropout1d, (8, 20, 6)), (F.dropout1d, (20, 6))]:
        y = fn(compat.ones(*shape), 0.5).numpy()
        assert y.shape == shape
        assert set(np.unique(y)) <= {0.0, 2.0}
        assert (y.min(-1) == y.max(-1)).all()
    y = F.dropout3d(compat.ones(8, 2, 2, 2), 0.5).numpy()  # unbatched (C, D, H, W)
    assert y.shape == (8, 2, 2, 2)
    assert (y.reshape(8, -1).min(-1) == y.reshape(8, -1).max(-1)).all()
    x = compat.ones(3, 4)
    assert F.dropout1d(x, 0.5, inplace=True) is x and x.shape == (3, 4)
    x = compat.ones(5)
    assert F.alpha_dropout(x, 0.5) is x  # not training: the input itself


def test_gumbel_softmax_samples_the_softmax_and_hard_is_one_hot():
    compat.manual_seed(0)
    logits = compat.tensor([[1.0, 2.0, 0.5]] * 4000, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1, rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True)
    counts = hard.detach().numpy().sum(0) / 4000
    expected = torch.softmax(torch.tensor([1.0, 2.0, 0.5]), 0).numpy()
    np.testing.assert_allclose(counts, expected, atol=0.03)
    assert set(np.unique(hard.detach().numpy())) == {0.0, 1.0}
    (hard * compat.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0


@pytest.mark.parametrize("size", [2, 3, 5])
def test_cross_map_lrn2d_gives_torchs_values_and_gradients(size):
    x, tx = _pair((2, 6, 3, 2))
    got = compat.nn.CrossMapLRN2d(size, 0.5, 0.75, 2.0)(x)
    expected = torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 2.0)(tx)
    _close(got, expected)
    g = np.random.default_rng(1).standard_normal((2, 6, 3, 2)).astype(np.float32)
    got.backward(compat.tensor(g))
    expected.backward(torch.tensor(g))
    _close(x.grad, tx.grad)


def test_a_training_step_matches_torch():
    def build(nn):
        return nn.Sequential(
            nn.GroupNorm(2, 4),
            nn.PReLU(4),
            nn.InstanceNorm1d(4, affine=True),
            nn.Hardswish(),
            nn.Flatten(),
            nn.Linear(4 * 5, 3),
            nn.RMSNorm(3),
            nn.CELU(0.5),
        )

    torch.manual_seed(0)
    expected = build(torch.nn)
    got = build(compat.nn)
    got.load_state_dict(
        {k: compat.tensor(v.numpy()) for k, v in expected.state_dict().items()}
    )
    opt = compat.optim.SGD(got.parameters(), lr=0.1)
    topt = torch.optim.SGD(expected.parameters(), lr=0.1)
    x, tx = _pair((3, 4, 5), requires_grad=False)
    loss, tloss = (got(x) ** 2).mean(), (expected(tx) ** 2).mean()
    _close(loss, tloss)
    loss.backward(), tloss.backward()
    opt.step(), topt.step()
    for name, p in expected.named_parameters():
        _close(dict(got.named_parameters())[name], p)
