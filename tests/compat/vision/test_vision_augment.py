"""compat.vision's tensor geometry (rotate, affine, perspective, elastic) and the
automatic augmentations (AutoAugment, RandAugment, TrivialAugmentWide, AugMix).

The geometry is checked against torchvision's ``_functional_tensor`` recipe
written out here in real PyTorch (its own grid, then torch's ``grid_sample``)
and against exact identities (a quarter turn is ``rot90``); the random transforms
by the draws they make, in torchvision's order, from compat's generator.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import jaxblitz.compat as jtorch
from jaxblitz.compat.vision import transforms as T
from jaxblitz.compat.vision.transforms import autoaugment as AA
from jaxblitz.compat.vision.transforms import functional as F

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
CHW = RNG.random((3, 9, 11), dtype=np.float32)
U8 = RNG.integers(0, 256, (3, 10, 7), dtype=np.uint8)
NEAREST, BILINEAR = T.InterpolationMode.NEAREST, T.InterpolationMode.BILINEAR


# torchvision's _functional_tensor grid transforms, in PyTorch


def _ref_affine_grid(theta, w, h, ow, oh):
    base = torch.empty(1, oh, ow, 3, dtype=theta.dtype)
    xs = torch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, steps=ow)
    base[..., 0].copy_(xs)
    ys = torch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, steps=oh)
    base[..., 1].copy_(ys[:, None])
    base[..., 2].fill_(1)
    scaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=theta.dtype)
    return base.view(1, oh * ow, 3).bmm(scaled).view(1, oh, ow, 2)


def _ref_apply(img, grid, mode, fill):
    squeeze, out_dtype = img.ndim < 4, img.dtype
    img = img.unsqueeze(0) if squeeze else img
    img = img.to(grid.dtype)
    if fill is not None:
        img = torch.cat((img, torch.ones_like(img[:, :1])), dim=1)
    img = torch.nn.functional.grid_sample(
        img, grid.expand(img.shape[0], -1, -1, -1), mode, "zeros", False
    )
    if fill is not None:
        mask, img = img[:, -1:].expand_as(img[:, :-1]), img[:, :-1]
        fills = fill if isinstance(fill, list) else [float(fill)]
        fill_img = torch.tensor(fills, dtype=img.dtype).view(1, -1, 1, 1).expand_as(img)
        if mode == "nearest":
            img = torch.where(mask < 0.5, fill_img, img)
        else:
            img = img * mask + (1.0 - mask) * fill_img
    img = img.squeeze(0) if squeeze else img
    if out_dtype != img.dtype:
        img = (img.round() if not out_dtype.is_floating_point else img).to(out_dtype)
    return img


def _ref_affine(img, matrix, mode, fill, ow=None, oh=None):
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dtype).reshape(1, 2, 3)
    h, w = img.shape[-2:]
    grid = _ref_affine_grid(theta, w, h, ow or w, oh or h)
    return _ref_apply(img, grid, mode, fill)


def _ref_perspective(img, coeffs, mode, fill):
    oh, ow = img.shape[-2:]
    t1 = torch.tensor([[coeffs[:3], coeffs[3:6]]])
    t2 = torch.tensor([[[coeffs[6], coeffs[7], 1.0]] * 2])
    base = torch.empty(1, oh, ow, 3)
    base[..., 0].copy_(torch.linspace(0.5, ow - 0.5, steps=ow))
    base[..., 1].copy_(torch.linspace(0.5, oh - 0.5, steps=oh)[:, None])
    base[..., 2].fill_(1)
    scaled = t1.transpose(1, 2) / torch.tensor([0.5 * ow, 0.5 * oh])
    g1 = base.view(1, oh * ow, 3).bmm(scaled)
    g2 = base.view(1, oh * ow, 3).bmm(t2.transpose(1, 2))
    return _ref_apply(img, (g1 / g2 - 1.0).view(1, oh, ow, 2), mode, fill)


def _close(ours, want, exact):
    assert list(ours.shape) == list(want.shape) and str(ours.dtype) == str(want.dtype)
    if exact:
        np.testing.assert_array_equal(ours.numpy(), want.numpy())
    else:
        np.testing.assert_allclose(ours.numpy(), want.numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("mode", [NEAREST, BILINEAR])
@pytest.mark.parametrize("expand", [False, True])
def test_rotate_tensor_is_torchvisions_grid_sample(mode, expand):
    angle, center, fill = 33.0, [2, 3], [0.25, 0.5, 1.0]
    ours = F.rotate(jtorch.from_numpy(CHW.copy()), angle, mode, expand, center, fill)
    offset = [c - s * 0.5 for c, s in zip(center, [11, 9], strict=True)]
    matrix = F._get_inverse_affine_matrix(offset, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    ow, oh = (15, 14) if expand else (11, 9)  # torchvision's output size
    assert (ours.shape[-1], ours.shape[-2]) == (ow, oh)
    want = _ref_affine(torch.from_numpy(CHW.copy()), matrix, mode.value, fill, ow, oh)
    _close(ours, want, exact=mode == NEAREST)


@pytest.mark.parametrize("mode", [NEAREST, BILINEAR])
def test_affine_and_perspective_uint8_tensors_are_torchvisions(mode):
    args = (-25.0, [2, -1], 0.8, [10.0, -5.0])
    ours = F.affine(jtorch.from_numpy(U8.copy()), *args, mode, fill=7)
    matrix = F._get_inverse_affine_matrix([0.0, 0.0], -25.0, [2.0, -1.0], 0.8, args[3])
    want = _ref_affine(torch.from_numpy(U8.copy()), matrix, mode.value, 7)
    _close(ours, want, exact=True)
    start = [[0, 0], [6, 0], [6, 9], [0, 9]]
    end = [[1, 2], [5, 0], [6, 8], [0, 7]]
    ours = F.perspective(jtorch.from_numpy(U8.copy()), start, end, mode, [3.0])
    coeffs = F._get_perspective_coeffs(start, end)
    want = _ref_perspective(torch.from_numpy(U8.copy()), coeffs, mode.value, [3.0])
    _close(ours, want, exact=True)


def test_quarter_turn_is_rot90_and_a_batch_turns_together():
    square = RNG.random((2, 3, 6, 6), dtype=np.float32)
    ours = F.rotate(jtorch.from_numpy(square.copy()), 90.0)
    np.testing.assert_array_equal(ours.numpy(), np.rot90(square, 1, axes=(-2, -1)))
    tall = jtorch.from_numpy(CHW.copy())
    turned = F.rotate(tall, 90.0, expand=True)
    np.testing.assert_array_equal(turned.numpy(), np.rot90(CHW, 1, axes=(-2, -1)))


def test_elastic_transform_of_zero_displacement_is_the_image_and_has_a_grad():
    x = jtorch.from_numpy(CHW.copy()).requires_grad_()
    out = F.elastic_transform(x, jtorch.zeros(1, 9, 11, 2))
    np.testing.assert_allclose(out.detach().numpy(), CHW, atol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones_like(CHW), atol=1e-5)
    pil = Image.fromarray(U8.transpose(1, 2, 0).copy())
    back = F.elastic_transform(pil, jtorch.zeros(1, 10, 7, 2), NEAREST)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(pil))
    with pytest.raises(ValueError, match=r"should be \(1, 9, 11, 2\), but given"):
        F.elastic_transform(x, jtorch.zeros(1, 9, 9, 2))


def test_tensor_geometry_refuses_what_torchvision_refuses():
    x = jtorch.from_numpy(CHW.copy())
    with pytest.raises(ValueError, match="Interpolation mode 'bicubic' is unsupported"):
        F.rotate(x, 10.0, T.InterpolationMode.BICUBIC)
    with pytest.raises(ValueError, match=r"cannot broadcast .* \(2 != 3\)"):
        F.affine(x, 0.0, [0, 0], 1.0, 0.0, fill=[1.0, 2.0])
    with pytest.raises(TypeError, match="Argument interpolation should be"):
        corners = [[0, 0], [1, 0], [1, 1], [0, 1]]
        F.perspective(x, corners, corners, "bilinear")


def test_random_geometry_on_tensors_draws_as_torchvision(monkeypatch):
    draws = []

    def uniform(low, high):
        draws.append(("uniform", low, high))
        return (low + high) / 2

    monkeypatch.setattr(T, "_uniform", uniform)
    x = jtorch.from_numpy(CHW.copy())
    rot = T.RandomRotation((10, 50), fill=1)(x)
    matrix = F._get_inverse_affine_matrix([0.0, 0.0], -30.0, [0.0, 0.0], 1.0, [0, 0])
    _close(rot, _ref_affine(torch.from_numpy(CHW), matrix, "nearest", [1.0] * 3), True)
    T.RandomAffine(10, translate=(0.1, 0.2), scale=(0.5, 1.5), shear=(1, 2, 3, 4))(x)
    assert draws[1:] == [
        ("uniform", -10.0, 10.0),
        ("uniform", -1.1, 1.1),  # translate[0] * width
        ("uniform", -1.8, 1.8),  # translate[1] * height
        ("uniform", 0.5, 1.5),
        ("uniform", 1.0, 2.0),
        ("uniform", 3.0, 4.0),
    ]
    jtorch.manual_seed(0)
    a = T.RandomPerspective(p=1.0, fill=[0.0, 1.0, 0.5])(x)
    jtorch.manual_seed(0)
    b = T.RandomPerspective(p=1.0, fill=[0.0, 1.0, 0.5])(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), CHW)


def test_pad_and_resize_of_tensors_are_torchs_pad_and_interpolate():
    x = jtorch.from_numpy(U8.copy())
    ref = torch.from_numpy(U8.copy())
    for mode, torch_mode in (("edge", "replicate"), ("reflect", "reflect")):
        want = torch.nn.functional.pad(ref.float(), [2, -1, 1, 3], mode=torch_mode)
        got = F.pad(x, [2, 1, -1, 3], padding_mode=mode)
        np.testing.assert_array_equal(got.numpy(), want.to(torch.uint8).numpy())
    symmetric = np.pad(U8, ((0, 0), (1, 3), (2, 2)), mode="symmetric")
    got = F.pad(x, [2, 1, 2, 3], padding_mode="symmetric")
    np.testing.assert_array_equal(got.numpy(), symmetric)
    got = F.resize(x, [5, 6], T.InterpolationMode.BILINEAR, antialias=True)
    want = torch.nn.functional.interpolate(
        ref[None].float(), size=(5, 6), mode="bilinear", antialias=True
    )[0]
    np.testing.assert_array_equal(got.numpy(), want.round().to(torch.uint8).numpy())


# the automatic augmentations


class _Script:
    """Stands in for compat's draws: records each call, answers from a list."""

    def __init__(self, answers):
        self.answers, self.calls = list(answers), []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return jtorch.tensor(self.answers.pop(0))


