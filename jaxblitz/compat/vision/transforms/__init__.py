"""Blitz 4, Training a classifier: ``torchvision.transforms`` (v1 semantics).

``Compose``, ``ToTensor``, ``PILToTensor``, ``Normalize``, ``Lambda``, ``Resize``,
``CenterCrop``, ``Pad``, ``RandomCrop``, ``RandomHorizontalFlip``, ``Grayscale``,
``ConvertImageDtype``, on PIL images (Pillow does the work, as in torchvision)
and on tensors ``(..., C, H, W)`` (see :mod:`.functional`). As in torchvision,
the ones that are ``torch.nn.Module`` there are compat ``nn.Module`` here, and
the random ones draw from compat's global generator, so ``torch.manual_seed``
makes them reproducible (the draws differ from PyTorch's, as all of compat's do).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

from jaxblitz.compat.creation import rand, randint
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.vision.transforms import functional as F
from jaxblitz.compat.vision.transforms.functional import InterpolationMode

__all__ = [
    "CenterCrop",
    "Compose",
    "ConvertImageDtype",
    "Grayscale",
    "InterpolationMode",
    "Lambda",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RandomCrop",
    "RandomHorizontalFlip",
    "Resize",
    "ToTensor",
]


class Compose:
    def __init__(self, transforms: Sequence[Any]):
        self.transforms = transforms

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class ToTensor:
    """PIL image or HWC ndarray -> CHW tensor; uint8 becomes floats in [0, 1]."""

    def __call__(self, pic: Any) -> Tensor:
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """PIL image -> CHW tensor of the image's own dtype, unscaled."""

    def __call__(self, pic: Any) -> Tensor:
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class Lambda:
    def __init__(self, lambd: Callable[[Any], Any]):
        if not callable(lambd):
            raise TypeError(
                f"Argument lambd should be callable, got {repr(type(lambd).__name__)}"
            )
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class ConvertImageDtype(Module):
    def __init__(self, dtype: Any) -> None:
        super().__init__()
        self.dtype = dtype

    def forward(self, image: Tensor) -> Tensor:
        return F.convert_image_dtype(image, self.dtype)


class Normalize(Module):
    """``(x - mean) / std`` per channel."""

    def __init__(
        self, mean: Sequence[float], std: Sequence[float], inplace: bool = False
    ) -> None:
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor: Tensor) -> Tensor:
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


def _setup_size(size: Any, error_msg: str) -> Any:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


_SIZE_MSG = "Please provide only two dimensions (h, w) for size."


class Resize(Module):
    """Resize to ``(h, w)``, or the smaller edge to ``size`` keeping the aspect."""

    def __init__(
        self,
        size: int | Sequence[int],
        interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
        max_size: int | None = None,
        antialias: bool | None = True,
    ) -> None:
        super().__init__()
        if not isinstance(size, int | Sequence):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        if isinstance(interpolation, int):
            interpolation = F._FROM_INT[interpolation]
        self.interpolation = interpolation

    def forward(self, img: Any) -> Any:
        return F.resize(
            img, self.size, self.interpolation, self.max_size, self.antialias
        )

    def __repr__(self) -> str:
        detail = (
            f"(size={self.size}, interpolation={self.interpolation.value}, "
            f"max_size={self.max_size}, antialias={self.antialias})"
        )
        return f"{self.__class__.__name__}{detail}"


class CenterCrop(Module):
    def __init__(self, size: int | Sequence[int]) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)

    def forward(self, img: Any) -> Any:
        return F.center_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(Module):
    """Pad every side: ``padding`` is an int, ``(left/right, top/bottom)`` or
    ``(left, top, right, bottom)``; modes constant (with ``fill``), edge,
    reflect and symmetric, as torchvision's ``Pad`` (see :func:`.functional.pad`).
    """

    def __init__(
        self, padding: Any, fill: Any = 0, padding_mode: str = "constant"
    ) -> None:
        super().__init__()
        if not isinstance(padding, numbers.Number | tuple | list):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, numbers.Number | tuple | list):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError(
                "Padding mode should be either constant, edge, reflect or symmetric"
            )
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError(
                "Padding must be an int or a 1, 2, or 4 element tuple, not a "
                f"{len(padding)} element tuple"
            )
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, "
            f"padding_mode={self.padding_mode})"
        )


class RandomCrop(Module):
    """A random ``size`` crop, after optional padding (one draw per call)."""

    @staticmethod
    def get_params(img: Any, output_size: tuple[int, int]) -> tuple[int, ...]:
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(
                f"Required crop size {(th, tw)} is larger than input image size "
                f"{(h, w)}"
            )
        if w == tw and h == th:
            return 0, 0, h, w
        # torch: torch.randint(0, h - th + 1, size=(1,)).item(), then for j
        i = randint(0, h - th + 1, size=(1,)).item()
        j = randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(
        self,
        size: int | Sequence[int],
        padding: Any = None,
        pad_if_needed: bool = False,
        fill: Any = 0,
        padding_mode: str = "constant",
    ) -> None:
        super().__init__()
        self.size = tuple(_setup_size(size, error_msg=_SIZE_MSG))
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def forward(self, img: Any) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            padding = [self.size[1] - width, 0]
            img = F.pad(img, padding, self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            padding = [0, self.size[0] - height]
            img = F.pad(img, padding, self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if rand(1).item() < self.p:  # torch: if torch.rand(1) < self.p
            return F.hflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class Grayscale(Module):
    def __init__(self, num_output_channels: int = 1) -> None:
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img: Any) -> Any:
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"
        )
