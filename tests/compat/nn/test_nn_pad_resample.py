"""compat's padding, resampling and sampling grids against PyTorch: F.pad and the
padding modules; what PyTorch's OpInfo/ModuleInfo samples leave out (negative and
large widths, every error, reprs, a training step)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat
import jaxblitz.compat.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(shape, dtype="float32", seed=0):
    """The same random tensor in torch and in compat."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return torch.tensor(x), compat.tensor(x)


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 -- the error is the outcome compared
        return None, e


def _same(ref, got, rtol=1e-5, atol=1e-6):
    assert tuple(got.shape) == tuple(ref.shape)
    assert str(got.dtype) == str(ref.dtype)
    np.testing.assert_allclose(
        np.asarray(got.detach().numpy(), dtype=np.float64),
        ref.detach().double().numpy(),
        rtol=rtol,
        atol=atol,
    )


def _same_outcome(t_call, c_call, rtol=1e-5):
    """Both return equal tensors, or both raise the same error and message."""
    ref, t_err = _outcome(t_call)
    got, c_err = _outcome(c_call)
    if t_err is not None:
        assert type(c_err) is type(t_err), (t_err, c_err)
        assert str(c_err) == str(t_err)
        return
    assert c_err is None, c_err
    _same(ref, got, rtol=rtol)


# -- F.pad ---------------------------------------------------------------------------

PAD_CASES = [
    # (shape, pad, mode, value)
    ((2, 3, 5), (1,), "constant", None),
    ((2, 3, 5), (1, 1) * 4, "constant", None),
    ((2, 3, 4, 5), (1, 2, 0, 3, 1, 1, 2, 0), "constant", 1.5),
    ((2, 3, 4, 5), (-1, 2, -2, -1), "constant", None),
    ((2, 3, 4, 5), (-3, -3), "constant", None),
    ((2, 3, 4, 5), (-5, 1), "constant", None),
    ((2, 3, 5), (1, 1), "bogus", None),
    ((2, 3, 5), (-2, 4), "reflect", None),
    ((2, 3, 5), (4, 4), "reflect", None),
    ((2, 3, 5), (5, 0), "reflect", None),
    ((2, 3, 5), (-4, -4), "reflect", None),
    ((2, 3, 5), (-3, -2), "reflect", None),
    ((2, 3, 5), (1, 1), "reflect", 1.0),
    ((2, 3, 5), (1, 1), "reflect", 0.0),
    ((2, 3, 3, 5), (7, 1, 9, 1), "reflect", None),
    ((2, 3, 3, 5), (1, 1, 3, 0), "reflect", None),
    ((2, 3, 3, 5), (-3, -3, -3, -3), "reflect", None),
    ((2, 3, 3, 5), (-3, -2, 1, 1), "reflect", None),
    ((2, 3, 3, 4, 5), (1, 1, 1, 4, 3, 1), "reflect", None),
    ((2, 3, 3, 4, 5), (-3, -3, -3, -3, -3, -3), "reflect", None),
    ((2, 0, 5), (1, 1), "reflect", None),
    ((0, 3, 5), (1, 1), "reflect", None),
    ((2, 3, 4, 5), (1, 1), "reflect", None),
    ((5,), (1, 1), "reflect", None),
    ((2, 3, 4, 5), (1, 1) * 4, "reflect", None),
    ((2, 3, 5), (-2, 4), "replicate", None),
    ((2, 3, 5), (-6, 2), "replicate", None),
    ((2, 3, 5), (-3, -3), "replicate", None),
    ((2, 3, 3, 5), (-3, -3, -3, -3), "replicate", None),
    ((2, 3, 3, 5), (-3, -3, 1, 1), "replicate", None),
    ((2, 3, 3, 4, 5), (1, 1, 1, 4, 3, 1), "replicate", None),
    ((2, 0, 3, 4, 5), (1, 1, 1, 1, 1, 1), "replicate", None),
    ((2, 3, 5), (-1, 2), "circular", None),
    ((2, 3, 5), (2, -1), "circular", None),
    ((2, 3, 5), (5, 5), "circular", None),
    ((2, 3, 5), (6, 5), "circular", None),
    ((2, 3, 5), (-3, -2), "circular", None),
    ((2, 3, 5), (-3, -3), "circular", None),
    ((2, 3, 0), (1, 1), "circular", None),
    ((2, 3, 3, 4, 5), (1, 2, 3, 0, 2, 2), "circular", None),
]


