"""Blitz 4, Training a classifier: ``torchvision.transforms.functional``.

On PIL images these call Pillow exactly as torchvision's ``_functional_pil`` does
(``resize``, ``crop``, ``transpose``, ``convert``, ``ImageOps.expand``,
``rotate``, ``transform``), so the pixels are Pillow's. On tensors
``(..., C, H, W)`` they are compat ops, recorded for autograd, as torchvision's
``_functional_tensor`` calls torch's: resizing is compat's ``interpolate``
(``align_corners=False``), padding compat's ``pad`` (symmetric padding an
index), cropping a slice; ``rotate``, ``affine``, ``perspective``
and ``elastic_transform`` sample a grid with ``grid_sample`` (see
:mod:`._geometry`), nearest or bilinear, as torchvision's tensor path does.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor.creation import as_tensor, from_numpy
from jaxblitz.compat.vision.transforms import _geometry
from jaxblitz.compat.vision.transforms._geometry import (
    _assert_image_tensor,
    _cast_squeeze_in,
    _cast_squeeze_out,
)


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_MODES = {  # torch: pil_modes_mapping
    InterpolationMode.NEAREST: Image.Resampling.NEAREST,
    InterpolationMode.NEAREST_EXACT: Image.Resampling.NEAREST,
    InterpolationMode.BILINEAR: Image.Resampling.BILINEAR,
    InterpolationMode.BICUBIC: Image.Resampling.BICUBIC,
    InterpolationMode.BOX: Image.Resampling.BOX,
    InterpolationMode.HAMMING: Image.Resampling.HAMMING,
    InterpolationMode.LANCZOS: Image.Resampling.LANCZOS,
}
_FROM_INT = {int(v): k for k, v in _PIL_MODES.items() if k.value != "nearest-exact"}


def _is_pil(img: Any) -> bool:
    return isinstance(img, Image.Image)


def _check_pil(img: Any) -> None:
    if not _is_pil(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img: Any) -> list[int]:
    """``[channels, height, width]`` of a tensor or PIL image."""
    if isinstance(img, Tensor):
        _assert_image_tensor(img)
        channels = 1 if img.ndim == 2 else img.shape[-3]
        return [channels, img.shape[-2], img.shape[-1]]
    if _is_pil(img):
        return [len(img.getbands()), img.size[1], img.size[0]]
    raise TypeError(f"Unexpected type {type(img)}")


def to_tensor(pic: Any) -> Tensor:
    """PIL image or HWC ndarray -> CHW tensor; uint8 scaled to [0, 1] floats."""
    if not (_is_pil(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(
                f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions."
            )
        hwc = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        nptype = {"I": np.int32, "I;16": np.int16, "F": np.float32}
        hwc = np.array(pic, nptype.get(pic.mode, np.uint8), copy=True)
        if pic.mode == "1":
            hwc = 255 * hwc
        hwc = hwc.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    chw = np.ascontiguousarray(hwc.transpose((2, 0, 1)))
    if chw.dtype == np.uint8:  # torch: img.to(default_float_dtype).div(255)
        dt = _dtype.get_default_dtype().np
        return from_numpy(np.divide(chw, dt.type(255), dtype=dt))
    return from_numpy(chw)


def pil_to_tensor(pic: Any) -> Tensor:
    """PIL image -> CHW tensor of its own dtype (uint8 for 'L' and 'RGB')."""
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    hwc = np.array(pic, copy=True).reshape(pic.size[1], pic.size[0], -1)
    return from_numpy(np.ascontiguousarray(hwc.transpose((2, 0, 1))))


def convert_image_dtype(image: Tensor, dtype: Any = None) -> Tensor:
    """Rescales between integer ranges ([0, max]) and floats in [0, 1]."""
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    dtype = _dtype.float32 if dtype is None else dtype
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (
            image.dtype == _dtype.float32 and dtype in (_dtype.int32, _dtype.int64)
        ) or (image.dtype == _dtype.float64 and dtype == _dtype.int64):
            msg = f"The cast from {image.dtype} to {dtype} cannot be performed safely."
            raise RuntimeError(msg)
        eps = 1e-3
        return image.mul(float(_max_value(dtype)) + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return image.div(factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def _max_value(dtype: Any) -> int:
    return int(np.iinfo(dtype.np).max) if dtype != _dtype.bool else 1


def normalize(
    tensor: Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False
) -> Tensor:
    """``(tensor - mean) / std`` per channel of a float ``(..., C, H, W)`` tensor."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    _assert_image_tensor(tensor)
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(
            "Expected tensor to be a tensor image of size (..., C, H, W). Got "
            f"tensor.size() = {tensor.size()}"
        )
    dtype = tensor.dtype
    m = np.asarray(mean.numpy() if isinstance(mean, Tensor) else mean, dtype.np)
    s = np.asarray(std.numpy() if isinstance(std, Tensor) else std, dtype.np)
    if (s == 0).any():
        raise ValueError(
            f"std evaluated to zero after conversion to {dtype}, leading to division "
            "by zero."
        )
    m = m.reshape(-1, 1, 1) if m.ndim == 1 else m
    s = s.reshape(-1, 1, 1) if s.ndim == 1 else s
    if inplace or tensor.requires_grad:  # compat ops: autograd and in place
        target = tensor if inplace else tensor.clone()
        return target.sub_(as_tensor(m)).div_(as_tensor(s))
    # torch: tensor.clone().sub_(mean).div_(std); the same IEEE ops on the host
    x = tensor.numpy()
    return from_numpy(((x - m) / s).astype(x.dtype, copy=False))


