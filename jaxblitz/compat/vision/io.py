"""``torchvision.io``'s image reading: ``read_image`` and ``ImageReadMode``.

    from jaxblitz.compat.vision.io import read_image, ImageReadMode

PNG and JPEG (and whatever else Pillow opens) are decoded by Pillow, not
libpng/libjpeg as in torchvision, so the pixels are Pillow's; a conversion
(``GRAY`` of an RGB file, say) uses Pillow's weights. The result is a
``uint8`` tensor ``(C, H, W)``; a 16-bit grey file keeps its top byte (newer
torchvision gives ``uint16`` there).
"""

from __future__ import annotations

import errno
import os
from enum import Enum
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from jaxblitz.compat.creation import from_numpy
from jaxblitz.compat.tensor import Tensor

__all__ = ["ImageReadMode", "read_image"]


class ImageReadMode(Enum):
    """How many channels ``read_image`` returns (torchvision's values)."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA  # torchvision's alias


_PIL_MODE = {
    ImageReadMode.GRAY: "L",
    ImageReadMode.GRAY_ALPHA: "LA",
    ImageReadMode.RGB: "RGB",
    ImageReadMode.RGB_ALPHA: "RGBA",
}
_KEEP = {"L", "LA", "RGB", "RGBA"}  # UNCHANGED keeps these; others become one


def _unchanged(img: Image.Image) -> Image.Image:
    if img.mode in _KEEP:
        return img
    if img.mode == "P":  # the palette expanded, with alpha if it has some
        return img.convert("RGBA" if img.has_transparency_data else "RGB")
    if img.mode in ("1", "I", "I;16", "I;16B", "I;16L", "F"):
        if img.mode in ("1", "F"):
            return img.convert("L")
        # 16-bit grey: the top byte, as a uint8 read of it keeps
        array = np.asarray(img).astype(np.uint32) >> 8
        return Image.fromarray(array.astype(np.uint8), "L")
    if img.mode == "PA":
        return img.convert("RGBA")
    return img.convert("RGB")  # CMYK, YCbCr, LAB, HSV ...


def read_image(
    path: str | os.PathLike[str], mode: Any = ImageReadMode.UNCHANGED
) -> Tensor:
    """The image at ``path`` as a ``uint8`` tensor ``(C, H, W)``.

    ``mode`` is an :class:`ImageReadMode` (or its name, as torchvision's
    ``decode_image`` takes): ``UNCHANGED`` keeps the file's channels (1 grey,
    2 grey + alpha, 3 RGB, 4 RGBA; a palette is expanded), the others convert.
    """
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode should be an ImageReadMode, got {type(mode)}")
    path = os.fspath(path)
    if not os.path.isfile(path):  # torchvision: read_file's RuntimeError
        code = errno.ENOENT if not os.path.exists(path) else errno.EISDIR
        raise RuntimeError(f"[Errno {code}] {os.strerror(code)}: '{path}'")
    try:
        with Image.open(path) as img:
            img.load()
            fmt = img.format
            if fmt == "JPEG" and mode in (
                ImageReadMode.GRAY_ALPHA,
                ImageReadMode.RGB_ALPHA,
            ):
                raise RuntimeError("The provided mode is not supported for JPEG files")
            if mode == ImageReadMode.UNCHANGED:
                out = _unchanged(img)
            else:
                out = _unchanged(img).convert(_PIL_MODE[mode])
    except UnidentifiedImageError as e:
        raise RuntimeError(
            f"Unsupported image file {path!r}: Pillow cannot identify it"
        ) from e
    hwc = np.array(out, np.uint8, copy=True).reshape(out.size[1], out.size[0], -1)
    return from_numpy(np.ascontiguousarray(hwc.transpose((2, 0, 1))))
