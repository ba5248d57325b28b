"""compat.vision ``transforms.Pad`` and ``io.read_image``: Pad's tensors against
real PyTorch's ``F.pad`` (torchvision's symmetric by its own indexing), its PIL
images against Pillow's ``ImageOps.expand`` and ``numpy.pad``; read_image
against the pixels Pillow wrote."""

import numpy as np
import pytest
from PIL import Image, ImageOps

import jaxblitz.compat as torch
import jaxblitz.compat.vision as torchvision
from jaxblitz.compat.vision import transforms as T
from jaxblitz.compat.vision.io import ImageReadMode, read_image

real = pytest.importorskip("torch")
RNG = np.random.default_rng(1)
RGB = Image.fromarray(RNG.integers(0, 256, (7, 9, 3), np.uint8))  # (w, h) (9, 7)
GRAY = Image.fromarray(RNG.integers(0, 256, (7, 9), np.uint8))
RGBA = Image.fromarray(RNG.integers(0, 256, (7, 9, 4), np.uint8), "RGBA")


def ltrb(padding):
    p = [padding] if isinstance(padding, int) else list(padding)
    p = p * 4 if len(p) == 1 else (p * 2 if len(p) == 2 else p)
    return p


def symmetric(img, padding):  # torchvision's _pad_symmetric, (l, r, t, b)
    h, w = img.shape[-2:]
    left, right, top, bottom = padding
    xs = (
        list(range(left - 1, -1, -1))
        + list(range(w))
        + [-(i + 1) for i in range(right)]
    )
    ys = (
        list(range(top - 1, -1, -1))
        + list(range(h))
        + [-(i + 1) for i in range(bottom)]
    )
    x, y = real.tensor(xs), real.tensor(ys)
    return img[..., y[:, None], x[None, :]]


def torch_pad(x, padding, fill, mode):
    """torchvision's tensor pad on real torch: F.pad with the matching mode."""
    left, top, right, bottom = ltrb(padding)
    t = real.from_numpy(x)
    p = (left, right, top, bottom)
    if mode == "symmetric":
        return symmetric(t, p).numpy()
    if mode == "constant":
        return real.nn.functional.pad(t, p, mode="constant", value=fill).numpy()
    squeeze = t.ndim == 3
    t = t[None] if squeeze else t
    dtype = t.dtype
    if dtype not in (real.float32, real.float64):  # torchvision: through float
        t = t.to(real.float32)
    torch_mode = {"edge": "replicate"}.get(mode, mode)
    out = real.nn.functional.pad(t, p, mode=torch_mode).to(dtype)
    return (out[0] if squeeze else out).numpy()


PADDINGS = [2, (1, 3), [1, 2, 3, 4], (0, 0, 2, 1)]
MODES = ["constant", "edge", "reflect", "symmetric"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("shape", [(3, 5, 6), (2, 3, 5, 6)], ids=["CHW", "NCHW"])
def test_pad_of_a_float_tensor_is_torchs_pad(mode, padding, shape):
    x = RNG.random(shape, np.float32)
    out = T.Pad(padding, fill=1.5, padding_mode=mode)(torch.tensor(x))
    np.testing.assert_array_equal(out.numpy(), torch_pad(x, padding, 1.5, mode))


@pytest.mark.parametrize("mode", MODES)
def test_pad_of_a_uint8_tensor_keeps_its_dtype(mode):
    x = RNG.integers(0, 256, (3, 5, 6), np.uint8)
    out = T.Pad([1, 2, 3, 4], fill=9, padding_mode=mode)(torch.tensor(x))
    assert out.dtype == torch.uint8
    np.testing.assert_array_equal(out.numpy(), torch_pad(x, [1, 2, 3, 4], 9, mode))


def test_pad_of_a_tensor_passes_gradients_back_to_the_inside():
    x = torch.tensor(RNG.random((1, 3, 4), np.float32), requires_grad=True)
    T.Pad(2, padding_mode="reflect")(x).sum().backward()
    ref = real.from_numpy(x.detach().numpy()).requires_grad_()
    real.nn.functional.pad(ref[None], (2, 2, 2, 2), mode="reflect").sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ref.grad.numpy())


@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("img", [RGB, GRAY, RGBA], ids=["RGB", "L", "RGBA"])
def test_pad_of_a_pil_image_constant_is_imageops_expand(img, padding):
    left, top, right, bottom = ltrb(padding)
    bands = len(img.getbands())
    fill = tuple(range(10, 10 + bands)) if bands > 1 else 10
    out = T.Pad(padding, fill=fill)(img)
    assert out.mode == img.mode
    expected = ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
    assert out.size == (img.width + left + right, img.height + top + bottom)
    # an int fill goes to every channel
    same = T.Pad(padding, fill=10)(img)
    full = ImageOps.expand(img, border=(left, top, right, bottom), fill=(10,) * bands)
    np.testing.assert_array_equal(np.asarray(same), np.asarray(full))


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric"])
@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("img", [RGB, GRAY], ids=["RGB", "L"])
def test_pad_of_a_pil_image_is_numpy_pad(img, padding, mode):
    left, top, right, bottom = ltrb(padding)
    a = np.asarray(img)
    widths = ((top, bottom), (left, right)) + ((0, 0),) * (a.ndim - 2)
    out = T.Pad(padding, padding_mode=mode)(img)
    assert out.mode == img.mode
    np.testing.assert_array_equal(np.asarray(out), np.pad(a, widths, mode))