def _record_ops(monkeypatch):
    applied = []

    def apply_op(img, name, magnitude, interpolation, fill):
        applied.append((name, magnitude, fill))
        return img

    monkeypatch.setattr(AA, "_apply_op", apply_op)
    return applied


def test_autoaugment_draws_a_sub_policy_then_probabilities_then_signs(monkeypatch):
    randint = _Script([[1], [0, 1]])  # CIFAR-10's (Rotate 0.7 @2, TranslateX 0.3 @9)
    rand = _Script([[0.5, 0.2]])
    monkeypatch.setattr(AA, "randint", randint)
    monkeypatch.setattr(AA, "rand", rand)
    applied = _record_ops(monkeypatch)
    T.AutoAugment(T.AutoAugmentPolicy.CIFAR10, fill=4)(jtorch.from_numpy(U8.copy()))
    assert [c[0] for c in randint.calls] == [(25, (1,)), (2, (2,))]
    assert rand.calls == [(((2,),), {})]
    rotate = float(torch.linspace(0.0, 30.0, 10)[2])
    translate = float(torch.linspace(0.0, 150.0 / 331.0 * 7, 10)[9])
    assert applied == [
        ("Rotate", -rotate, [4.0] * 3),
        ("TranslateX", translate, [4.0] * 3),
    ]