def _resized_size(
    image_size: tuple[int, int], size: list[int], max_size: int | None
) -> list[int]:
    """torch: ``_compute_resized_output_size``."""
    if len(size) == 1:  # the smaller edge, keeping the aspect ratio
        h, w = image_size
        short, long = (w, h) if w <= h else (h, w)
        requested_new_short = size if isinstance(size, int) else size[0]
        new_short, new_long = (
            requested_new_short,
            int(requested_new_short * long / short),
        )
        if max_size is not None:
            if max_size <= requested_new_short:
                raise ValueError(
                    f"max_size = {max_size} must be strictly greater than the "
                    f"requested size for the smaller edge size = {size}"
                )
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def resize(
    img: Any,
    size: int | Sequence[int],
    interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
    max_size: int | None = None,
    antialias: bool | None = True,
) -> Any:
    interpolation = _interp_mode(interpolation)
    if isinstance(size, list | tuple):
        if len(size) not in [1, 2]:
            raise ValueError(
                "Size must be an int or a 1 or 2 element tuple/list, not a "
                f"{len(size)} element tuple/list"
            )
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the "
                "smaller edge, i.e. size should be an int or a sequence of length 1 "
                "in torchscript mode."
            )
    _, height, width = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _resized_size((height, width), list(size), max_size)
    if [height, width] == output_size:
        return img
    if not isinstance(img, Tensor):
        if antialias is False:
            warnings.warn(
                "Anti-alias option is always applied for PIL Image input. Argument "
                "antialias is ignored.",
                stacklevel=2,
            )
        return img.resize(output_size[::-1], _PIL_MODES[interpolation])
    return _resize_tensor(img, output_size, interpolation.value, antialias)


def _resize_tensor(
    img: Tensor, size: list[int], interpolation: str, antialias: bool | None
) -> Tensor:
    """torch: ``_functional_tensor.resize``: ``interpolate`` in float, rounded
    back to an integer dtype."""
    from jaxblitz.compat.nn.functional import interpolate

    _assert_image_tensor(img)
    antialias = bool(antialias) and interpolation in ("bilinear", "bicubic")
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(
        img, [_dtype.float32, _dtype.float64]
    )
    align_corners = False if interpolation in ("bilinear", "bicubic") else None
    img = interpolate(
        img,
        size=size,
        mode=interpolation,
        align_corners=align_corners,
        antialias=antialias,
    )
    if interpolation == "bicubic" and out_dtype == _dtype.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    if not isinstance(img, Tensor):
        return img.crop((left, top, left + width, top + height))
    _assert_image_tensor(img)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(w, left), 0),
            max(bottom - max(h, top), 0),
        ]
        inside = img[..., max(top, 0) : bottom, max(left, 0) : right]
        return pad(inside, padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def center_crop(img: Any, output_size: int | Sequence[int]) -> Any:
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, tuple | list) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def _check_pad(padding: Any, padding_mode: Any) -> list[int]:
    """``padding`` as ``[left, top, right, bottom]``, checked as torchvision does."""
    if not isinstance(padding, numbers.Number | tuple | list):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, tuple | list) and len(padding) not in [1, 2, 4]:
        raise ValueError(
            "Padding must be an int or a 1, 2, or 4 element tuple, not a "
            f"{len(padding)} element tuple"
        )
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError(
            "Padding mode should be either constant, edge, reflect or symmetric"
        )
    p = list(padding) if isinstance(padding, tuple | list) else [padding]
    if len(p) == 1:
        return p * 4
    return p * 2 if len(p) == 2 else p


