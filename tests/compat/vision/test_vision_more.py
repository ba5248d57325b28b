"""compat.vision's colour, blur, crop and geometry transforms, ``io``'s
encoders and decoders and ``datasets.ImageFolder``.

Tensor paths are checked against torchvision's ``_functional_tensor``
definitions written out here in real PyTorch; PIL paths against Pillow
directly; geometry against Pillow's own ``rotate`` and identities.
"""

from __future__ import annotations

from io import BytesIO

import numpy as np
import pytest
from PIL import Image, ImageEnhance, ImageOps

import jaxblitz.compat as jtorch
from jaxblitz.compat.vision import datasets, io
from jaxblitz.compat.vision import transforms as T
from jaxblitz.compat.vision.transforms import functional as F

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
HWC = RNG.integers(0, 256, (7, 9, 3), dtype=np.uint8)
HWC[0, 0] = (3, 3, 3)  # a grey pixel: equal channels in the HSV conversion
PIL_RGB = Image.fromarray(HWC)
CHW = np.ascontiguousarray(HWC.transpose(2, 0, 1))


def _both(floating: bool):
    ref = torch.from_numpy(CHW.copy())
    ours = jtorch.from_numpy(CHW.copy())
    if floating:
        return ref.float() / 255, ours.float() / 255
    return ref, ours


# torchvision's _functional_tensor definitions, in PyTorch


def _bound(img):
    return 1.0 if img.is_floating_point() else 255


def _gray(img):
    r, g, b = img.unbind(dim=-3)
    return (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)


def _blend(img1, img2, ratio):
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, _bound(img1)).to(img1.dtype)


def _ref_contrast(img, f):
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    mean = torch.mean(_gray(img).to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, f)


def _ref_sharpness(img, f):
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    kernel = torch.ones((3, 3), dtype=dtype)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    kernel = kernel.expand(img.shape[-3], 1, 3, 3)
    out = torch.nn.functional.conv2d(img.to(dtype)[None], kernel, groups=3)[0]
    if not img.is_floating_point():
        out = out.round()
    result = img.clone()
    result[..., 1:-1, 1:-1] = out.to(img.dtype)
    return _blend(img, result, f)


def _ref_hue(img, hue_factor):
    orig = img.dtype
    x = img.float() / 255 if orig == torch.uint8 else img
    r, g, b = x.unbind(dim=-3)
    maxc, minc = x.max(dim=-3).values, x.min(dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    crd = torch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / crd, (maxc - g) / crd, (maxc - b) / crd
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    h = (h + hue_factor) % 1.0
    v = maxc
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(torch.int32) % 6
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    mask = i.unsqueeze(dim=-3) == torch.arange(6).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    a2 = torch.stack((t, v, v, q, p, p), dim=-3)
    a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    a4 = torch.stack((a1, a2, a3), dim=-4)
    out = torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(x.dtype), a4)
    if orig == torch.uint8:
        return out.mul(255.0 + 1.0 - 1e-3).to(torch.uint8)
    return out


def _ref_autocontrast(img):
    bound = _bound(img)
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (maximum - minimum)
    eq = torch.isfinite(scale).logical_not()
    minimum[eq] = 0
    scale[eq] = 1
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def _ref_blur(img, ksize, sigma):
    half = (ksize - 1) * 0.5
    x = torch.linspace(-half, half, steps=ksize)
    pdf = torch.exp(-0.5 * (x / sigma).pow(2))
    k1 = pdf / pdf.sum()
    k2 = torch.mm(k1[:, None], k1[None, :]).expand(img.shape[-3], 1, ksize, ksize)
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    p = ksize // 2
    x = torch.nn.functional.pad(img.to(dtype)[None], [p, p, p, p], mode="reflect")
    out = torch.nn.functional.conv2d(x, k2.to(dtype), groups=img.shape[-3])[0]
    return (out.round() if not img.is_floating_point() else out).to(img.dtype)