def test_randaugment_and_trivialaugment_draw_op_bin_and_sign(monkeypatch):
    randint = _Script([[1], [1], [10], [0]])  # ShearX, negated; Posterize
    monkeypatch.setattr(AA, "randint", randint)
    applied = _record_ops(monkeypatch)
    T.RandAugment(num_ops=2, magnitude=9)(jtorch.from_numpy(U8.copy()))
    shear = float(torch.linspace(0.0, 0.3, 31)[9])
    posterize = int((8 - (torch.arange(31) / (30 / 4)).round().int())[9])
    assert applied == [("ShearX", -shear, None), ("Posterize", float(posterize), None)]
    assert [c[0] for c in randint.calls] == [(14, (1,)), (2, (1,)), (14, (1,))]
    randint = _Script([[5], [30], [0]])  # Rotate at the last bin, kept positive
    monkeypatch.setattr(AA, "randint", randint)
    applied.clear()
    T.TrivialAugmentWide()(Image.fromarray(U8.transpose(1, 2, 0).copy()))
    assert applied == [("Rotate", 135.0, None)]
    assert [c[0] for c in randint.calls] == [(14, (1,)), (31, (1,)), (2, (1,))]


def test_magnitude_bins_are_torchs_linspace():
    space = T.TrivialAugmentWide()._augmentation_space(31)
    want = torch.linspace(0.0, 0.99, 31).numpy()
    np.testing.assert_array_equal(space["ShearX"][0].numpy(), want)
    space = T.AugMix()._augmentation_space(10, (32, 30))
    want = torch.linspace(0.0, 30 / 3.0, 10).numpy()
    np.testing.assert_array_equal(space["TranslateX"][0].numpy(), want)
    posterize = (4 - (torch.arange(10) / (9 / 4)).round().int()).numpy()
    np.testing.assert_array_equal(space["Posterize"][0].numpy(), posterize)
    assert list(space)[-4:] == ["Brightness", "Color", "Contrast", "Sharpness"]


