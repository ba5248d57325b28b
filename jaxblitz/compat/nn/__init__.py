"""Blitz 3, "Neural Networks": ``torch.nn``."""

from jaxblitz.compat.nn import functional, init
from jaxblitz.compat.nn.layers import (
    Conv2d,
    Dropout,
    Flatten,
    Linear,
    MaxPool2d,
    ReLU,
    Sequential,
    Softmax,
)
from jaxblitz.compat.nn.losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.nn.parallel import DataParallel

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "Conv2d",
    "CrossEntropyLoss",
    "DataParallel",
    "Dropout",
    "Flatten",
    "HuberLoss",
    "L1Loss",
    "Linear",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "SmoothL1Loss",
    "Softmax",
    "functional",
    "init",
]