def pad(img: Any, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> Any:
    if not isinstance(img, Tensor):
        return _pad_pil(img, padding, fill, padding_mode)
    _assert_image_tensor(img)
    fill = 0 if fill is None else fill
    if not isinstance(fill, int | float):
        raise TypeError("Got inappropriate fill arg")
    left, top, right, bottom = _check_pad(padding, padding_mode)
    p = [left, right, top, bottom]
    if padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    from jaxblitz.compat.nn.functional import pad as torch_pad

    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = padding_mode != "constant" and out_dtype not in (
        _dtype.float32,
        _dtype.float64,
    )
    if need_cast:  # torch: reflect and replicate pad floats only
        img = img.to(_dtype.float32)
    if padding_mode == "constant":
        img = torch_pad(img, p, mode="constant", value=float(fill))
    else:
        img = torch_pad(
            img, p, mode="replicate" if padding_mode == "edge" else "reflect"
        )
    if need_squeeze:
        img = img.squeeze(dim=0)
    return img.to(out_dtype) if need_cast else img


def _pad_symmetric(img: Tensor, padding: list[int]) -> Tensor:
    """torch: ``_pad_symmetric``: an index that mirrors the edge pixels too;
    ``padding`` is (left, right, top, bottom), a negative width crops first."""
    if min(padding) < 0:
        crop_left, crop_right, crop_top, crop_bottom = (-min(x, 0) for x in padding)
        h, w = img.shape[-2], img.shape[-1]
        img = img[..., crop_top : h - crop_bottom, crop_left : w - crop_right]
        padding = [max(x, 0) for x in padding]
    h, w = img.shape[-2], img.shape[-1]
    x_index = list(range(padding[0] - 1, -1, -1)) + list(range(w))
    x_index += [-(i + 1) for i in range(padding[1])]
    y_index = list(range(padding[2] - 1, -1, -1)) + list(range(h))
    y_index += [-(i + 1) for i in range(padding[3])]
    if img.ndim not in (3, 4):
        raise RuntimeError("Symmetric padding of N-D tensors are not supported yet")
    rows = as_tensor(np.asarray(y_index, np.int64))[:, None]
    cols = as_tensor(np.asarray(x_index, np.int64))[None, :]
    return img[..., rows, cols]


def _pad_pil(img: Any, padding: Any, fill: Any, padding_mode: str) -> Any:
    """torch: ``_functional_pil.pad``: ``ImageOps.expand`` or ``np.pad``."""
    _check_pil(img)
    if fill is not None and not isinstance(fill, numbers.Number | tuple | list):
        raise TypeError("Got inappropriate fill arg")
    p = _check_pad(padding, padding_mode)
    if padding_mode == "constant":
        border = tuple(p) if len(set(p)) > 1 else p[0]
        expanded = ImageOps.expand(img, border=border, **_parse_fill(fill, img))
        if img.mode == "P":
            expanded.putpalette(img.getpalette())
        return expanded
    crop_l, crop_t, crop_r, crop_b = (-min(v, 0) for v in p)
    if any((crop_l, crop_t, crop_r, crop_b)):
        img = img.crop((crop_l, crop_t, img.width - crop_r, img.height - crop_b))
    left, top, right, bottom = (max(v, 0) for v in p)
    if img.mode == "P":
        raise NotImplementedError(
            f"padding_mode={padding_mode!r} on a palette ('P') image is not supported "
            "by jaxblitz.compat.vision; convert it to 'RGB' first"
        )
    array = np.asarray(img)
    widths = ((top, bottom), (left, right)) + ((0, 0),) * (array.ndim - 2)
    return Image.fromarray(np.pad(array, widths, padding_mode))


def _parse_fill(fill: Any, img: Any, name: str = "fill") -> dict[str, Any]:
    num_channels = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, int | float) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, list | tuple):
        if len(fill) == 1:
            fill = fill * num_channels
        elif len(fill) != num_channels:
            raise ValueError(
                "The number of elements in 'fill' does not match the number of "
                f"channels of the image ({len(fill)} != {num_channels})"
            )
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def hflip(img: Any) -> Any:
    if not isinstance(img, Tensor):
        _check_pil(img)
        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    _assert_image_tensor(img)
    return img.flip(-1)


