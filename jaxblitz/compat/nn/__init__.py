"""Blitz 3, "Neural Networks": ``torch.nn``."""

from jaxblitz.compat.nn import functional
from jaxblitz.compat.nn.layers import (
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Linear,
    MaxPool2d,
    MSELoss,
    ReLU,
    Sequential,
    Softmax,
)
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.nn.parallel import DataParallel

__all__ = [
    "Conv2d",
    "CrossEntropyLoss",
    "DataParallel",
    "Dropout",
    "Flatten",
    "Linear",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "Parameter",
    "ReLU",
    "Sequential",
    "Softmax",
    "functional",
]
