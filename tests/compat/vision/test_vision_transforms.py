"""compat.vision.transforms against their references: Pillow itself for PIL images
(torchvision's PIL path calls it), real PyTorch for tensors."""

import numpy as np
import pytest
from PIL import Image

import jaxblitz.compat as torch
from jaxblitz.compat.vision import transforms as T
from jaxblitz.compat.vision.transforms import functional as TF

real = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
RGB = Image.fromarray(RNG.integers(0, 256, (30, 40, 3), np.uint8))  # (w, h) (40, 30)
GRAY = Image.fromarray(RNG.integers(0, 256, (30, 40), np.uint8))


def chw(img):  # a PIL image as a real torch uint8 (C, H, W) tensor
    a = np.array(img)
    return real.from_numpy(a.reshape(*a.shape[:2], -1).transpose(2, 0, 1).copy())


@pytest.mark.parametrize("img", [RGB, GRAY], ids=["RGB", "L"])
def test_to_tensor_of_a_pil_image_is_torchs_division_by_255(img):
    out = T.ToTensor()(img)
    expected = chw(img).to(real.float32).div(255).numpy()
    assert out.dtype == torch.float32 and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_to_tensor_keeps_a_float_arrays_dtype_and_checks_dimensions():
    a = RNG.random((4, 5, 2))
    out = T.ToTensor()(a)
    assert out.dtype == torch.float64 and tuple(out.shape) == (2, 4, 5)
    np.testing.assert_array_equal(out.numpy(), a.transpose(2, 0, 1))
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 1"):
        T.ToTensor()(np.zeros(3))
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        T.ToTensor()([1, 2])


def test_pil_to_tensor_keeps_uint8():
    out = T.PILToTensor()(RGB)
    assert out.dtype == torch.uint8 and tuple(out.shape) == (3, 30, 40)
    np.testing.assert_array_equal(out.numpy(), chw(RGB).numpy())


def test_normalize_is_torchs_sub_then_div_with_gradients():
    x = RNG.random((2, 3, 4, 5), np.float32)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    m, s = real.tensor(mean).view(-1, 1, 1), real.tensor(std).view(-1, 1, 1)
    expected = real.from_numpy(x).clone().sub_(m).div_(s).numpy()
    np.testing.assert_array_equal(
        T.Normalize(mean, std)(torch.tensor(x)).numpy(), expected
    )
    leaf = torch.tensor(x, requires_grad=True)
    T.Normalize(mean, std)(leaf).sum().backward()
    np.testing.assert_allclose(
        leaf.grad.numpy(), np.broadcast_to(1 / s.numpy(), x.shape), rtol=1e-6
    )
    with pytest.raises(
        TypeError, match="Input tensor should be a float tensor. Got torch.uint8"
    ):
        T.Normalize(mean, std)(torch.zeros(3, 2, 2, dtype=torch.uint8))
    assert repr(T.Normalize([0.5], [0.5])) == "Normalize(mean=[0.5], std=[0.5])"


@pytest.mark.parametrize("mode", list(T.InterpolationMode), ids=lambda m: m.value)
def test_resize_of_a_pil_image_is_pillows_resize(mode):
    out = T.Resize(16, interpolation=mode)(RGB)  # smaller edge 30 -> 16: (21, 16)
    resample = {"nearest-exact": "nearest"}.get(mode.value, mode.value).upper()
    expected = RGB.resize((21, 16), getattr(Image.Resampling, resample))
    assert out.size == (21, 16)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
    assert np.asarray(T.Resize((7, 9))(GRAY)).shape == (7, 9)


