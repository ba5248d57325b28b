"""Blitz 4, Training a classifier: ``torchvision.transforms.functional``.

On PIL images these call Pillow exactly as torchvision's ``_functional_pil`` does
(``resize``, ``crop``, ``transpose``, ``convert``, ``ImageOps.expand``), so the
pixels are Pillow's. On tensors ``(..., C, H, W)`` they are compat ops, recorded
for autograd: resizing is ``jax.image.resize`` (torch's ``interpolate`` with
``align_corners=False``; bilinear with or without antialias, bicubic with it,
nearest and nearest-exact), padding ``jnp.pad``, cropping a slice.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from jaxblitz.compat import _dtype
from jaxblitz.compat.creation import as_tensor, from_numpy
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.vision.transforms import _kernels


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


def _assert_image_tensor(img: Tensor) -> None:
    if not img.ndim >= 2:
        raise TypeError("Tensor is not a torch image.")


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
    if isinstance(interpolation, int):
        interpolation = _FROM_INT[interpolation]
    elif not isinstance(interpolation, InterpolationMode):
        raise TypeError(
            "Argument interpolation should be a InterpolationMode or a corresponding "
            "Pillow integer constant"
        )
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
    return _kernels.resize(img, output_size, interpolation.value, bool(antialias))


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
    h, w = img.shape[-2:]  # negative padding crops first, as torch's pad does
    img = img[
        ..., max(-top, 0) : h - max(-bottom, 0), max(-left, 0) : w - max(-right, 0)
    ]
    widths = tuple(max(v, 0) for v in (top, bottom, left, right))
    return _kernels.pad(img, widths, float(fill), padding_mode)


def _pad_pil(img: Any, padding: Any, fill: Any, padding_mode: str) -> Any:
    """torch: ``_functional_pil.pad``: ``ImageOps.expand`` or ``np.pad``."""
    if not _is_pil(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")
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
        if not _is_pil(img):
            raise TypeError(f"img should be PIL Image. Got {type(img)}")
        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    _assert_image_tensor(img)
    return _kernels.flip_last(img)


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
    if not _is_pil(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        gray = np.array(img.convert("L"), dtype=np.uint8)
        return Image.fromarray(np.dstack([gray, gray, gray]))  # mode "RGB"
    raise ValueError("num_output_channels should be either 1 or 3")