@pytest.mark.parametrize("shape, pad, mode, value", PAD_CASES)
def test_pad_matches_torch_values_and_errors(shape, pad, mode, value):
    t, c = _pair(shape)
    _same_outcome(
        lambda: TF.pad(t, pad, mode, value), lambda: F.pad(c, pad, mode, value)
    )


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradient_matches_torch(mode):
    t, c = _pair((2, 3, 4, 5))
    t.requires_grad_(True)
    c.requires_grad_(True)
    pad = (-1, 4, 2, -2) if mode != "reflect" else (-1, 3, 3, -2)
    ref, got = TF.pad(t, pad, mode), F.pad(c, pad, mode)
    assert got.grad_fn.name() == ref.grad_fn.name()
    cot = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    ref.backward(torch.tensor(cot, dtype=torch.float32))
    got.backward(compat.tensor(cot.astype(np.float32)))
    _same(t.grad, c.grad)


@pytest.mark.parametrize(
    "dtype, mode, value",
    [
        ("int64", "constant", -2.7),
        ("bool", "constant", 0.5),
        ("int32", "reflect", None),
        ("uint8", "circular", None),
        ("bool", "replicate", None),
    ],
)
def test_pad_dtypes_match_torch(dtype, mode, value):
    x = np.arange(30).reshape(2, 3, 5) % 7
    t, c = torch.tensor(x.astype(dtype)), compat.tensor(x.astype(dtype))
    _same_outcome(
        lambda: TF.pad(t, (2, 1), mode, value), lambda: F.pad(c, (2, 1), mode, value)
    )


@pytest.mark.parametrize("pad", [1, (1.5, 1), [True, 1], None, "ab"])
def test_pad_argument_types_raise_torchs_type_error(pad):
    t, c = _pair((2, 3))
    _same_outcome(lambda: TF.pad(t, pad), lambda: F.pad(c, pad))


def test_pad_refuses_a_non_tensor_and_a_non_number_value():
    t, c = _pair((2, 3))
    _same_outcome(lambda: TF.pad([1, 2], (1, 1)), lambda: F.pad([1, 2], (1, 1)))
    _same_outcome(
        lambda: TF.pad(t, (1, 1), "constant", "a"),
        lambda: F.pad(c, (1, 1), "constant", "a"),
    )


# -- padding modules -----------------------------------------------------------------

PAD_MODULES = [
    ("ConstantPad1d", (2, 1.5)),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.0)),
    ("ConstantPad3d", (1, 0.0)),
    ("ZeroPad1d", ((0, 2),)),
    ("ZeroPad2d", (1,)),
    ("ZeroPad3d", ((1, 0, 0, 1, 1, 1),)),
    ("ReflectionPad1d", (2,)),
    ("ReflectionPad2d", ((1, 0, 2, 1),)),
    ("ReflectionPad3d", (1,)),
    ("ReplicationPad1d", ((3, 0),)),
    ("ReplicationPad2d", (2,)),
    ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),)),
    ("CircularPad1d", (2,)),
    ("CircularPad2d", ((1, 0, 2, 1),)),
    ("CircularPad3d", (1,)),
]


@pytest.mark.parametrize("name, args", PAD_MODULES)
def test_padding_modules_repr_and_padding_match_torch(name, args):
    ref, got = getattr(torch.nn, name)(*args), getattr(compat.nn, name)(*args)
    assert repr(got) == repr(ref)
    assert got.padding == ref.padding


@pytest.mark.parametrize("name", ["CircularPad1d", "CircularPad2d", "CircularPad3d"])
def test_circular_pad_modules_check_the_input_rank(name):
    t, c = _pair((2,) * 6)
    _same_outcome(
        lambda: getattr(torch.nn, name)(1)(t), lambda: getattr(compat.nn, name)(1)(c)
    )


def _train(lib, model, x, steps=2):
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()


def _copy_weights(src, dst):
    """dst (torch) takes src's (compat) weights."""
    state = {k: torch.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(state)


def test_a_padded_linear_layer_trains_as_torch():
    t, c = _pair((2, 3, 4))
    net = compat.nn.Sequential(
        compat.nn.ReflectionPad1d((2, 1)), compat.nn.Linear(7, 2)
    )
    ref = torch.nn.Sequential(torch.nn.ReflectionPad1d((2, 1)), torch.nn.Linear(7, 2))
    _copy_weights(net, ref)
    _train(torch, ref, t)
    _train(compat, net, c)
    for k, v in ref.state_dict().items():
        _same(v, net.state_dict()[k])


# -- F.interpolate -------------------------------------------------------------------

INTERP_CASES = [
    # (input shape, keyword arguments)
    ((2, 3, 5), dict(size=1, mode="linear")),
    ((2, 3, 5), dict(scale_factor=2.1, mode="nearest")),
    ((2, 3, 5, 4), dict(scale_factor=(1, 2.1), mode="nearest")),
    ((2, 3, 5, 4), dict(scale_factor=1.7, mode="bilinear", align_corners=True)),
    ((2, 3, 5, 4), dict(scale_factor=1.7, mode="bicubic", recompute_scale_factor=True)),
    ((2, 3, 8, 9), dict(size=(3, 4), mode="bilinear", antialias=True)),
    ((2, 3, 8, 9), dict(size=(3, 12), mode="bicubic", antialias=True)),
    ((2, 3, 6, 7), dict(scale_factor=(1.1, 0.5), mode="lanczos", antialias=True)),
    ((2, 3, 3, 4, 5), dict(size=(2, 5, 3), mode="trilinear")),
]


@pytest.mark.parametrize("shape, kwargs", INTERP_CASES)
def test_interpolate_values_and_gradients_match_torch(shape, kwargs):
    t, c = _pair(shape)
    t.requires_grad_(True)
    c.requires_grad_(True)
    ref, got = TF.interpolate(t, **kwargs), F.interpolate(c, **kwargs)
    assert got.grad_fn.name() == ref.grad_fn.name()
    _same(ref, got)
    cot = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    ref.backward(torch.tensor(cot, dtype=torch.float32))
    got.backward(compat.tensor(cot.astype(np.float32)))
    _same(t.grad, c.grad, rtol=1e-4, atol=1e-5)


INTERP_ERRORS = [
    ((2, 3, 5, 4), dict(size=(0, 3), mode="bilinear")),
    ((2, 3, 5), dict(size=0, mode="nearest")),
    ((2, 0, 5, 4), dict(size=(3, 3), mode="bilinear")),
    ((2, 3, 5, 4), dict(size=(7, 3), scale_factor=2)),
    ((2, 3, 5, 4), dict(size=(7, 3, 3))),
    ((2, 3, 5, 4), dict(scale_factor=(2, 2, 2))),
    ((2, 3, 5, 4), dict()),
    ((2, 3, 5, 4), dict(size=(7.0, 3))),
    ((2, 3, 5, 4), dict(size=(7, 3), recompute_scale_factor=True)),
    ((2, 3, 5, 4), dict(size=(7, 3), align_corners=True)),
    ((2, 3, 5), dict(size=7, mode="bilinear", antialias=True)),
    ((2, 3, 5), dict(size=7, mode="trilinear")),
    ((2, 3, 5, 4), dict(size=7, mode="bogus")),
    ((2, 3, 5), dict(size=7, mode="bicubic")),
    ((2, 3, 5, 4), dict(size=7, mode="lanczos")),
]


@pytest.mark.parametrize("shape, kwargs", INTERP_ERRORS)
def test_interpolate_errors_match_torch(shape, kwargs):
    t, c = _pair(shape)
    _same_outcome(
        lambda: TF.interpolate(t, **kwargs), lambda: F.interpolate(c, **kwargs)
    )


@pytest.mark.parametrize("dtype", ["uint8", "int64", "float16"])
def test_interpolate_dtypes_match_torch(dtype):
    x = np.random.default_rng(0).integers(0, 255, (1, 2, 5, 4)).astype(dtype)
    t, c = torch.tensor(x), compat.tensor(x)
    modes = [("nearest", False), ("nearest-exact", False)]
    modes += [] if dtype == "uint8" else [("bilinear", True), ("bicubic", False)]
    for mode, aa in modes:
        _same_outcome(
            lambda m=mode, a=aa: TF.interpolate(t, size=(7, 3), mode=m, antialias=a),
            lambda m=mode, a=aa: F.interpolate(c, size=(7, 3), mode=m, antialias=a),
            rtol=1e-2 if dtype == "float16" else 1e-5,  # torch weighs in half
        )


def test_uint8_linear_resampling_is_refused_by_name():
    c = compat.zeros(1, 1, 4, 4, dtype=compat.uint8)
    with pytest.raises(NotImplementedError, match="mode='bilinear'"):
        F.interpolate(c, size=(2, 2), mode="bilinear")


def test_deprecated_upsample_functions_warn_as_torch():
    t, c = _pair((1, 2, 3, 3))
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        with pytest.warns(UserWarning, match=f"nn.functional.{name}` is deprecated"):
            got = getattr(F, name)(c, scale_factor=2)
        with pytest.warns(UserWarning):
            ref = getattr(TF, name)(t, scale_factor=2)
        _same(ref, got)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("Upsample", (), dict(scale_factor=2, mode="bilinear", align_corners=True)),
        ("Upsample", ((4, 6),), dict(mode="nearest-exact")),
        ("Upsample", (), dict(scale_factor=(1, 2))),
        ("UpsamplingNearest2d", (), dict(scale_factor=2)),
        ("UpsamplingBilinear2d", ((5, 3),), dict()),
    ],
)
def test_upsampling_modules_match_torch(name, args, kwargs):
    ref = getattr(torch.nn, name)(*args, **kwargs)
    got = getattr(compat.nn, name)(*args, **kwargs)
    assert repr(got) == repr(ref)
    assert (got.size, got.scale_factor, got.mode) == (
        ref.size,
        ref.scale_factor,
        ref.mode,
    )
    t, c = _pair((1, 2, 3, 4))
    _same(ref(t), got(c))