def rgb_to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    if not isinstance(img, Tensor):
        return to_grayscale(img, num_output_channels)
    if img.ndim < 3:
        raise TypeError(
            "Input image tensor should have at least 3 dimensions, but found "
            f"{img.ndim}"
        )
    c = get_dimensions(img)[0]
    if c not in [1, 3]:
        raise TypeError(
            f"Input image tensor permitted channel values are {[1, 3]}, but found {c}"
        )
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        # torch: this implementation closely follows the TF one
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
        l_img = l_img.unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """PIL image -> mode 'L' (or 'L' repeated as 'RGB')."""
    _check_pil(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        gray = np.array(img.convert("L"), dtype=np.uint8)
        return Image.fromarray(np.dstack([gray, gray, gray]))  # mode "RGB"
    raise ValueError("num_output_channels should be either 1 or 3")


def vflip(img: Any) -> Any:
    if not isinstance(img, Tensor):
        _check_pil(img)
        return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    _assert_image_tensor(img)
    return img.flip((-2,))


def resized_crop(
    img: Any,
    top: int,
    left: int,
    height: int,
    width: int,
    size: list[int],
    interpolation: InterpolationMode = InterpolationMode.BILINEAR,
    antialias: bool | None = True,
) -> Any:
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def _crop_size(size: Any) -> tuple[int, int]:
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, tuple | list) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return size


def five_crop(img: Any, size: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The four corner crops and the centre crop of ``size``."""
    size = _crop_size(size)
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        msg = "Requested crop size {} is bigger than input size {}"
        raise ValueError(msg.format(size, (image_height, image_width)))
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(
        img,
        image_height - crop_height,
        image_width - crop_width,
        crop_height,
        crop_width,
    )
    center = center_crop(img, [crop_height, crop_width])
    return tl, tr, bl, br, center


def ten_crop(img: Any, size: Any, vertical_flip: bool = False) -> list[Any]:
    """``five_crop`` of the image and of its (horizontal or vertical) flip."""
    size = _crop_size(size)
    first_five = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return list(first_five) + list(five_crop(img, size))


# colour: torchvision's _functional_tensor on tensors, ImageEnhance/ImageOps on PIL


_UINT8_ONLY = "Only torch.uint8 image tensors are supported, but found {}"


def _tensor_bound(img: Tensor) -> float | int:
    return 1.0 if img.is_floating_point() else _max_value(img.dtype)


def _channels(img: Tensor, permitted: list[int]) -> int:
    _assert_image_tensor(img)
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(
            f"Input image tensor permitted channel values are {permitted}, but found "
            f"{c}"
        )
    return c


def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
    ratio = float(ratio)
    bound = _tensor_bound(img1)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def _check_factor(value: float, name: str) -> None:
    if value < 0:
        raise ValueError(f"{name} ({value}) is not non-negative.")


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    _check_factor(brightness_factor, "brightness_factor")
    if not isinstance(img, Tensor):
        return _enhance(img, "Brightness", brightness_factor)
    _channels(img, [1, 3])
    from jaxblitz.compat.tensor.creation import zeros_like

    return _blend(img, zeros_like(img), brightness_factor)


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    _check_factor(contrast_factor, "contrast_factor")
    if not isinstance(img, Tensor):
        return _enhance(img, "Contrast", contrast_factor)
    c = _channels(img, [3, 1])
    dtype = img.dtype if img.is_floating_point() else _dtype.float32
    gray = rgb_to_grayscale(img) if c == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    _check_factor(saturation_factor, "saturation_factor")
    if not isinstance(img, Tensor):
        return _enhance(img, "Color", saturation_factor)
    if _channels(img, [1, 3]) == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_sharpness(img: Any, sharpness_factor: float) -> Any:
    _check_factor(sharpness_factor, "sharpness_factor")
    if not isinstance(img, Tensor):
        return _enhance(img, "Sharpness", sharpness_factor)
    _channels(img, [1, 3])
    if img.size(-1) <= 2 or img.size(-2) <= 2:
        return img
    return _blend(img, _blurred_degenerate_image(img), sharpness_factor)


def _enhance(img: Any, name: str, factor: float) -> Any:
    from PIL import ImageEnhance

    _check_pil(img)
    return getattr(ImageEnhance, name)(img).enhance(factor)


def _conv_depthwise(img: Tensor, kernel: np.ndarray) -> Tensor:
    """``conv2d`` of every channel of a float ``(..., C, H, W)`` image with
    ``kernel`` (no padding), as torchvision's ``groups=C`` convolution."""
    from jaxblitz.compat.nn.conv import conv2d

    shape = img.shape
    c = shape[-3]
    x = img.reshape(-1, c, shape[-2], shape[-1])
    k = as_tensor(np.broadcast_to(kernel, (c, 1) + kernel.shape).copy(), x.dtype)
    y = conv2d(x, k, groups=c)
    return y.reshape(*shape[:-2], y.shape[-2], y.shape[-1])


def _blurred_degenerate_image(img: Tensor) -> Tensor:
    dtype = img.dtype if img.is_floating_point() else _dtype.float32
    kernel = np.ones((3, 3), dtype.np)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    blurred = _conv_depthwise(img.to(dtype), kernel)
    if not img.is_floating_point():
        blurred = blurred.round()
    blurred = blurred.to(img.dtype)
    result = img.clone()
    result[..., 1:-1, 1:-1] = blurred
    return result


def adjust_gamma(img: Any, gamma: float, gain: float = 1) -> Any:
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if not isinstance(img, Tensor):
        _check_pil(img)
        input_mode = img.mode
        img = img.convert("RGB")
        gamma_map = [
            int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)
        ] * 3
        return img.point(gamma_map).convert(input_mode)
    _channels(img, [1, 3])
    result = img
    if not img.is_floating_point():
        result = convert_image_dtype(result, _dtype.float32)
    result = (gain * result**gamma).clamp(0, 1)
    return convert_image_dtype(result, img.dtype)


