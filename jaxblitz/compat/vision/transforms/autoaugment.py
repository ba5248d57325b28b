"""Blitz 4, Training a classifier: ``torchvision.transforms.autoaugment``.

``AutoAugment`` (the ImageNet, CIFAR-10 and SVHN policies), ``RandAugment``,
``TrivialAugmentWide`` and ``AugMix``: torchvision's op lists, magnitude bins and
draws (kinds and order), from compat's generator. The ops are
:mod:`.functional`'s, on PIL images and on tensors.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any

import jax
import numpy as np

from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import (
    as_tensor,
    default_generator,
    from_numpy,
    rand,
    randint,
    tensor,
)
from jaxblitz.compat.vision.transforms import functional as F
from jaxblitz.compat.vision.transforms._geometry import linspace32
from jaxblitz.compat.vision.transforms.functional import InterpolationMode

__all__ = [
    "AutoAugmentPolicy",
    "AutoAugment",
    "RandAugment",
    "TrivialAugmentWide",
    "AugMix",
]


def _apply_op(
    img: Any, op_name: str, magnitude: float, interpolation: Any, fill: Any
) -> Any:
    shear = math.degrees(math.atan(magnitude))
    if op_name == "ShearX":  # torch: about the top-left corner
        return F.affine(
            img, 0.0, [0, 0], 1.0, [shear, 0.0], interpolation, fill, center=[0, 0]
        )
    if op_name == "ShearY":
        return F.affine(
            img, 0.0, [0, 0], 1.0, [0.0, shear], interpolation, fill, center=[0, 0]
        )
    if op_name == "TranslateX":
        return F.affine(
            img, 0.0, [int(magnitude), 0], 1.0, [0.0, 0.0], interpolation, fill
        )
    if op_name == "TranslateY":
        return F.affine(
            img, 0.0, [0, int(magnitude)], 1.0, [0.0, 0.0], interpolation, fill
        )
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    adjust = {
        "Brightness": F.adjust_brightness,
        "Color": F.adjust_saturation,
        "Contrast": F.adjust_contrast,
        "Sharpness": F.adjust_sharpness,
    }
    if op_name in adjust:
        return adjust[op_name](img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    plain = {"AutoContrast": F.autocontrast, "Equalize": F.equalize, "Invert": F.invert}
    if op_name in plain:
        return plain[op_name](img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _bins(start: float, end: float, num_bins: int) -> Tensor:
    """torch: ``torch.linspace(start, end, num_bins)``."""
    return from_numpy(linspace32(start, end, num_bins))


def _posterize_bins(top: int, num_bins: int, steps: int) -> Tensor:
    """torch: ``top - (arange(num_bins) / ((num_bins - 1) / steps)).round().int()``."""
    ratio = np.arange(num_bins, dtype=np.float32) / np.float32((num_bins - 1) / steps)
    return from_numpy((top - np.round(ratio).astype(np.int32)).astype(np.int32))


def _zero() -> Tensor:
    return tensor(0.0)


def _common_space(num_bins: int, image_size: tuple[int, int], top: float) -> dict:
    """The ops AutoAugment and RandAugment share, ``top`` the translation's."""
    return {
        "ShearX": (_bins(0.0, 0.3, num_bins), True),
        "ShearY": (_bins(0.0, 0.3, num_bins), True),
        "TranslateX": (_bins(0.0, top * image_size[1], num_bins), True),
        "TranslateY": (_bins(0.0, top * image_size[0], num_bins), True),
        "Rotate": (_bins(0.0, 30.0, num_bins), True),
        "Brightness": (_bins(0.0, 0.9, num_bins), True),
        "Color": (_bins(0.0, 0.9, num_bins), True),
        "Contrast": (_bins(0.0, 0.9, num_bins), True),
        "Sharpness": (_bins(0.0, 0.9, num_bins), True),
        "Posterize": (_posterize_bins(8, num_bins, 4), False),
        "Solarize": (_bins(255.0, 0.0, num_bins), False),
        "AutoContrast": (_zero(), False),
        "Equalize": (_zero(), False),
    }


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