# -- F.fold / F.unfold ----------------------------------------------------------------


def test_unfold_then_fold_match_torch_with_gradients():
    t, c = _pair((2, 3, 5, 6))
    t.requires_grad_(True)
    c.requires_grad_(True)
    args = ((2, 3), (1, 2), 1, (2, 1))  # kernel, dilation, padding, stride
    ref, got = TF.unfold(t, *args), F.unfold(c, *args)
    assert got.grad_fn.name() == ref.grad_fn.name() == "Im2ColBackward0"
    _same(ref, got)
    ref, got = TF.fold(ref, (5, 6), *args), F.fold(got, (5, 6), *args)
    assert got.grad_fn.name() == "Col2ImBackward0"
    _same(ref, got)
    ref.square().sum().backward()
    got.square().sum().backward()
    _same(t.grad, c.grad)


FOLD_ERRORS = [
    ("unfold", (2, 3), ((2, 2, 2),)),
    ("unfold", (2, 3, 5, 6), (7,)),
    ("unfold", (2, 3, 5, 6), (2, 0)),
    ("unfold", (2, 3, 5, 6), (2, 1, -1)),
    ("unfold", (2, 0, 5, 6), (2,)),
    ("unfold", (2, 3, 4, 5, 6), (2,)),
    ("fold", (2, 12, 20), ((5, 6), 3)),
    ("fold", (2, 12, 20), ((5, 7), 2)),
    ("fold", (2, 12, 20), ((0, 6), 2)),
    ("fold", (2, 3, 4, 5), ((5, 6), 2)),
    ("fold", (2, 12, 0), ((5, 6), 2)),
]


@pytest.mark.parametrize("name, shape, args", FOLD_ERRORS)
def test_fold_and_unfold_errors_match_torch(name, shape, args):
    t, c = _pair(shape)
    _same_outcome(
        lambda: getattr(TF, name)(t, *args), lambda: getattr(F, name)(c, *args)
    )


def test_fold_modules_repr_and_values_match_torch():
    ref, got = (
        torch.nn.Unfold(2, padding=1, stride=2),
        compat.nn.Unfold(2, padding=1, stride=2),
    )
    assert repr(got) == repr(ref)
    t, c = _pair((1, 2, 4, 4))
    _same(ref(t), got(c))
    ref, got = (
        torch.nn.Fold((4, 4), 2, padding=1, stride=2),
        compat.nn.Fold((4, 4), 2, padding=1, stride=2),
    )
    assert repr(got) == repr(ref)
    t, c = _pair((1, 8, 9))
    _same(ref(t), got(c))


# -- channel shuffle ------------------------------------------------------------------


@pytest.mark.parametrize("groups", [3, 4, 0, 2.0])
def test_channel_shuffle_matches_torch(groups):
    t, c = _pair((2, 6, 2, 2))
    for name in ("channel_shuffle", "native_channel_shuffle"):
        _same_outcome(
            lambda n=name: getattr(TF, n)(t, groups),
            lambda n=name: getattr(F, n)(c, groups),
        )


def test_channel_shuffle_gradient_and_the_native_ops_missing_derivative():
    t, c = _pair((2, 6, 3))
    t.requires_grad_(True)
    c.requires_grad_(True)
    ref, got = torch.nn.ChannelShuffle(2), compat.nn.ChannelShuffle(2)
    assert repr(got) == repr(ref)
    (ref(t) * torch.arange(3.0)).sum().backward()
    (got(c) * compat.arange(3.0)).sum().backward()
    _same(t.grad, c.grad)
    _same_outcome(
        lambda: TF.native_channel_shuffle(t, 2).sum().backward(),
        lambda: F.native_channel_shuffle(c, 2).sum().backward(),
    )