def _rgb2hsv(img: Tensor) -> Tensor:
    from jaxblitz import compat as torch

    r, g, b = img.unbind(dim=-3)
    maxc = img.amax(dim=-3)
    minc = img.amin(dim=-3)
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_divisor = torch.where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img: Tensor) -> Tensor:
    from jaxblitz import compat as torch

    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(_dtype.int32)
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == torch.arange(6).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    a2 = torch.stack((t, v, v, q, p, p), dim=-3)
    a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    a4 = torch.stack((a1, a2, a3), dim=-4)
    # torch: einsum("...ijk, ...xijk -> ...xjk", mask, a4), one-hot over i
    return (mask.to(img.dtype).unsqueeze(-4) * a4).sum(-3)


def adjust_hue(img: Any, hue_factor: float) -> Any:
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not isinstance(img, Tensor):
        _check_pil(img)
        input_mode = img.mode
        if input_mode in {"L", "1", "I", "F"}:
            return img
        h, s, v = img.convert("HSV").split()
        np_h = np.array(h, dtype=np.uint8)
        with np.errstate(over="ignore"):  # uint8 addition wraps around
            np_h += np.int32(hue_factor * 255).astype(np.uint8)
        h = Image.fromarray(np_h, "L")
        return Image.merge("HSV", (h, s, v)).convert(input_mode)
    if _channels(img, [1, 3]) == 1:
        return img
    from jaxblitz import compat as torch

    orig_dtype = img.dtype
    hsv = _rgb2hsv(convert_image_dtype(img, _dtype.float32))
    h, s, v = hsv.unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    rgb = _hsv2rgb(torch.stack((h, s, v), dim=-3))
    return convert_image_dtype(rgb, orig_dtype)


def invert(img: Any) -> Any:
    if not isinstance(img, Tensor):
        _check_pil(img)
        return ImageOps.invert(img)
    _channels(img, [1, 3])
    return _tensor_bound(img) - img


def posterize(img: Any, bits: int) -> Any:
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    if not isinstance(img, Tensor):
        _check_pil(img)
        return ImageOps.posterize(img, bits)
    _channels(img, [1, 3])
    if img.dtype != _dtype.uint8:
        raise TypeError(_UINT8_ONLY.format(img.dtype))
    mask = -int(2 ** (8 - bits))  # torch: img & mask, on uint8's two's complement
    return img & (mask & 0xFF)


def solarize(img: Any, threshold: float) -> Any:
    if not isinstance(img, Tensor):
        _check_pil(img)
        return ImageOps.solarize(img, threshold)
    from jaxblitz import compat as torch

    _channels(img, [1, 3])
    if threshold > _tensor_bound(img):
        raise TypeError("Threshold should be less than bound of img.")
    return torch.where(img >= threshold, invert(img), img)