_POLICIES = {  # torch: AutoAugment._get_policies, (name, probability, magnitude bin)
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
        (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
        (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
        (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
        (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
        (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
        (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


class AutoAugment(Module):
    """One of 25 learned two-op sub-policies per image (Cubuk et al., 2019)."""

    def __init__(
        self,
        policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
        interpolation: InterpolationMode = InterpolationMode.NEAREST,
        fill: list[float] | None = None,
    ) -> None:
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy: AutoAugmentPolicy) -> list[tuple]:
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return list(_POLICIES[policy])

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]) -> dict:
        space = _common_space(num_bins, image_size, 150.0 / 331.0)
        space["Invert"] = (_zero(), False)
        return space

    @staticmethod
    def get_params(transform_num: int) -> tuple[int, Tensor, Tensor]:
        policy_id = int(randint(transform_num, (1,)).item())
        probs = rand((2,))
        signs = randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, img)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if bool(probs[i] <= p):
                magnitudes, signed = op_meta[op_name]
                magnitude = (
                    float(magnitudes[magnitude_id].item())
                    if magnitude_id is not None
                    else 0.0
                )
                if signed and bool(signs[i] == 0):
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


def _draw_op(op_meta: dict) -> tuple[str, Tensor, bool]:
    op_index = int(randint(len(op_meta), (1,)).item())
    op_name = list(op_meta.keys())[op_index]
    return (op_name, *op_meta[op_name])


class RandAugment(Module):
    """``num_ops`` ops drawn uniformly, each at bin ``magnitude`` (Cubuk et al.,
    2020)."""

    def __init__(
        self,
        num_ops: int = 2,
        magnitude: int = 9,
        num_magnitude_bins: int = 31,
        interpolation: InterpolationMode = InterpolationMode.NEAREST,
        fill: list[float] | None = None,
    ) -> None:
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]) -> dict:
        return {
            "Identity": (_zero(), False),
            **_common_space(num_bins, image_size, 150.0 / 331.0),
        }

    def forward(self, img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, img)
        _, height, width = F.get_dimensions(img)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        for _ in range(self.num_ops):
            op_name, magnitudes, signed = _draw_op(op_meta)
            magnitude = (
                float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            )
            if signed and bool(randint(2, (1,))):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(num_ops={self.num_ops}, "
            f"magnitude={self.magnitude}, "
            f"num_magnitude_bins={self.num_magnitude_bins}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )


class TrivialAugmentWide(Module):
    """One op drawn uniformly, at a magnitude bin drawn uniformly (Müller and
    Hutter, 2021)."""

    def __init__(
        self,
        num_magnitude_bins: int = 31,
        interpolation: InterpolationMode = InterpolationMode.NEAREST,
        fill: list[float] | None = None,
    ) -> None:
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins: int) -> dict:
        return {
            "Identity": (_zero(), False),
            "ShearX": (_bins(0.0, 0.99, num_bins), True),
            "ShearY": (_bins(0.0, 0.99, num_bins), True),
            "TranslateX": (_bins(0.0, 32.0, num_bins), True),
            "TranslateY": (_bins(0.0, 32.0, num_bins), True),
            "Rotate": (_bins(0.0, 135.0, num_bins), True),
            "Brightness": (_bins(0.0, 0.99, num_bins), True),
            "Color": (_bins(0.0, 0.99, num_bins), True),
            "Contrast": (_bins(0.0, 0.99, num_bins), True),
            "Sharpness": (_bins(0.0, 0.99, num_bins), True),
            "Posterize": (_posterize_bins(8, num_bins, 6), False),
            "Solarize": (_bins(255.0, 0.0, num_bins), False),
            "AutoContrast": (_zero(), False),
            "Equalize": (_zero(), False),
        }

    def forward(self, img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, img)
        op_name, magnitudes, signed = _draw_op(
            self._augmentation_space(self.num_magnitude_bins)
        )
        magnitude = (
            float(magnitudes[randint(len(magnitudes), (1,))].item())
            if magnitudes.ndim > 0
            else 0.0
        )
        if signed and bool(randint(2, (1,))):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}("
            f"num_magnitude_bins={self.num_magnitude_bins}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )


class AugMix(Module):
    """A Dirichlet-weighted mix of ``mixture_width`` random op chains, blended with
    the image by a Beta weight (Hendrycks et al., 2020)."""

    def __init__(
        self,
        severity: int = 3,
        mixture_width: int = 3,
        chain_depth: int = -1,
        alpha: float = 1.0,
        all_ops: bool = True,
        interpolation: InterpolationMode = InterpolationMode.BILINEAR,
        fill: list[float] | None = None,
    ) -> None:
        super().__init__()
        self._PARAMETER_MAX = 10
        if not (1 <= severity <= self._PARAMETER_MAX):
            raise ValueError(
                f"The severity must be between [1, {self._PARAMETER_MAX}]. Got "
                f"{severity} instead."
            )
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]) -> dict:
        space = {
            "ShearX": (_bins(0.0, 0.3, num_bins), True),
            "ShearY": (_bins(0.0, 0.3, num_bins), True),
            "TranslateX": (_bins(0.0, image_size[1] / 3.0, num_bins), True),
            "TranslateY": (_bins(0.0, image_size[0] / 3.0, num_bins), True),
            "Rotate": (_bins(0.0, 30.0, num_bins), True),
            "Posterize": (_posterize_bins(4, num_bins, 4), False),
            "Solarize": (_bins(255.0, 0.0, num_bins), False),
            "AutoContrast": (_zero(), False),
            "Equalize": (_zero(), False),
        }
        if self.all_ops:
            space.update(
                {
                    "Brightness": (_bins(0.0, 0.9, num_bins), True),
                    "Color": (_bins(0.0, 0.9, num_bins), True),
                    "Contrast": (_bins(0.0, 0.9, num_bins), True),
                    "Sharpness": (_bins(0.0, 0.9, num_bins), True),
                }
            )
        return space

    def _pil_to_tensor(self, img: Any) -> Tensor:
        return F.pil_to_tensor(img)

    def _tensor_to_pil(self, img: Tensor) -> Any:
        return F.to_pil_image(img)

    def _sample_dirichlet(self, params: Tensor) -> Tensor:
        """torch: ``torch._sample_dirichlet(params)``, one draw per row, from
        compat's generator."""
        alpha = np.asarray(params.numpy(), np.float32)
        draw = jax.random.dirichlet(default_generator.next_key(), alpha)
        return as_tensor(np.asarray(draw, np.float32))

    def forward(self, orig_img: Any) -> Any:
        fill = F._fill_per_channel(self.fill, orig_img)
        _, height, width = F.get_dimensions(orig_img)
        if isinstance(orig_img, Tensor):
            img = orig_img
        else:
            img = self._pil_to_tensor(orig_img)
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        orig_dims = list(img.shape)
        batch = img.view([1] * max(4 - img.ndim, 0) + orig_dims)
        batch_dims = [batch.size(0)] + [1] * (batch.ndim - 1)
        # the weight of the image (Beta, as a two-way Dirichlet) and of each chain
        m = self._sample_dirichlet(
            tensor([self.alpha, self.alpha]).expand(batch_dims[0], -1)
        )
        combined_weights = self._sample_dirichlet(
            tensor([self.alpha] * self.mixture_width).expand(batch_dims[0], -1)
        ) * m[:, 1].view([batch_dims[0], -1])
        mix = m[:, 0].view(batch_dims) * batch
        for i in range(self.mixture_width):
            aug = batch
            depth = (
                self.chain_depth
                if self.chain_depth > 0
                else int(randint(low=1, high=4, size=(1,)).item())
            )
            for _ in range(depth):
                op_name, magnitudes, signed = _draw_op(op_meta)
                magnitude = (
                    float(magnitudes[randint(self.severity, (1,))].item())
                    if magnitudes.ndim > 0
                    else 0.0
                )
                if signed and bool(randint(2, (1,))):
                    magnitude *= -1.0
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            mix.add_(combined_weights[:, i].view(batch_dims) * aug)
        mix = mix.view(orig_dims).to(dtype=img.dtype)
        if not isinstance(orig_img, Tensor):
            return self._tensor_to_pil(mix)
        return mix

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(severity={self.severity}, "
            f"mixture_width={self.mixture_width}, chain_depth={self.chain_depth}, "
            f"alpha={self.alpha}, all_ops={self.all_ops}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )
