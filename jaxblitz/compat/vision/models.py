"""Blitz 2, "A Gentle Introduction to torch.autograd": ``torchvision.models.resnet18``.

The tutorial loads ``resnet18(weights=ResNet18_Weights.DEFAULT)``, runs
``model(torch.rand(1, 3, 64, 64))``, backpropagates, freezes the parameters and
swaps ``model.fc`` for a new ``nn.Linear(512, 10)``. Here ResNet is built from
compat ``nn`` modules exactly as torchvision builds it (the same modules, names,
``state_dict`` keys and shapes, and torchvision's initialisation), so weights move
between the two with ``load_state_dict``. Pretrained weights are read from
torchvision's cache, ``$TORCH_HOME/hub/checkpoints/resnet18-f37072fd.pth`` (as
``torch.hub.get_dir()``), with ``jaxblitz.compat.load``; nothing is downloaded.
"""

from __future__ import annotations

import enum
import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat import nn
from jaxblitz.compat.ops.shape_ops import flatten
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor.creation import default_generator, from_numpy
from jaxblitz.compat.vision.transforms import InterpolationMode
from jaxblitz.compat.vision.transforms import functional as F

__all__ = ["BasicBlock", "ResNet", "ResNet18_Weights", "resnet18"]


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding."""
    return nn.Conv2d(
        in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False
    )


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion: int = 1

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        groups: int = 1,
        base_width: int = 64,
        dilation: int = 1,
        norm_layer: Callable[..., nn.Module] | None = None,
    ) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """torchvision's ResNet for BasicBlock (``groups``, ``width_per_group`` and
    dilation, which only Bottleneck networks use, are refused)."""

    def __init__(
        self,
        block: type[BasicBlock],
        layers: list[int],
        num_classes: int = 1000,
        zero_init_residual: bool = False,
        groups: int = 1,
        width_per_group: int = 64,
        replace_stride_with_dilation: list[bool] | None = None,
        norm_layer: Callable[..., nn.Module] | None = None,
    ) -> None:
        super().__init__()
        if block is not BasicBlock:
            raise NotImplementedError(
                "jaxblitz.compat.vision.models builds ResNet with BasicBlock only "
                "(resnet18); Bottleneck is not supported"
            )
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError(
                "replace_stride_with_dilation should be None or a 3-element tuple, "
                f"got {replace_stride_with_dilation}"
            )
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(
            3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False
        )
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        dilate = replace_stride_with_dilation
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2, dilate[0])
        self.layer3 = self._make_layer(block, 256, layers[2], 2, dilate[1])
        self.layer4 = self._make_layer(block, 512, layers[3], 2, dilate[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        _kaiming_normal_fan_out_relu(
            [m for m in self.modules() if isinstance(m, nn.Conv2d)]
        )
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(
        self,
        block: type[BasicBlock],
        planes: int,
        blocks: int,
        stride: int = 1,
        dilate: bool = False,
    ) -> nn.Sequential:
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )
        layers = [
            block(
                self.inplanes, planes, stride, downsample, self.groups,
                self.base_width, previous_dilation, norm_layer,
            )
        ]  # fmt: skip
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(
                block(
                    self.inplanes, planes, groups=self.groups,
                    base_width=self.base_width, dilation=self.dilation,
                    norm_layer=norm_layer,
                )
            )  # fmt: skip
        return nn.Sequential(*layers)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))  # (B, 64, H/4, W/4)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))  # (B, 512, ., .)
        x = flatten(self.avgpool(x), 1)  # (B, 512)
        return self.fc(x)

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def _kaiming_normal_fan_out_relu(convs: list[nn.Conv2d]) -> None:
    """torch: ``nn.init.kaiming_normal_(m.weight, mode="fan_out",
    nonlinearity="relu")`` for each conv; here N(0, 2 / fan_out) from one draw of
    compat's generator for them all (one compiled draw, not one per shape)."""
    sizes = [m.weight.numel() for m in convs]
    key = default_generator.next_key()
    flat = np.asarray(jax.random.normal(key, (sum(sizes),), jnp.float32))
    start = 0
    for m, size in zip(convs, sizes, strict=True):
        shape = tuple(m.weight.shape)
        fan_out = shape[0] * math.prod(shape[2:])
        std = math.sqrt(2.0) / math.sqrt(fan_out)  # gain sqrt(2) for relu
        values = flat[start : start + size].reshape(shape) * np.float32(std)
        m.weight = nn.Parameter(from_numpy(values.astype(m.weight.dtype.np)))
        start += size


# -- pretrained weights ------------------------------------------------------------