CASES = {
    "brightness": (
        lambda m, x: F.adjust_brightness(x, 1.3),
        lambda x: _blend(x, torch.zeros_like(x), 1.3),
    ),
    "contrast": (
        lambda m, x: F.adjust_contrast(x, 0.6),
        lambda x: _ref_contrast(x, 0.6),
    ),
    "saturation": (
        lambda m, x: F.adjust_saturation(x, 0.4),
        lambda x: _blend(x, _gray(x), 0.4),
    ),
    "sharpness": (
        lambda m, x: F.adjust_sharpness(x, 2.0),
        lambda x: _ref_sharpness(x, 2.0),
    ),
    "hue": (lambda m, x: F.adjust_hue(x, 0.2), lambda x: _ref_hue(x, 0.2)),
    "invert": (lambda m, x: F.invert(x), lambda x: _bound(x) - x),
    "solarize": (
        lambda m, x: F.solarize(x, 0.4 * _bound(x)),
        lambda x: torch.where(x >= 0.4 * _bound(x), _bound(x) - x, x),
    ),
    "autocontrast": (lambda m, x: F.autocontrast(x), _ref_autocontrast),
    "blur": (lambda m, x: F.gaussian_blur(x, 3, 0.8), lambda x: _ref_blur(x, 3, 0.8)),
}


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tensor_colour_ops_match_torchvisions_definitions(name, floating):
    ours_fn, ref_fn = CASES[name]
    ref_in, ours_in = _both(floating)
    got = ours_fn(jtorch, ours_in)
    want = ref_fn(ref_in)
    assert str(got.dtype) == str(want.dtype)
    if floating:
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=2e-6)
    else:  # a rounding of a float computation may land one step apart
        diff = np.abs(got.numpy().astype(int) - want.numpy().astype(int))
        assert diff.max() <= 1 and (diff > 0).mean() < 0.05


def test_uint8_only_ops_and_their_errors():
    ref, ours = _both(False)
    np.testing.assert_array_equal(F.posterize(ours, 3).numpy(), (ref & 0xE0).numpy())
    eq = F.equalize(ours).numpy()
    pil_eq = np.asarray(ImageOps.equalize(Image.fromarray(CHW[0])))
    np.testing.assert_array_equal(eq[0], pil_eq)
    _, flt = _both(True)
    with pytest.raises(TypeError, match="Only torch.uint8"):
        F.posterize(flt, 3)
    with pytest.raises(TypeError, match="Only torch.uint8"):
        F.equalize(flt)
    with pytest.raises(ValueError, match=r"hue_factor \(0.7\) is not in"):
        F.adjust_hue(ours, 0.7)
    with pytest.raises(ValueError, match="is not non-negative"):
        F.adjust_brightness(ours, -1)


def test_pil_colour_ops_are_pillows():
    pairs = [
        (
            F.adjust_brightness(PIL_RGB, 1.5),
            ImageEnhance.Brightness(PIL_RGB).enhance(1.5),
        ),
        (F.adjust_contrast(PIL_RGB, 0.5), ImageEnhance.Contrast(PIL_RGB).enhance(0.5)),
        (F.adjust_saturation(PIL_RGB, 0.3), ImageEnhance.Color(PIL_RGB).enhance(0.3)),
        (F.adjust_sharpness(PIL_RGB, 2.0), ImageEnhance.Sharpness(PIL_RGB).enhance(2)),
        (F.invert(PIL_RGB), ImageOps.invert(PIL_RGB)),
        (F.posterize(PIL_RGB, 2), ImageOps.posterize(PIL_RGB, 2)),
        (F.solarize(PIL_RGB, 100), ImageOps.solarize(PIL_RGB, 100)),
        (F.autocontrast(PIL_RGB), ImageOps.autocontrast(PIL_RGB)),
        (F.equalize(PIL_RGB), ImageOps.equalize(PIL_RGB)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # gamma: torchvision's lookup table
    table = [int((255 + 1 - 1e-3) * pow(v / 255.0, 0.5)) for v in range(256)]
    np.testing.assert_array_equal(
        np.asarray(F.adjust_gamma(PIL_RGB, 0.5)), np.array(table)[HWC]
    )
    # hue: the H channel shifted with uint8 wrap-around
    h, s, v = PIL_RGB.convert("HSV").split()
    shifted = (np.asarray(h).astype(int) + int(0.25 * 255)) % 256
    want = Image.merge("HSV", (Image.fromarray(shifted.astype(np.uint8)), s, v))
    got = F.adjust_hue(PIL_RGB, 0.25)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want.convert("RGB")))


def test_pil_blur_goes_through_the_tensor_path():
    got = np.asarray(F.gaussian_blur(PIL_RGB, [3, 3], [0.8, 0.8]))
    want = _ref_blur(torch.from_numpy(CHW.copy()), 3, 0.8).numpy().transpose(1, 2, 0)
    diff = np.abs(got.astype(int) - want.astype(int))
    assert diff.max() <= 1


def test_affine_rotation_is_pillows_rotate_and_perspective_identity():
    got = F.affine(PIL_RGB, 30.0, [0, 0], 1.0, [0.0, 0.0])
    # affine turns clockwise, rotate (as Pillow) counter-clockwise
    np.testing.assert_array_equal(np.asarray(got), np.asarray(PIL_RGB.rotate(-30.0)))
    np.testing.assert_array_equal(
        np.asarray(F.rotate(PIL_RGB, 90.0)), np.asarray(PIL_RGB.rotate(90.0))
    )
    corners = [[0, 0], [8, 0], [8, 6], [0, 6]]
    same = F.perspective(PIL_RGB, corners, corners, T.InterpolationMode.NEAREST)
    np.testing.assert_array_equal(np.asarray(same), HWC)
    shifted = F.affine(PIL_RGB, 0.0, [2, 1], 1.0, 0.0)
    assert (np.asarray(shifted)[1:, 2:] == HWC[:-1, :-2]).all()


