"""Blitz 4, Training a classifier: ``torchvision.transforms`` (v1 semantics).

``Compose``, ``ToTensor``, ``PILToTensor``, ``ToPILImage``, ``Normalize``,
``Lambda``, ``Resize``, ``CenterCrop``, ``Pad``, ``RandomCrop``,
``RandomResizedCrop``, ``FiveCrop``/``TenCrop``, ``RandomHorizontalFlip``/
``RandomVerticalFlip``, ``Grayscale``/``RandomGrayscale``, ``ColorJitter``,
``GaussianBlur``, ``RandomErasing``, ``RandomRotation``, ``RandomAffine``,
``RandomPerspective``, ``RandomInvert``/``Posterize``/``Solarize``/
``AdjustSharpness``/``Autocontrast``/``Equalize``, ``RandomApply``/``Choice``/
``Order``, ``LinearTransformation``, ``ConvertImageDtype``, ``ElasticTransform``
and (from :mod:`.autoaugment`) ``AutoAugment``, ``RandAugment``,
``TrivialAugmentWide`` and ``AugMix``, on PIL images
(Pillow does the work, as in torchvision) and on tensors ``(..., C, H, W)`` (see
:mod:`.functional`). As in torchvision, the ones that are ``torch.nn.Module``
there are compat ``nn.Module`` here, and the random ones draw from compat's
global generator, in torchvision's order and kinds of draw, so
``torch.manual_seed`` makes them reproducible (the values drawn differ from
PyTorch's, as all of compat's do; ``RandomOrder`` and ``RandomChoice`` use
Python's ``random``, as torchvision's).
"""

from __future__ import annotations

import math
import numbers
import random as _random
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import float32
from jaxblitz.compat.tensor.creation import (
    empty,
    normal,
    rand,
    randint,
    randperm,
    tensor,
)
from jaxblitz.compat.vision.transforms import functional as F
from jaxblitz.compat.vision.transforms.autoaugment import (
    AugMix,
    AutoAugment,
    AutoAugmentPolicy,
    RandAugment,
    TrivialAugmentWide,
)
from jaxblitz.compat.vision.transforms.functional import InterpolationMode