def autocontrast(img: Any) -> Any:
    if not isinstance(img, Tensor):
        _check_pil(img)
        return ImageOps.autocontrast(img)
    from jaxblitz import compat as torch

    _channels(img, [1, 3])
    bound = _tensor_bound(img)
    dtype = img.dtype if img.is_floating_point() else _dtype.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (maximum - minimum)
    eq_idxs = torch.isfinite(scale).logical_not()
    minimum = torch.where(eq_idxs, torch.zeros_like(minimum), minimum)
    scale = torch.where(eq_idxs, torch.ones_like(scale), scale)
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def _equalize_channel(channel: np.ndarray) -> np.ndarray:
    """torch: ``_scale_channel``, one uint8 ``(H, W)`` channel."""
    hist = np.bincount(channel.reshape(-1), minlength=256)
    nonzero_hist = hist[hist != 0]
    step = int(nonzero_hist[:-1].sum()) // 255 if nonzero_hist.size else 0
    if step == 0:
        return channel
    lut = (np.cumsum(hist) + step // 2) // step
    lut = np.concatenate([[0], lut[:-1]]).clip(0, 255)
    return lut[channel.astype(np.int64)].astype(np.uint8)


def equalize(img: Any) -> Any:
    if not isinstance(img, Tensor):
        _check_pil(img)
        return ImageOps.equalize(img)
    _channels(img, [1, 3])
    if img.dtype != _dtype.uint8:
        raise TypeError(_UINT8_ONLY.format(img.dtype))
    x = img.numpy()
    flat = x.reshape(-1, x.shape[-2], x.shape[-1])
    out = np.stack([_equalize_channel(ch) for ch in flat]).reshape(x.shape)
    return from_numpy(out)


def _gaussian_kernel1d(kernel_size: int, sigma: float) -> np.ndarray:
    ksize_half = (kernel_size - 1) * 0.5
    x = np.linspace(-ksize_half, ksize_half, kernel_size, dtype=np.float32)
    pdf = np.exp(-0.5 * (x / np.float32(sigma)) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img: Any, kernel_size: Any, sigma: Any = None) -> Any:
    """Blur with a ``kernel_size`` Gaussian (reflect padding); PIL images go
    through the tensor path and back, as in torchvision."""
    if not isinstance(kernel_size, int | list | tuple):
        raise TypeError(
            f"kernel_size should be int or a sequence of integers. Got "
            f"{type(kernel_size)}"
        )
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(
            "If kernel_size is a sequence its length should be 2. Got "
            f"{len(kernel_size)}"
        )
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(
                f"kernel_size should have odd and positive integers. Got {kernel_size}"
            )
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if sigma is not None and not isinstance(sigma, int | float | list | tuple):
        raise TypeError(
            f"sigma should be either float or sequence of floats. Got {type(sigma)}"
        )
    if isinstance(sigma, int | float):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, list | tuple) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(
            f"If sigma is a sequence, its length should be 2. Got {len(sigma)}"
        )
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    t_img = img
    if not isinstance(img, Tensor):
        if not _is_pil(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0])
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1])
    kernel = (ky[:, None] @ kx[None, :]).astype(np.float32)
    dtype = t_img.dtype if t_img.is_floating_point() else _dtype.float32
    padding = [kernel_size[0] // 2, kernel_size[0] // 2]
    padding += [kernel_size[1] // 2, kernel_size[1] // 2]
    x = pad(
        t_img.to(dtype), [padding[0], padding[2], padding[1], padding[3]], 0, "reflect"
    )
    out = _conv_depthwise(x, kernel.astype(dtype.np))
    if not t_img.is_floating_point():
        out = out.round()
    out = out.to(t_img.dtype)
    if not isinstance(img, Tensor):
        return to_pil_image(out, mode=img.mode)
    return out


def erase(
    img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False
) -> Tensor:
    """``img[..., i:i+h, j:j+w] = v``."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i : i + h, j : j + w] = v
    return img


# geometry: Pillow's transform on PIL images (torchvision's _functional_pil), a
# sampling grid and grid_sample on tensors (torchvision's _functional_tensor)


def _interp_mode(interpolation: Any) -> InterpolationMode:
    """An ``InterpolationMode`` or its Pillow integer constant, as an enum."""
    if isinstance(interpolation, int):
        return _FROM_INT[interpolation]
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError(
            "Argument interpolation should be a InterpolationMode or a corresponding "
            "Pillow integer constant"
        )
    return interpolation


def _fill_per_channel(fill: Any, img: Any) -> Any:
    """torch: the random transforms' ``fill`` for a tensor image, one float per
    channel."""
    if not isinstance(img, Tensor) or fill is None:
        return fill
    if isinstance(fill, int | float):
        return [float(fill)] * get_dimensions(img)[0]
    return [float(f) for f in fill]


def _centre_offset(img: Tensor, center: Any) -> list[float]:
    """``center`` in pixels, moved so that (0, 0) is the image centre."""
    if center is None:
        return [0.0, 0.0]
    _, height, width = get_dimensions(img)
    return [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height], strict=False)]


def rotate(
    img: Any,
    angle: float,
    interpolation: Any = InterpolationMode.NEAREST,
    expand: bool = False,
    center: list[int] | None = None,
    fill: Any = None,
) -> Any:
    """Counter-clockwise rotation by ``angle`` degrees about ``center``."""
    interpolation = _interp_mode(interpolation)
    if not isinstance(angle, int | float):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, list | tuple):
        raise TypeError("Argument center should be a sequence")
    if not isinstance(img, Tensor):
        _check_pil(img)
        opts = _parse_fill(fill, img, name="fillcolor")
        mode = _PIL_MODES[interpolation]
        return img.rotate(angle, mode, expand, center, **opts)
    # torch: -angle, as affine's and rotate's directions differ
    matrix = _get_inverse_affine_matrix(
        _centre_offset(img, center), -angle, [0.0, 0.0], 1.0, [0.0, 0.0]
    )
    return _geometry.rotate(img, matrix, interpolation.value, expand, fill)


def _get_inverse_affine_matrix(
    center: list[float],
    angle: float,
    translate: list[float],
    scale: float,
    shear: list[float],
    inverted: bool = True,
) -> list[float]:
    """torchvision's: the (inverse) affine matrix of rotation, scale, shear and
    translation about ``center``."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        matrix = [d, -b, 0.0, -c, a, 0.0]
        matrix = [x / scale for x in matrix]
        matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
        matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
        matrix[2] += cx
        matrix[5] += cy
    else:
        matrix = [a, b, 0.0, c, d, 0.0]
        matrix = [x * scale for x in matrix]
        matrix[2] += matrix[0] * (-cx) + matrix[1] * (-cy)
        matrix[5] += matrix[3] * (-cx) + matrix[4] * (-cy)
        matrix[2] += cx + tx
        matrix[5] += cy + ty
    return matrix


def affine(
    img: Any,
    angle: float,
    translate: list[int],
    scale: float,
    shear: Any,
    interpolation: Any = InterpolationMode.NEAREST,
    fill: Any = None,
    center: list[int] | None = None,
) -> Any:
    """Rotation (clockwise), translation, scale and shear about ``center``."""
    interpolation = _interp_mode(interpolation)
    if not isinstance(angle, int | float):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, list | tuple):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, numbers.Number | list | tuple):
        raise TypeError(
            "Shear should be either a single value or a sequence of two values"
        )
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(
            f"Shear should be a sequence containing two values. Got {shear}"
        )
    if center is not None and not isinstance(center, list | tuple):
        raise TypeError("Argument center should be a sequence")
    _, height, width = get_dimensions(img)
    if not isinstance(img, Tensor):
        # torch: the centre without the 0.5 offset, as rot90 and the tensor path
        if center is None:
            center = [width * 0.5, height * 0.5]
        matrix = _get_inverse_affine_matrix(
            center, float(angle), list(translate), scale, shear
        )
        opts = _parse_fill(fill, img, name="fillcolor")
        mode = _PIL_MODES[interpolation]
        return img.transform(img.size, Image.AFFINE, matrix, mode, **opts)
    translate_f = [1.0 * t for t in translate]
    matrix = _get_inverse_affine_matrix(
        _centre_offset(img, center), float(angle), translate_f, scale, shear
    )
    return _geometry.affine(img, matrix, interpolation.value, fill)