@pytest.mark.parametrize(
    "mode, antialias",
    [("bilinear", True), ("bilinear", False), ("bicubic", True), ("nearest", True),
     ("nearest-exact", True)],
)  # fmt: skip
@pytest.mark.parametrize("size", [(12, 18), (45, 23)])
def test_resize_of_a_tensor_is_torchs_interpolate(mode, antialias, size):
    x = RNG.random((3, 30, 40), np.float32)
    out = T.Resize(size, T.InterpolationMode(mode), antialias=antialias)(
        torch.tensor(x)
    )
    kwargs = {"align_corners": False} if mode in ("bilinear", "bicubic") else {}
    expected = real.nn.functional.interpolate(
        real.from_numpy(x)[None], size=size, mode=mode,
        antialias=antialias and mode in ("bilinear", "bicubic"), **kwargs,
    )[0].numpy()  # fmt: skip
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_resize_of_a_uint8_tensor_rounds_as_torchvision():
    x = chw(RGB)
    out = T.Resize(16)(torch.tensor(x.numpy()))  # (3, 16, 21)
    fx = real.nn.functional.interpolate(
        x[None].float(), size=(16, 21), mode="bilinear", antialias=True,
        align_corners=False,
    )  # fmt: skip
    expected = real.round(fx)[0].to(real.uint8).numpy()
    assert out.dtype == torch.uint8
    # one float32 rounding step apart at most, where a value sits on .5
    assert np.abs(out.numpy().astype(int) - expected.astype(int)).max() <= 1
    assert (out.numpy() == expected).mean() > 0.99


def test_resize_of_a_tensor_has_torchs_gradient():
    x = RNG.random((1, 2, 9, 7), np.float32)
    w = RNG.random((1, 2, 5, 4), np.float32)
    leaf = torch.tensor(x, requires_grad=True)
    out = T.Resize((5, 4))(leaf)
    assert type(out.grad_fn).__name__ == "UpsampleBilinear2DAaBackward0"
    (out * torch.tensor(w)).sum().backward()
    rx = real.from_numpy(x).requires_grad_()
    ry = real.nn.functional.interpolate(
        rx, size=(5, 4), mode="bilinear", antialias=True, align_corners=False
    )
    (ry * real.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), rx.grad.numpy(), atol=1e-6)


