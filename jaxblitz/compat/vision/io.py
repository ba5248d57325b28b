"""``torchvision.io``'s images: ``read_image``, ``decode_image`` (and
``decode_png``/``decode_jpeg``), ``encode_png``/``encode_jpeg``,
``write_png``/``write_jpeg``, ``read_file``/``write_file`` and ``ImageReadMode``.

    from jaxblitz.compat.vision.io import read_image, ImageReadMode

PNG and JPEG (and whatever else Pillow opens) are decoded and encoded by
Pillow, not libpng/libjpeg as in torchvision, so the pixels are Pillow's; a
conversion (``GRAY`` of an RGB file, say) uses Pillow's weights. An encoder's
bytes are Pillow's (a PNG decodes to the same pixels as libpng's; a JPEG's
pixels differ as encoders do). A decoded image is a ``uint8`` tensor
``(C, H, W)``; a 16-bit grey file keeps its top byte (newer torchvision gives
``uint16`` there).
"""

from __future__ import annotations

import errno
import io
import os
from enum import Enum
from typing import Any

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import uint8
from jaxblitz.compat.tensor.creation import from_numpy

__all__ = [
    "ImageReadMode",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "read_file",
    "read_image",
    "write_file",
    "write_jpeg",
    "write_png",
]


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


def _mode(mode: Any) -> ImageReadMode:
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode should be an ImageReadMode, got {type(mode)}")
    return mode


def _check_file(path: str) -> None:
    if not os.path.isfile(path):  # torchvision: read_file's RuntimeError
        code = errno.ENOENT if not os.path.exists(path) else errno.EISDIR
        raise RuntimeError(f"[Errno {code}] {os.strerror(code)}: '{path}'")


def _decode(source: Any, mode: ImageReadMode, name: str, exif: bool) -> Tensor:
    """Pillow decodes ``source`` (a path or a file object) to ``(C, H, W)`` uint8."""
    try:
        with Image.open(source) as img:
            img.load()
            fmt = img.format
            if fmt == "JPEG" and mode in (
                ImageReadMode.GRAY_ALPHA,
                ImageReadMode.RGB_ALPHA,
            ):
                raise RuntimeError("The provided mode is not supported for JPEG files")
            if exif:
                img = ImageOps.exif_transpose(img)
            if mode == ImageReadMode.UNCHANGED:
                out = _unchanged(img)
            else:
                out = _unchanged(img).convert(_PIL_MODE[mode])
    except UnidentifiedImageError as e:
        raise RuntimeError(
            f"Unsupported image file {name}: Pillow cannot identify it"
        ) from e
    hwc = np.array(out, np.uint8, copy=True).reshape(out.size[1], out.size[0], -1)
    return from_numpy(np.ascontiguousarray(hwc.transpose((2, 0, 1))))