def test_flips_crops_and_to_pil_image():
    _, t = _both(False)
    np.testing.assert_array_equal(F.vflip(t).numpy(), CHW[:, ::-1])
    np.testing.assert_array_equal(np.asarray(F.vflip(PIL_RGB)), HWC[::-1])
    tl, tr, bl, br, c = F.five_crop(t, [3, 4])
    np.testing.assert_array_equal(tl.numpy(), CHW[:, :3, :4])
    np.testing.assert_array_equal(tr.numpy(), CHW[:, :3, 5:])
    np.testing.assert_array_equal(bl.numpy(), CHW[:, 4:, :4])
    np.testing.assert_array_equal(br.numpy(), CHW[:, 4:, 5:])
    np.testing.assert_array_equal(c.numpy(), CHW[:, 2:5, 2:6])
    ten = T.TenCrop(3, vertical_flip=True)(PIL_RGB)
    assert len(ten) == 10
    np.testing.assert_array_equal(np.asarray(ten[5]), HWC[::-1][:3, :3])
    with pytest.raises(ValueError, match="Requested crop size"):
        F.five_crop(t, 8)
    np.testing.assert_array_equal(np.asarray(T.ToPILImage()(t)), HWC)
    f = jtorch.from_numpy(CHW.astype(np.float32) / 255)
    assert np.asarray(F.to_pil_image(f)).dtype == np.uint8
    assert F.to_pil_image(t[:1]).mode == "L"
    with pytest.raises(ValueError, match="Only modes"):
        F.to_pil_image(t, mode="L")


def test_random_transforms_follow_the_seed_and_stay_in_bounds():
    def run(transform, img):
        jtorch.manual_seed(3)
        return transform(img)

    rrc = T.RandomResizedCrop(5, scale=(0.2, 0.6))
    a, b = run(rrc, PIL_RGB), run(rrc, PIL_RGB)
    assert a.size == (5, 5) and np.array_equal(np.asarray(a), np.asarray(b))
    jtorch.manual_seed(0)
    for _ in range(2):
        i, j, h, w = T.RandomResizedCrop.get_params(PIL_RGB, [0.08, 1.0], [0.75, 1.33])
        assert i >= 0 and i + h <= 7 and j >= 0 and j + w <= 9
    # the fallback: no ratio fits, the central crop of the nearest ratio
    assert T.RandomResizedCrop.get_params(PIL_RGB, [1.0, 1.0], [4.0, 5.0]) == (
        2,
        0,
        2,
        9,
    )
    cj = T.ColorJitter(0.5, 0.5, 0.5, 0.1)
    assert np.array_equal(np.asarray(run(cj, PIL_RGB)), np.asarray(run(cj, PIL_RGB)))
    assert run(cj, _both(False)[1]).shape == (3, 7, 9)
    erased = run(T.RandomErasing(p=1.0, value=7), _both(False)[1]).numpy()
    assert (erased != CHW).any() and set(np.unique(erased[erased != CHW])) == {7}
    for tr in (
        T.RandomRotation(20),
        T.RandomAffine(10, (0.1, 0.1), (0.9, 1.1), 5),
        T.RandomPerspective(p=1.0),
        T.GaussianBlur(3),
    ):
        assert run(tr, PIL_RGB).size == (9, 7)
    gray = T.RandomGrayscale(p=1.0)(PIL_RGB)
    assert gray.mode == "RGB"
    assert np.asarray(T.RandomVerticalFlip(1.0)(PIL_RGB)).tolist() == HWC[::-1].tolist()
    assert T.RandomApply([T.RandomInvert(1.0)], p=0.0)(PIL_RGB) is PIL_RGB
    assert T.RandomChoice([T.RandomInvert(1.0)])(PIL_RGB).size == (9, 7)