def test_pad_of_pil_and_tensor_agree():
    for mode in MODES:
        pil = T.Pad((1, 2, 3, 1), fill=4, padding_mode=mode)(RGB)
        t = T.Pad((1, 2, 3, 1), fill=4, padding_mode=mode)(T.PILToTensor()(RGB))
        np.testing.assert_array_equal(
            t.numpy(), np.asarray(pil).transpose(2, 0, 1), err_msg=mode
        )


def test_pad_checks_its_arguments_as_torchvision_does():
    with pytest.raises(
        ValueError,
        match="Padding must be an int or a 1, 2, or 4 element tuple, not a 3 "
        "element tuple",
    ):
        T.Pad((1, 2, 3))
    with pytest.raises(ValueError, match="not a 5 element tuple"):
        T.Pad([1, 2, 3, 4, 5])
    with pytest.raises(TypeError, match="Got inappropriate padding arg"):
        T.Pad("2")
    with pytest.raises(TypeError, match="Got inappropriate fill arg"):
        T.Pad(2, fill="red")
    with pytest.raises(
        ValueError,
        match="Padding mode should be either constant, edge, reflect or symmetric",
    ):
        T.Pad(2, padding_mode="wrap")
    with pytest.raises(TypeError, match="Got inappropriate fill arg"):
        T.Pad(1, fill=(1, 2, 3))(torch.zeros(3, 4, 4))  # tensors take a number
    with pytest.raises(ValueError, match="number of elements in 'fill'"):
        T.Pad(1, fill=(1, 2))(RGB)


def test_pad_repr_and_module_and_compose():
    pad = T.Pad([1, 2], fill=3, padding_mode="edge")
    assert repr(pad) == "Pad(padding=[1, 2], fill=3, padding_mode=edge)"
    assert isinstance(pad, torch.nn.Module)
    out = T.Compose([T.Pad(1), T.ToTensor()])(GRAY)
    assert tuple(out.shape) == (1, 9, 11)
    assert "Pad" in T.__all__


# --- io.read_image ---------------------------------------------------------


def chw(a):
    a = np.asarray(a)
    return a.reshape(*a.shape[:2], -1).transpose(2, 0, 1)


@pytest.mark.parametrize("img", [RGB, GRAY, RGBA], ids=["RGB", "L", "RGBA"])
def test_read_image_of_a_png_is_its_pixels_unchanged(tmp_path, img):
    path = tmp_path / "image.png"
    img.save(path)
    out = read_image(path)
    assert out.dtype == torch.uint8
    assert tuple(out.shape) == (len(img.getbands()), img.height, img.width)
    np.testing.assert_array_equal(out.numpy(), chw(img))
    np.testing.assert_array_equal(read_image(str(path)).numpy(), chw(img))


def test_read_image_converts_to_the_mode_asked(tmp_path):
    path = tmp_path / "rgba.png"
    RGBA.save(path)
    for mode, pil_mode, c in [
        (ImageReadMode.GRAY, "L", 1),
        (ImageReadMode.GRAY_ALPHA, "LA", 2),
        (ImageReadMode.RGB, "RGB", 3),
        (ImageReadMode.RGB_ALPHA, "RGBA", 4),
        (ImageReadMode.RGBA, "RGBA", 4),
        ("rgb", "RGB", 3),
    ]:
        out = read_image(path, mode)
        assert tuple(out.shape) == (c, 7, 9), mode
        np.testing.assert_array_equal(out.numpy(), chw(RGBA.convert(pil_mode)))
    gray = tmp_path / "gray.png"
    GRAY.save(gray)
    rgba = read_image(gray, ImageReadMode.RGB_ALPHA).numpy()
    assert rgba.shape == (4, 7, 9) and (rgba[3] == 255).all()
    np.testing.assert_array_equal(rgba[0], np.asarray(GRAY))


def test_read_image_expands_a_palette(tmp_path):
    path = tmp_path / "palette.png"
    pal = RGB.convert("P", palette=Image.Palette.ADAPTIVE, colors=8)
    pal.save(path)
    out = read_image(path)
    assert tuple(out.shape) == (3, 7, 9)
    np.testing.assert_array_equal(out.numpy(), chw(pal.convert("RGB")))


@pytest.mark.parametrize("img", [RGB, GRAY], ids=["RGB", "L"])
def test_read_image_of_a_jpeg_is_pillows_decoding(tmp_path, img):
    path = tmp_path / "image.jpg"
    img.save(path, quality=90)
    with Image.open(path) as decoded:
        expected = chw(decoded.convert(img.mode))
    out = read_image(path)
    assert out.dtype == torch.uint8 and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)
    with Image.open(path) as decoded:
        gray = chw(decoded.convert("L"))
    np.testing.assert_array_equal(read_image(path, ImageReadMode.GRAY).numpy(), gray)
    with pytest.raises(RuntimeError, match="not supported for JPEG"):
        read_image(path, ImageReadMode.RGB_ALPHA)


def test_read_image_errors_name_the_path(tmp_path):
    missing = tmp_path / "nope.png"
    with pytest.raises(RuntimeError, match="No such file or directory") as info:
        read_image(missing)
    assert str(missing) in str(info.value)
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    with pytest.raises(RuntimeError, match="junk.png"):
        read_image(junk)
    with pytest.raises(TypeError, match="ImageReadMode"):
        read_image(junk, 3)


def test_io_is_reached_as_torchvision_io():
    assert torchvision.io.read_image is read_image
    assert torchvision.io.ImageReadMode.RGB.value == 3
    assert "io" in torchvision.__all__
    assert ImageReadMode.RGBA is ImageReadMode.RGB_ALPHA