def test_augmentations_run_seeded_on_tensors_and_pil_images():
    x = jtorch.from_numpy(U8.copy())
    for make in (
        lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN),
        lambda: T.AugMix(severity=5, mixture_width=2, chain_depth=1),
    ):
        jtorch.manual_seed(3)
        a = make()(x)
        jtorch.manual_seed(3)
        b = make()(x)
        assert a.dtype == jtorch.uint8 and a.shape == x.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    pil = Image.fromarray(U8.transpose(1, 2, 0).copy())
    assert T.RandAugment(num_ops=3, fill=[1, 2, 3])(pil).size == pil.size


def test_augmix_weights_come_from_two_dirichlet_draws(monkeypatch):
    draws = []

    def dirichlet(self, params):
        draws.append(params.tolist())
        return jtorch.tensor([[1.0, 0.0]] if len(draws) == 1 else [[0.2, 0.3, 0.5]])

    monkeypatch.setattr(T.AugMix, "_sample_dirichlet", dirichlet)
    x = jtorch.from_numpy(U8.copy())
    out = T.AugMix(alpha=0.5)(x)  # all the weight on the image itself
    np.testing.assert_array_equal(out.numpy(), U8)
    assert draws == [[[0.5, 0.5]], [[0.5, 0.5, 0.5]]]
    with pytest.raises(ValueError, match=r"severity must be between \[1, 10\]"):
        T.AugMix(severity=11)


def test_elastic_transform_draws_blurred_noise_and_checks_its_arguments():
    x = jtorch.from_numpy(CHW.copy())
    jtorch.manual_seed(0)
    a = T.ElasticTransform(alpha=5.0, sigma=1.0, fill=[0.5])(x)
    jtorch.manual_seed(0)
    disp = T.ElasticTransform.get_params([5.0, 5.0], [1.0, 1.0], [9, 11])
    assert list(disp.shape) == [1, 9, 11, 2]
    b = F.elastic_transform(x, disp, BILINEAR, [0.5])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert repr(T.ElasticTransform(fill=1)) == (
        "ElasticTransform(alpha=[50.0, 50.0], sigma=[5.0, 5.0], "
        "interpolation=InterpolationMode.BILINEAR, fill=[1.0])"
    )
    with pytest.raises(TypeError, match="alpha should be float or a sequence"):
        T.ElasticTransform(alpha=5)
    with pytest.raises(ValueError, match="If sigma is a sequence its length"):
        T.ElasticTransform(sigma=[1.0])