def _get_perspective_coeffs(startpoints: Any, endpoints: Any) -> list[float]:
    """The 8 coefficients mapping ``endpoints`` back to ``startpoints``."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(
            "Please provide exactly four corners, got "
            f"{len(startpoints)} startpoints and {len(endpoints)} endpoints."
        )
    a = np.zeros((8, 8), np.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints, strict=True)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.asarray(startpoints, np.float64).reshape(8)
    from scipy.linalg import lapack  # scipy comes with jax

    # torch: linalg.lstsq(a, b, driver="gels"), in double, then float32
    _, res, info = lapack.dgels(a, b)
    if info > 0:
        from jaxblitz.compat.ops._decompositions import LinAlgError

        raise LinAlgError(
            "torch.linalg.lstsq: The least squares solution could not be computed "
            "because the input matrix does not have full rank (error code: "
            f"{info})."
        )
    return [float(v) for v in res.astype(np.float32)]


def perspective(
    img: Any,
    startpoints: list[list[int]],
    endpoints: list[list[int]],
    interpolation: Any = InterpolationMode.BILINEAR,
    fill: Any = None,
) -> Any:
    """Moves the four corners ``startpoints`` to ``endpoints``."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = _interp_mode(interpolation)
    if not isinstance(img, Tensor):
        _check_pil(img)
        opts = _parse_fill(fill, img, name="fillcolor")
        mode = _PIL_MODES[interpolation]
        return img.transform(img.size, Image.PERSPECTIVE, coeffs, mode, **opts)
    return _geometry.perspective(img, coeffs, interpolation.value, fill)