__all__ = [
    "AugMix",
    "AutoAugment",
    "AutoAugmentPolicy",
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "ConvertImageDtype",
    "ElasticTransform",
    "FiveCrop",
    "GaussianBlur",
    "Grayscale",
    "InterpolationMode",
    "Lambda",
    "LinearTransformation",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RandAugment",
    "RandomAdjustSharpness",
    "RandomAffine",
    "RandomApply",
    "RandomAutocontrast",
    "RandomChoice",
    "RandomCrop",
    "RandomEqualize",
    "RandomErasing",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomInvert",
    "RandomOrder",
    "RandomPerspective",
    "RandomPosterize",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomSolarize",
    "RandomVerticalFlip",
    "Resize",
    "TenCrop",
    "ToPILImage",
    "ToTensor",
    "TrivialAugmentWide",
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


def _uniform(low: float, high: float) -> float:
    """torch: ``torch.empty(1).uniform_(low, high).item()``."""
    return float(empty(1).uniform_(float(low), float(high)).item())


def _interpolation(interpolation: Any) -> InterpolationMode:
    if isinstance(interpolation, int):
        return F._FROM_INT[interpolation]
    return interpolation


class ToPILImage:
    """CHW tensor or HWC ndarray -> PIL image (see :func:`.functional.to_pil_image`)."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic: Any) -> Any:
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        detail = f"(mode={self.mode})" if self.mode is not None else "()"
        return f"{self.__class__.__name__}{detail}"


class RandomTransforms:
    """A list of transforms the subclasses pick from."""

    def __init__(self, transforms: Sequence[Any]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError()

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class RandomApply(Module):
    """All of ``transforms`` with probability ``p``, else none."""

    def __init__(self, transforms: Sequence[Any], p: float = 0.5) -> None:
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img: Any) -> Any:
        if self.p < rand(1).item():  # torch: if self.p < torch.rand(1)
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}(\n    p={self.p}{body}\n)"


class RandomOrder(RandomTransforms):
    """``transforms`` in a random order."""

    def __call__(self, img: Any) -> Any:
        order = list(range(len(self.transforms)))
        _random.shuffle(order)  # torch: random.shuffle, Python's generator
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """One of ``transforms``, picked with weights ``p``."""

    def __init__(self, transforms: Sequence[Any], p: Any = None) -> None:
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args: Any) -> Any:
        t = _random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self) -> str:
        return f"{super().__repr__()}(p={self.p})"


class RandomVerticalFlip(Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if rand(1).item() < self.p:
            return F.vflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomResizedCrop(Module):
    """A crop of random area (``scale``) and aspect (``ratio``), resized to ``size``."""

    def __init__(
        self,
        size: int | Sequence[int],
        scale: tuple[float, float] = (0.08, 1.0),
        ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: Any = InterpolationMode.BILINEAR,
        antialias: bool | None = True,
    ) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.interpolation = _interpolation(interpolation)
        self.antialias, self.scale, self.ratio = antialias, scale, ratio

    @staticmethod
    def get_params(
        img: Any, scale: list[float], ratio: list[float]
    ) -> tuple[int, int, int, int]:
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = tensor(ratio).log().tolist()  # torch: torch.log(torch.tensor())
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = randint(0, height - h + 1, size=(1,)).item()
                j = randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)  # fallback: the central crop
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img: Any) -> Any:
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(
            img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(size={self.size}, "
            f"scale={tuple(round(s, 4) for s in self.scale)}, "
            f"ratio={tuple(round(r, 4) for r in self.ratio)}, "
            f"interpolation={self.interpolation.value}, antialias={self.antialias})"
        )


class FiveCrop(Module):
    def __init__(self, size: int | Sequence[int]) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)

    def forward(self, img: Any) -> tuple[Any, ...]:
        return F.five_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(Module):
    def __init__(self, size: int | Sequence[int], vertical_flip: bool = False) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)
        self.vertical_flip = vertical_flip

    def forward(self, img: Any) -> list[Any]:
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(size={self.size}, "
            f"vertical_flip={self.vertical_flip})"
        )


class ColorJitter(Module):
    """Random brightness, contrast, saturation and hue, applied in random order."""

    def __init__(
        self, brightness: Any = 0, contrast: Any = 0, saturation: Any = 0, hue: Any = 0
    ) -> None:
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(
            hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False
        )

    def _check_input(
        self,
        value: Any,
        name: str,
        center: float = 1,
        bound: tuple[float, float] = (0, float("inf")),
        clip_first_on_zero: bool = True,
    ) -> tuple[float, float] | None:
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(
                    f"If {name} is a single number, it must be non negative."
                )
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, tuple | list) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(
                f"{name} should be a single number or a list/tuple with length 2."
            )
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(
                f"{name} values should be between {bound}, but got {value}."
            )
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(
        brightness: Any, contrast: Any, saturation: Any, hue: Any
    ) -> tuple[Any, ...]:
        fn_idx = randperm(4)
        b = None if brightness is None else _uniform(*brightness)
        c = None if contrast is None else _uniform(*contrast)
        s = None if saturation is None else _uniform(*saturation)
        h = None if hue is None else _uniform(*hue)
        return fn_idx, b, c, s, h

    def forward(self, img: Any) -> Any:
        fn_idx, b, c, s, h = self.get_params(
            self.brightness, self.contrast, self.saturation, self.hue
        )
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(brightness={self.brightness}, "
            f"contrast={self.contrast}, saturation={self.saturation}, hue={self.hue})"
        )


class RandomGrayscale(Module):
    def __init__(self, p: float = 0.1) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        num_output_channels, _, _ = F.get_dimensions(img)
        if rand(1).item() < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class _RandomColor(Module):
    """``fn(img, *args)`` with probability ``p``."""

    _fn: Any = None

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def _args(self) -> tuple[Any, ...]:
        return ()

    def forward(self, img: Any) -> Any:
        if rand(1).item() < self.p:
            return type(self)._fn(img, *self._args())
        return img

    def __repr__(self) -> str:
        args = "".join(f"{k}={v}, " for k, v in self._named())
        return f"{self.__class__.__name__}({args}p={self.p})"

    def _named(self) -> list[tuple[str, Any]]:
        return []


class RandomInvert(_RandomColor):
    _fn = staticmethod(F.invert)


class RandomAutocontrast(_RandomColor):
    _fn = staticmethod(F.autocontrast)


class RandomEqualize(_RandomColor):
    _fn = staticmethod(F.equalize)


class RandomPosterize(_RandomColor):
    _fn = staticmethod(F.posterize)

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p)
        self.bits = bits

    def _args(self) -> tuple[Any, ...]:
        return (self.bits,)

    def _named(self) -> list[tuple[str, Any]]:
        return [("bits", self.bits)]


class RandomSolarize(_RandomColor):
    _fn = staticmethod(F.solarize)

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.threshold = threshold

    def _args(self) -> tuple[Any, ...]:
        return (self.threshold,)

    def _named(self) -> list[tuple[str, Any]]:
        return [("threshold", self.threshold)]


class RandomAdjustSharpness(_RandomColor):
    _fn = staticmethod(F.adjust_sharpness)

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _args(self) -> tuple[Any, ...]:
        return (self.sharpness_factor,)

    def _named(self) -> list[tuple[str, Any]]:
        return [("sharpness_factor", self.sharpness_factor)]


class GaussianBlur(Module):
    """A Gaussian blur with ``sigma`` drawn uniformly from ``(min, max)``."""

    def __init__(self, kernel_size: Any, sigma: Any = (0.1, 2.0)) -> None:
        super().__init__()
        self.kernel_size = _setup_size(
            kernel_size, "Kernel size should be a tuple/list of two integers"
        )
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError(
                    "Kernel size value should be an odd and positive number."
                )
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError(
                    "sigma values should be positive and of the form (min, max)."
                )
        else:
            raise ValueError(
                "sigma should be a single number or a list/tuple with length 2."
            )
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        return _uniform(sigma_min, sigma_max)

    def forward(self, img: Any) -> Any:
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(kernel_size={self.kernel_size}, "
            f"sigma={self.sigma})"
        )


def _check_sequence_input(x: Any, name: str, req_sizes: tuple[int, ...]) -> None:
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x: Any, name: str, req_sizes: tuple[int, ...] = (2,)) -> list[float]:
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _check_fill(fill: Any) -> Any:
    if fill is None:
        return 0
    if not isinstance(fill, Sequence | numbers.Number):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


class RandomRotation(Module):
    """Rotation by an angle drawn uniformly from ``degrees``."""

    def __init__(
        self,
        degrees: Any,
        interpolation: Any = InterpolationMode.NEAREST,
        expand: bool = False,
        center: Any = None,
        fill: Any = 0,
    ) -> None:
        super().__init__()
        self.interpolation = _interpolation(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center, self.resample, self.expand = center, self.interpolation, expand
        self.fill = _check_fill(fill)

    @staticmethod
    def get_params(degrees: list[float]) -> float:
        return _uniform(degrees[0], degrees[1])

    def forward(self, img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, img)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self) -> str:
        s = (
            f"{self.__class__.__name__}(degrees={self.degrees}, "
            f"interpolation={self.interpolation.value}, expand={self.expand}"
        )
        if self.center is not None:
            s += f", center={self.center}"
        if self.fill is not None:
            s += f", fill={self.fill}"
        return s + ")"


class RandomAffine(Module):
    """Random rotation, translation, scale and shear."""

    def __init__(
        self,
        degrees: Any,
        translate: Any = None,
        scale: Any = None,
        shear: Any = None,
        interpolation: Any = InterpolationMode.NEAREST,
        fill: Any = 0,
        center: Any = None,
    ) -> None:
        super().__init__()
        self.interpolation = _interpolation(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not (0.0 <= t <= 1.0):
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        if shear is not None:
            self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4))
        else:
            self.shear = shear
        self.fill = _check_fill(fill)
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(
        degrees: list[float],
        translate: Any,
        scale_ranges: Any,
        shears: Any,
        img_size: list[int],
    ) -> tuple[float, tuple[int, int], float, tuple[float, float]]:
        angle = _uniform(degrees[0], degrees[1])
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(_uniform(-max_dx, max_dx)))
            ty = int(round(_uniform(-max_dy, max_dy)))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = 1.0
        if scale_ranges is not None:
            scale = _uniform(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, img)
        _, height, width = F.get_dimensions(img)
        ret = self.get_params(
            self.degrees, self.translate, self.scale, self.shear, [width, height]
        )
        return F.affine(
            img, *ret, interpolation=self.interpolation, fill=fill, center=self.center
        )

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        if self.interpolation != InterpolationMode.NEAREST:
            s += f", interpolation={self.interpolation.value}"
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        return s + ")"


class RandomPerspective(Module):
    """With probability ``p``, a random perspective of strength
    ``distortion_scale``."""

    def __init__(
        self,
        distortion_scale: float = 0.5,
        p: float = 0.5,
        interpolation: Any = InterpolationMode.BILINEAR,
        fill: Any = 0,
    ) -> None:
        super().__init__()
        self.p, self.distortion_scale = p, distortion_scale
        self.interpolation = _interpolation(interpolation)
        self.fill = _check_fill(fill)

    @staticmethod
    def get_params(
        width: int, height: int, distortion_scale: float
    ) -> tuple[list[list[int]], list[list[int]]]:
        half_height, half_width = height // 2, width // 2

        def draw(lo: int, hi: int) -> int:
            return int(randint(lo, hi, size=(1,)).item())

        dw = int(distortion_scale * half_width) + 1
        dh = int(distortion_scale * half_height) + 1
        topleft = [draw(0, dw), draw(0, dh)]
        topright = [draw(width - dw, width), draw(0, dh)]
        botright = [draw(width - dw, width), draw(height - dh, height)]
        botleft = [draw(0, dw), draw(height - dh, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def forward(self, img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, img)
        _, height, width = F.get_dimensions(img)
        if rand(1).item() < self.p:
            startpoints, endpoints = self.get_params(
                width, height, self.distortion_scale
            )
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomErasing(Module):
    """With probability ``p``, erases a random rectangle of a tensor image."""

    def __init__(
        self,
        p: float = 0.5,
        scale: tuple[float, float] = (0.02, 0.33),
        ratio: tuple[float, float] = (0.3, 3.3),
        value: Any = 0,
        inplace: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(value, numbers.Number | str | tuple | list):
            raise TypeError(
                "Argument value should be either a number or str or a sequence"
            )
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, tuple | list):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, tuple | list):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio = p, scale, ratio
        self.value, self.inplace = value, inplace

    @staticmethod
    def get_params(
        img: Tensor, scale: Any, ratio: Any, value: Any = None
    ) -> tuple[int, int, int, int, Any]:
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = tensor(ratio).log().tolist()
        for _ in range(10):
            erase_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = normal(0.0, 1.0, size=[img_c, h, w], dtype=float32)
            else:
                v = tensor(value)[:, None, None]
            i = randint(0, img_h - h + 1, size=(1,)).item()
            j = randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img  # the image unchanged

    def forward(self, img: Any) -> Any:
        if rand(1).item() < self.p:
            if not isinstance(img, Tensor):
                raise TypeError(f"img should be Tensor Image. Got {type(img)}")
            if isinstance(self.value, numbers.Number | str):
                value = [float(self.value)] if not isinstance(self.value, str) else None
            elif isinstance(self.value, tuple | list):
                value = [float(v) for v in self.value]
            else:
                value = self.value
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError(
                    "If value is a sequence, it should have either a single value or "
                    f"{img.shape[-3]} (number of input channels)"
                )
            x, y, h, w, v = self.get_params(img, self.scale, self.ratio, value)
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, "
            f"ratio={self.ratio}, value={self.value}, inplace={self.inplace})"
        )


class LinearTransformation(Module):
    """``(x.view(-1, C*H*W) - mean_vector) @ transformation_matrix`` (a whitening,
    say), reshaped back."""

    def __init__(self, transformation_matrix: Tensor, mean_vector: Tensor) -> None:
        super().__init__()
        size = tuple(transformation_matrix.size())
        if transformation_matrix.size(0) != transformation_matrix.size(1):
            raise ValueError(
                f"transformation_matrix should be square. Got {size} rectangular "
                "matrix."
            )
        if mean_vector.size(0) != transformation_matrix.size(0):
            raise ValueError(
                f"mean_vector should have the same length {mean_vector.size(0)} as "
                f"any one of the dimensions of the transformation_matrix [{size}]"
            )
        if transformation_matrix.dtype != mean_vector.dtype:
            raise ValueError(
                "Input tensors should have the same dtype. Got "
                f"{transformation_matrix.dtype} and {mean_vector.dtype}"
            )
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def forward(self, tensor: Tensor) -> Tensor:
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError(
                "Input tensor and transformation matrix have incompatible shape."
                f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != "
                f"{self.transformation_matrix.shape[0]}"
            )
        flat_tensor = tensor.view(-1, n) - self.mean_vector
        matrix = self.transformation_matrix.to(flat_tensor.dtype)
        return flat_tensor.mm(matrix).view(shape)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(transformation_matrix="
            f"{self.transformation_matrix.tolist()}, "
            f"mean_vector={self.mean_vector.tolist()})"
        )


class ElasticTransform(Module):
    """Moves every pixel by a smoothed random displacement field (Simard et al.,
    2003): uniform noise in [-1, 1], Gaussian-blurred, scaled by ``alpha``."""

    def __init__(
        self,
        alpha: Any = 50.0,
        sigma: Any = 5.0,
        interpolation: Any = InterpolationMode.BILINEAR,
        fill: Any = 0,
    ) -> None:
        super().__init__()
        self.alpha = _pair_of_floats(alpha, "alpha")
        self.sigma = _pair_of_floats(sigma, "sigma")
        self.interpolation = _interpolation(interpolation)
        if isinstance(fill, int | float):
            fill = [float(fill)]
        elif isinstance(fill, list | tuple):
            fill = [float(f) for f in fill]
        else:
            raise TypeError(
                f"fill should be int or float or a list or tuple of them. Got "
                f"{type(fill)}"
            )
        self.fill = fill

    @staticmethod
    def get_params(alpha: list[float], sigma: list[float], size: list[int]) -> Tensor:
        displacements = []
        for axis in (0, 1):  # x, normalised by the width; then y, by the height
            d = rand([1, 1] + size) * 2 - 1
            if sigma[axis] > 0.0:
                k = int(8 * sigma[axis] + 1)
                k += 1 - k % 2  # an odd kernel
                d = F.gaussian_blur(d, [k, k], sigma)
            displacements.append(d * alpha[axis] / size[1 - axis])
        return cat(displacements, 1).permute([0, 2, 3, 1])  # (1, H, W, 2)

    def forward(self, tensor: Any) -> Any:
        _, height, width = F.get_dimensions(tensor)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(tensor, displacement, self.interpolation, self.fill)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(alpha={self.alpha}, sigma={self.sigma}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )


def _pair_of_floats(value: Any, name: str) -> Any:
    """torch: ElasticTransform's ``alpha`` and ``sigma`` checks."""
    if not isinstance(value, float | Sequence):
        raise TypeError(
            f"{name} should be float or a sequence of floats. Got {type(value)}"
        )
    if isinstance(value, Sequence) and len(value) != 2:
        raise ValueError(
            f"If {name} is a sequence its length should be 2. Got {len(value)}"
        )
    if isinstance(value, Sequence):
        for element in value:
            if not isinstance(element, float):
                raise TypeError(
                    f"{name} should be a sequence of floats. Got {type(element)}"
                )
    if isinstance(value, float):
        value = [float(value), float(value)]
    return value