class ImageClassification(nn.Module):
    """torchvision's preset for ImageNet classifiers: resize, crop, scale, normalize."""

    def __init__(
        self,
        *,
        crop_size: int,
        resize_size: int = 256,
        mean: tuple[float, ...] = (0.485, 0.456, 0.406),
        std: tuple[float, ...] = (0.229, 0.224, 0.225),
        interpolation: InterpolationMode = InterpolationMode.BILINEAR,
        antialias: bool | None = True,
    ) -> None:
        super().__init__()
        self.crop_size, self.resize_size = [crop_size], [resize_size]
        self.mean, self.std = list(mean), list(std)
        self.interpolation, self.antialias = interpolation, antialias

    def forward(self, img: Any) -> Tensor:
        img = F.resize(
            img, self.resize_size, self.interpolation, antialias=self.antialias
        )
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, _dtype.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self) -> str:
        lines = [
            f"crop_size={self.crop_size}",
            f"resize_size={self.resize_size}",
            f"mean={self.mean}",
            f"std={self.std}",
            f"interpolation={self.interpolation}",
        ]
        body = "".join(f"\n    {line}" for line in lines)
        return f"{self.__class__.__name__}({body}\n)"


@dataclass(frozen=True)
class Weights:
    """torchvision's ``Weights``: where the file is and how inputs are prepared.

    ``meta`` has no ``categories`` (ImageNet's 1000 class names are not bundled).
    """

    url: str
    transforms: Callable[..., Any]
    meta: dict[str, Any] = field(default_factory=dict)

    def get_state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        """torchvision's: ``torch.hub.load_state_dict_from_url(url, ...)``: the
        file cached under ``$TORCH_HOME/hub/checkpoints``, downloaded first when
        missing."""
        from jaxblitz.compat.hub import load_state_dict_from_url

        return load_state_dict_from_url(self.url, *args, **kwargs)


class ResNet18_Weights(enum.Enum):  # noqa: N801 -- torchvision's name
    IMAGENET1K_V1 = Weights(
        url="https://download.pytorch.org/models/resnet18-f37072fd.pth",
        transforms=functools.partial(ImageClassification, crop_size=224),
        meta={
            "min_size": (1, 1),
            "num_params": 11689512,
            "recipe": "https://github.com/pytorch/vision/tree/main/references/classification#resnet",
            "_metrics": {"ImageNet-1K": {"acc@1": 69.758, "acc@5": 89.078}},
        },
    )
    DEFAULT = IMAGENET1K_V1  # an alias, as torchvision's

    @classmethod
    def verify(cls, obj: Any) -> Any:
        if obj is not None:
            if isinstance(obj, str):
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(
                    "Invalid Weight class provided; expected "
                    f"{cls.__name__} but received {obj.__class__.__name__}."
                )
        return obj

    def get_state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        return self.value.get_state_dict(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self) -> str:
        return self.value.url

    @property
    def transforms(self) -> Callable[..., Any]:
        return self.value.transforms

    @property
    def meta(self) -> dict[str, Any]:
        return self.value.meta


def resnet18(
    *, weights: ResNet18_Weights | str | None = None, progress: bool = True, **kwargs
) -> ResNet:
    """ResNet-18 from "Deep Residual Learning for Image Recognition"."""
    if "pretrained" in kwargs:  # torchvision's legacy interface
        pretrained = kwargs.pop("pretrained")
        warnings.warn(
            "The parameter 'pretrained' is deprecated since 0.13 and may be removed "
            "in the future, please use 'weights' instead.",
            UserWarning,
            stacklevel=2,
        )
        if pretrained:
            weights = ResNet18_Weights.IMAGENET1K_V1
    weights = ResNet18_Weights.verify(weights)
    if weights is not None:
        if "num_classes" in kwargs and kwargs["num_classes"] != 1000:
            raise ValueError(
                "The parameter 'num_classes' expected value 1000 but got "
                f"{kwargs['num_classes']} instead."
            )
        kwargs["num_classes"] = 1000
    model = ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)
    if weights is not None:
        model.load_state_dict(
            weights.get_state_dict(progress=progress, check_hash=True)
        )
    return model


def _refused(name: str) -> Callable[..., Any]:
    """A torchvision builder compat does not offer: raises, naming it."""

    def builder(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"torchvision.models.{name} is not supported by jaxblitz.compat.vision "
            "(only resnet18 is offered); build the network from compat.nn modules "
            "and load its weights with load_state_dict"
        )

    builder.__name__ = builder.__qualname__ = name
    return builder


# torch: the VGG family (the saveloadrun tutorial loads vgg16's weights)
vgg11, vgg11_bn, vgg13, vgg13_bn = map(_refused, ("vgg11", "vgg11_bn", "vgg13",
                                                  "vgg13_bn"))  # fmt: skip
vgg16, vgg16_bn, vgg19, vgg19_bn = map(_refused, ("vgg16", "vgg16_bn", "vgg19",
                                                  "vgg19_bn"))  # fmt: skip