def test_reprs_errors_and_refused_names():
    assert repr(T.ColorJitter(brightness=0.2, hue=0.1)) == (
        "ColorJitter(brightness=(0.8, 1.2), contrast=None, saturation=None, "
        "hue=(-0.1, 0.1))"
    )
    assert repr(T.RandomResizedCrop(4)) == (
        "RandomResizedCrop(size=(4, 4), scale=(0.08, 1.0), ratio=(0.75, 1.3333), "
        "interpolation=bilinear, antialias=True)"
    )
    assert (
        repr(T.GaussianBlur(3)) == "GaussianBlur(kernel_size=(3, 3), sigma=(0.1, 2.0))"
    )
    assert repr(T.RandomSolarize(100, p=0.2)) == "RandomSolarize(threshold=100, p=0.2)"
    with pytest.raises(ValueError, match="hue values should be between"):
        T.ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="odd and positive"):
        T.GaussianBlur(4)
    with pytest.raises(ValueError, match="Scale should be between 0 and 1"):
        T.RandomErasing(scale=(0.1, 2))


def test_encode_decode_and_write_round_trip(tmp_path):
    _, t = _both(False)
    png = io.encode_png(t)
    assert png.dtype == jtorch.uint8 and png.ndim == 1
    np.testing.assert_array_equal(io.decode_image(png).numpy(), CHW)
    np.testing.assert_array_equal(
        io.decode_png(png, io.ImageReadMode.GRAY).numpy()[0],
        np.asarray(PIL_RGB.convert("L")),
    )
    io.write_png(t, tmp_path / "a.png")
    np.testing.assert_array_equal(io.read_image(tmp_path / "a.png").numpy(), CHW)
    np.testing.assert_array_equal(io.read_file(tmp_path / "a.png").numpy(), png.numpy())
    jpg = io.encode_jpeg(t, quality=95)
    buf = BytesIO()
    PIL_RGB.save(buf, "JPEG", quality=95)
    assert jpg.numpy().tobytes() == buf.getvalue()  # Pillow's encoder
    decoded = io.decode_jpeg([jpg])[0].numpy()
    pil_decoded = np.asarray(Image.open(BytesIO(buf.getvalue()))).transpose(2, 0, 1)
    np.testing.assert_array_equal(decoded, pil_decoded)
    io.write_jpeg(t[:1], tmp_path / "g.jpg")
    assert io.decode_image(str(tmp_path / "g.jpg")).shape == (1, 7, 9)
    with pytest.raises(ValueError, match="between 0 and 9"):
        io.encode_png(t, 10)
    with pytest.raises(ValueError, match="between 1 and 100"):
        io.encode_jpeg(t, 0)
    with pytest.raises(RuntimeError, match="should be 1 or 3"):
        io.encode_png(jtorch.zeros(2, 3, 3, dtype=jtorch.uint8))


def test_image_folder(tmp_path):
    for cls, n in (("cat", 2), ("dog", 1)):
        (tmp_path / cls).mkdir()
        for k in range(n):
            PIL_RGB.save(tmp_path / cls / f"{k}.png")
    (tmp_path / "dog" / "notes.txt").write_text("x")
    ds = datasets.ImageFolder(
        str(tmp_path), transform=T.PILToTensor(), target_transform=lambda y: y + 10
    )
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert [p.rsplit("/", 2)[-2:] for p, _ in ds.samples] == [
        ["cat", "0.png"],
        ["cat", "1.png"],
        ["dog", "0.png"],
    ]
    assert ds.targets == [0, 0, 1] and ds.imgs is ds.samples and len(ds) == 3
    img, target = ds[2]
    np.testing.assert_array_equal(img.numpy(), CHW)
    assert target == 11
    txt = datasets.DatasetFolder(
        str(tmp_path), loader=open, extensions=(".txt",), allow_empty=True
    )
    assert [t for _, t in txt.samples] == [1]
    with pytest.raises(
        FileNotFoundError, match="Found no valid file for the classes cat"
    ):
        datasets.DatasetFolder(str(tmp_path), loader=open, extensions=".txt")
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        datasets.DatasetFolder(str(tmp_path), loader=open)
    only_one = datasets.ImageFolder(
        str(tmp_path), is_valid_file=lambda p: p.endswith("1.png"), allow_empty=True
    )
    assert len(only_one) == 1


def test_linear_transformation_against_torch():
    m = RNG.standard_normal((12, 12)).astype(np.float32)
    mean = RNG.standard_normal(12).astype(np.float32)
    x = RNG.standard_normal((2, 3, 2, 2)).astype(np.float32)
    want = (torch.from_numpy(x).view(-1, 12) - torch.from_numpy(mean)).mm(
        torch.from_numpy(m)
    )
    lt = T.LinearTransformation(jtorch.from_numpy(m), jtorch.from_numpy(mean))
    got = lt(jtorch.from_numpy(x))
    assert got.shape == (2, 3, 2, 2)
    np.testing.assert_allclose(got.numpy().reshape(2, 12), want.numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="should be square"):
        T.LinearTransformation(jtorch.zeros(2, 3), jtorch.zeros(2))
    with pytest.raises(ValueError, match="incompatible shape"):
        lt(jtorch.zeros(1, 2, 2))