def test_resize_refuses_what_torchvisions_interpolate_refuses():
    x = RNG.random((1, 9, 9), np.float32)
    got = T.Resize(8, T.InterpolationMode.BICUBIC, antialias=False)(torch.tensor(x))
    want = real.nn.functional.interpolate(
        real.from_numpy(x)[None], size=(8, 8), mode="bicubic", align_corners=False
    )[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        T.Resize(8, T.InterpolationMode.LANCZOS)(torch.rand(1, 9, 9))
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize(2.5)


def test_center_crop_is_pillows_crop_and_a_tensor_slice():
    out = T.CenterCrop((10, 15))(RGB)
    top, left = int(round((30 - 10) / 2)), int(round((40 - 15) / 2))
    expected = RGB.crop((left, top, left + 15, top + 10))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
    t = torch.tensor(chw(RGB).numpy())
    np.testing.assert_array_equal(
        T.CenterCrop((10, 15))(t).numpy(), chw(expected).numpy()
    )
    big = T.CenterCrop(33)(t)  # taller than the image: zero-padded, then cropped
    assert tuple(big.shape) == (3, 33, 33)
    np.testing.assert_array_equal(big.numpy()[:, 1:31, :], t.numpy()[:, :, 4:37])
    assert big.numpy()[:, 0].sum() == 0


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_of_pil_and_tensor_matches_numpy_and_torch(mode):
    padding = [1, 2, 3, 4]  # left, top, right, bottom
    array = np.asarray(RGB)
    expected = np.pad(array, ((2, 4), (1, 3), (0, 0)), mode)
    if mode == "constant":
        expected = np.pad(array, ((2, 4), (1, 3), (0, 0)), constant_values=7)
    np.testing.assert_array_equal(np.asarray(TF.pad(RGB, padding, 7, mode)), expected)
    x = RNG.random((3, 6, 5), np.float32)
    out = TF.pad(torch.tensor(x), padding, 7, mode).numpy()
    if mode == "symmetric":
        ref = np.pad(x, ((0, 0), (2, 4), (1, 3)), "symmetric")
    else:
        torch_mode = {"edge": "replicate"}.get(mode, mode)
        kw = {"value": 7.0} if mode == "constant" else {}
        ref = real.nn.functional.pad(
            real.from_numpy(x)[None], (1, 3, 2, 4), mode=torch_mode, **kw
        )[0].numpy()
    np.testing.assert_array_equal(out, ref)


def test_random_crop_follows_the_seed_and_pads():
    crop = T.RandomCrop(24, padding=4, padding_mode="reflect")
    torch.manual_seed(0)
    first = np.asarray(crop(RGB))
    torch.manual_seed(0)
    np.testing.assert_array_equal(np.asarray(crop(RGB)), first)
    padded = np.pad(np.asarray(RGB), ((4, 4), (4, 4), (0, 0)), "reflect")
    windows = [padded[i : i + 24, j : j + 24] for i in range(15) for j in range(25)]
    assert any(np.array_equal(first, w) for w in windows)
    assert T.RandomCrop(50, pad_if_needed=True)(GRAY).size == (50, 50)
    with pytest.raises(ValueError, match=r"Required crop size \(50, 50\) is larger"):
        T.RandomCrop(50)(GRAY)
    assert repr(crop) == "RandomCrop(size=(24, 24), padding=4)"


def test_random_horizontal_flip_is_pillows_transpose_and_torchs_flip():
    flipped = T.RandomHorizontalFlip(p=1.0)(RGB)
    expected = RGB.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    np.testing.assert_array_equal(np.asarray(flipped), np.asarray(expected))
    assert T.RandomHorizontalFlip(p=0.0)(RGB) is RGB
    x = RNG.random((2, 3, 4), np.float32)
    out = T.RandomHorizontalFlip(p=1.0)(torch.tensor(x))
    np.testing.assert_array_equal(out.numpy(), real.from_numpy(x).flip(-1).numpy())
    flip = T.RandomHorizontalFlip()
    torch.manual_seed(3)
    draws = [flip(RGB) is RGB for _ in range(40)]
    torch.manual_seed(3)
    assert [flip(RGB) is RGB for _ in range(40)] == draws
    assert 5 < sum(draws) < 35


def test_grayscale_is_pillows_convert_and_torchvisions_formula():
    np.testing.assert_array_equal(
        np.asarray(T.Grayscale()(RGB)), np.asarray(RGB.convert("L"))
    )
    three = T.Grayscale(3)(RGB)
    assert three.mode == "RGB"
    np.testing.assert_array_equal(
        np.asarray(three)[..., 2], np.asarray(RGB.convert("L"))
    )
    for x in (chw(RGB), real.rand(3, 5, 6)):
        r, g, b = x.unbind(dim=-3)
        expected = (0.2989 * r + 0.587 * g + 0.114 * b).to(x.dtype).unsqueeze(-3)
        out = T.Grayscale(3)(torch.tensor(x.numpy()))
        assert (
            tuple(out.shape) == tuple(x.shape)
            and out.dtype == torch.tensor(x.numpy()).dtype
        )
        np.testing.assert_array_equal(out.numpy()[1:2], expected.numpy())


def test_convert_image_dtype_rescales_as_torchvision():
    u8 = torch.tensor([[[0, 1, 128, 255]]], dtype=torch.uint8)
    np.testing.assert_array_equal(
        T.ConvertImageDtype(torch.float32)(u8).numpy(),
        np.float32([[[0, 1, 128, 255]]]) / np.float32(255),
    )
    f = torch.tensor([[[0.0, 0.5, 1.0]]])
    assert T.ConvertImageDtype(torch.uint8)(f).tolist() == [[[0, 127, 255]]]
    i16 = T.ConvertImageDtype(torch.int16)(u8)
    assert i16.tolist() == [[[0, 128, 128 * 128, 255 * 128]]]
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        T.ConvertImageDtype(torch.int32)(f)


def test_lambda_and_compose():
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)
    pipeline = T.Compose(
        [T.Lambda(lambda im: im.transpose(Image.Transpose.ROTATE_90)), T.PILToTensor()]
    )
    assert tuple(pipeline(RGB).shape) == (3, 40, 30)
    assert repr(pipeline) == "Compose(\n    Lambda()\n    PILToTensor()\n)"