def read_image(
    path: str | os.PathLike[str],
    mode: Any = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> Tensor:
    """The image at ``path`` as a ``uint8`` tensor ``(C, H, W)``.

    ``mode`` is an :class:`ImageReadMode` (or its name, as torchvision's
    ``decode_image`` takes): ``UNCHANGED`` keeps the file's channels (1 grey,
    2 grey + alpha, 3 RGB, 4 RGBA; a palette is expanded), the others convert.
    """
    mode = _mode(mode)
    path = os.fspath(path)
    _check_file(path)
    return _decode(path, mode, repr(path), apply_exif_orientation)


def read_file(path: str | os.PathLike[str]) -> Tensor:
    """The bytes of the file at ``path`` as a 1-D ``uint8`` tensor."""
    path = os.fspath(path)
    _check_file(path)
    with open(path, "rb") as f:
        return from_numpy(np.frombuffer(f.read(), np.uint8).copy())


def write_file(filename: str | os.PathLike[str], data: Tensor) -> None:
    """Writes the 1-D ``uint8`` tensor ``data`` to ``filename``."""
    _check_bytes(data)
    with open(os.fspath(filename), "wb") as f:
        f.write(data.numpy().tobytes())


def _check_bytes(data: Any) -> None:
    if not isinstance(data, Tensor):
        raise TypeError(f"Expected a torch.Tensor, got {type(data)}")
    if data.dtype != uint8:
        raise RuntimeError(f"Expected a torch.uint8 tensor, got {data.dtype}")
    if data.ndim != 1:
        raise RuntimeError(f"Expected a 1 dimensional tensor, got {data.ndim} dims")


def decode_image(
    input: Any,
    mode: Any = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> Tensor:
    """An encoded image (a 1-D ``uint8`` tensor of its bytes, or a path) as a
    ``uint8`` tensor ``(C, H, W)``; ``mode`` as :func:`read_image`'s."""
    if not isinstance(input, Tensor):
        return read_image(input, mode, apply_exif_orientation)
    _check_bytes(input)
    source = io.BytesIO(input.numpy().tobytes())
    return _decode(source, _mode(mode), "data", apply_exif_orientation)


def decode_png(
    input: Tensor,
    mode: Any = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> Tensor:
    """A PNG's bytes (1-D ``uint8`` tensor) as a ``uint8`` tensor ``(C, H, W)``."""
    return decode_image(input, mode, apply_exif_orientation)


def decode_jpeg(
    input: Any,
    mode: Any = ImageReadMode.UNCHANGED,
    device: Any = "cpu",
    apply_exif_orientation: bool = False,
) -> Any:
    """A JPEG's bytes (1-D ``uint8`` tensor, or a list of them) as ``uint8``
    tensors ``(C, H, W)``."""
    if str(device) != "cpu":
        raise NotImplementedError(
            f"decode_jpeg: device={device!r} is not supported by jaxblitz.compat"
        )
    if isinstance(input, list | tuple):
        return [decode_image(x, mode, apply_exif_orientation) for x in input]
    return decode_image(input, mode, apply_exif_orientation)


def _to_pil(input: Tensor) -> Image.Image:
    if not isinstance(input, Tensor):
        raise TypeError(f"Expected a torch.Tensor, got {type(input)}")
    if input.dtype != uint8:
        raise RuntimeError(f"Input tensor dtype should be uint8, got {input.dtype}")
    if input.ndim != 3:
        raise RuntimeError(
            f"Input data should be a 3-dimensional tensor, got {input.ndim} dims"
        )
    if input.shape[0] not in (1, 3):
        raise RuntimeError(
            f"The number of channels should be 1 or 3, got: {input.shape[0]}"
        )
    hwc = np.ascontiguousarray(input.detach().numpy().transpose((1, 2, 0)))
    return Image.fromarray(hwc[:, :, 0] if hwc.shape[2] == 1 else hwc)


def _encoded(img: Image.Image, fmt: str, **options: Any) -> Tensor:
    buf = io.BytesIO()
    img.save(buf, fmt, **options)
    return from_numpy(np.frombuffer(buf.getvalue(), np.uint8).copy())


def encode_png(input: Tensor, compression_level: int = 6) -> Tensor:
    """A ``uint8`` ``(C, H, W)`` image (1 or 3 channels) as PNG bytes, a 1-D
    ``uint8`` tensor."""
    if compression_level < 0 or compression_level > 9:
        raise ValueError(
            f"Compression level should be between 0 and 9, got {compression_level}"
        )
    img = _to_pil(input)
    return _encoded(img, "PNG", compress_level=compression_level)


def encode_jpeg(input: Any, quality: int = 75) -> Any:
    """A ``uint8`` ``(C, H, W)`` image (1 or 3 channels), or a list of them, as
    JPEG bytes, 1-D ``uint8`` tensors."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, list):
        if not input:
            raise ValueError(
                "encode_jpeg requires at least one input tensor when a list is passed"
            )
        return [encode_jpeg(x, quality) for x in input]
    return _encoded(_to_pil(input), "JPEG", quality=quality)


def write_png(
    input: Tensor, filename: str | os.PathLike[str], compression_level: int = 6
) -> None:
    """Encodes ``input`` as PNG into ``filename``."""
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(
    input: Tensor, filename: str | os.PathLike[str], quality: int = 75
) -> None:
    """Encodes ``input`` as JPEG into ``filename``."""
    write_file(filename, encode_jpeg(input, quality))