def elastic_transform(
    img: Any,
    displacement: Tensor,
    interpolation: Any = InterpolationMode.BILINEAR,
    fill: list[float] | None = None,
) -> Any:
    """Moves every pixel by ``displacement`` (1, H, W, 2), in normalised
    coordinates; PIL images go through the tensor path and back."""
    if isinstance(interpolation, int):
        warnings.warn(
            "Argument interpolation should be of type InterpolationMode instead of "
            "int. Please, use InterpolationMode enum.",
            stacklevel=2,
        )
        interpolation = _FROM_INT[interpolation]
    if not isinstance(displacement, Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    t_img = img
    if not isinstance(img, Tensor):
        if not _is_pil(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    shape = (1,) + tuple(t_img.shape[-2:]) + (2,)
    if shape != tuple(displacement.shape):
        raise ValueError(
            f"Argument displacement shape should be {shape}, but given "
            f"{displacement.shape}"
        )
    output = _geometry.elastic_transform(t_img, displacement, interpolation.value, fill)
    if not isinstance(img, Tensor):
        output = to_pil_image(output, mode=img.mode)
    return output


def to_pil_image(pic: Any, mode: str | None = None) -> Any:
    """CHW tensor or HWC ndarray -> PIL image (floats scaled by 255 to uint8)."""
    if not isinstance(pic, Tensor | np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if isinstance(pic, Tensor):
        if pic.ndim not in {2, 3}:
            raise ValueError(
                f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions."
            )
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(
                f"pic should not have > 4 channels. Got {pic.shape[-3]} channels."
            )
        is_float = pic.is_floating_point()
        npimg = np.transpose(pic.detach().numpy(), (1, 2, 0))
        if is_float and mode != "F":
            npimg = (npimg * 255).astype(np.uint8)  # torch: pic.mul(255).byte()
    else:
        if pic.ndim not in {2, 3}:
            raise ValueError(
                f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions."
            )
        if pic.ndim == 2:
            pic = np.expand_dims(pic, 2)
        if pic.shape[-1] > 4:
            raise ValueError(
                f"pic should not have > 4 channels. Got {pic.shape[-1]} channels."
            )
        npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        expected_mode = None
        npimg = npimg[:, :, 0]
        if npimg.dtype == np.uint8:
            expected_mode = "L"
        elif npimg.dtype == np.int16:
            expected_mode = "I;16"
        elif npimg.dtype == np.int32:
            expected_mode = "I"
        elif npimg.dtype == np.float32:
            expected_mode = "F"
        if mode is not None and mode != expected_mode:
            raise ValueError(
                f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                f"Should be {expected_mode}"
            )
        mode = expected_mode
    elif npimg.shape[2] == 2:
        permitted = ["LA"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        permitted = ["RGBA", "CMYK", "RGBX"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        permitted = ["RGB", "YCbCr", "HSV"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    arr = np.ascontiguousarray(npimg)
    img = Image.fromarray(arr)
    if img.mode != mode:
        size = (arr.shape[1], arr.shape[0])
        img = Image.frombuffer(mode, size, arr.tobytes(), "raw", mode, 0, 1)
    return img