# -- affine_grid / grid_sample --------------------------------------------------------

GRID_CASES = [
    # (input shape, grid shape, mode, padding_mode, align_corners)
    ((2, 3, 4, 5), (2, 3, 2, 2), "bilinear", "reflection", False),
    ((2, 3, 4, 5), (2, 3, 2, 2), "bicubic", "border", True),
    ((1, 2, 3, 4, 5), (1, 2, 3, 2, 3), "bilinear", "zeros", True),
]


@pytest.mark.parametrize("shape, grid_shape, mode, padding, corners", GRID_CASES)
def test_grid_sample_values_and_both_gradients_match_torch(
    shape, grid_shape, mode, padding, corners
):
    t, c = _pair(shape)
    g = np.random.default_rng(2).uniform(-1.5, 1.5, grid_shape).astype("float32")
    tg, cg = torch.tensor(g), compat.tensor(g)
    for v in (t, c, tg, cg):
        v.requires_grad_(True)
    ref = TF.grid_sample(t, tg, mode, padding, corners)
    got = F.grid_sample(c, cg, mode, padding, corners)
    assert got.grad_fn.name() == ref.grad_fn.name()
    _same(ref, got)
    cot = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype("float32")
    ref.backward(torch.tensor(cot))
    got.backward(compat.tensor(cot))
    _same(t.grad, c.grad, rtol=1e-4, atol=1e-5)
    _same(tg.grad, cg.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 2, 3, 4]])
def test_affine_grid_feeds_grid_sample_as_torch(size):
    k = len(size) - 2
    theta = np.random.default_rng(0).standard_normal((2, k, k + 1)).astype("float32")
    tt, ct = torch.tensor(theta, requires_grad=True), compat.tensor(theta)
    ct.requires_grad_(True)
    ref, got = TF.affine_grid(tt, size, False), F.affine_grid(ct, size, False)
    assert got.grad_fn.name() == "AffineGridGeneratorBackward0"
    _same(ref, got)
    t, c = _pair(tuple(size))
    TF.grid_sample(t, ref, align_corners=False).sum().backward()
    F.grid_sample(c, got, align_corners=False).sum().backward()
    _same(tt.grad, ct.grad, rtol=1e-4, atol=1e-4)


GRID_ERRORS = [
    ("grid_sample", ((1, 1, 3, 3), (1, 2, 2, 2)), dict(mode="bogus")),
    ("grid_sample", ((1, 1, 3, 3), (1, 2, 2, 2)), dict(padding_mode="bogus")),
    ("grid_sample", ((1, 1, 3, 3), (2, 2, 2, 2)), dict(align_corners=False)),
    ("grid_sample", ((1, 1, 3, 3), (1, 2, 2, 3)), dict(align_corners=False)),
    ("grid_sample", ((1, 1, 3), (1, 2, 2)), dict(align_corners=False)),
    (
        "grid_sample",
        ((1, 1, 2, 3, 3), (1, 2, 2, 2, 3)),
        dict(mode="bicubic", align_corners=False),
    ),
    ("affine_grid", ((2, 2, 3), [2, 3, 4]), dict(align_corners=False)),
    ("affine_grid", ((2, 2, 3), [2, 3, 4, 5, 6]), dict(align_corners=False)),
    ("affine_grid", ((2, 2, 3), [3, 3, 4, 5]), dict(align_corners=False)),
    ("affine_grid", ((2, 2, 3), [2, 0, 4, 5]), dict(align_corners=False)),
]


@pytest.mark.parametrize("name, shapes, kwargs", GRID_ERRORS)
def test_grid_errors_match_torch(name, shapes, kwargs):
    t, c = _pair(shapes[0])
    if name == "grid_sample":
        tg, cg = _pair(shapes[1])
    else:
        tg = cg = shapes[1]
    _same_outcome(
        lambda: getattr(TF, name)(t, tg, **kwargs),
        lambda: getattr(F, name)(c, cg, **kwargs),
    )


def test_grid_functions_warn_without_align_corners():
    t, c = _pair((1, 2, 3))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        grid = F.affine_grid(c, [1, 1, 2, 2])
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(compat.ones(1, 1, 2, 2), grid)
