"""Blitz 3, "Neural Networks": ``torch.nn``."""

from jaxblitz.compat.nn import functional, init, utils
from jaxblitz.compat.nn.activation import (
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSoftmax,
    ReLU6,
    Sigmoid,
    SiLU,
    Softplus,
    Tanh,
)
from jaxblitz.compat.nn.container import ModuleDict, ModuleList, Sequential
from jaxblitz.compat.nn.conv_transpose import ConvTranspose2d
from jaxblitz.compat.nn.layers import (
    Conv2d,
    Dropout,
    Dropout2d,
    Flatten,
    Identity,
    Linear,
    MaxPool2d,
    ReLU,
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
from jaxblitz.compat.nn.normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from jaxblitz.compat.nn.parallel import DataParallel
from jaxblitz.compat.nn.pixel_shuffle import PixelShuffle, PixelUnshuffle
from jaxblitz.compat.nn.pooling import AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool2d
from jaxblitz.compat.nn.rnn import GRU, LSTM, RNN, RNNBase
from jaxblitz.compat.nn.rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase
from jaxblitz.compat.nn.shaping import Unflatten
from jaxblitz.compat.nn.sparse import Embedding, EmbeddingBag

__all__ = [
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv2d",
    "ConvTranspose2d",
    "CrossEntropyLoss",
    "DataParallel",
    "Dropout",
    "Dropout2d",
    "ELU",
    "Embedding",
    "EmbeddingBag",
    "Flatten",
    "GELU",
    "GRU",
    "GRUCell",
    "Hardtanh",
    "HuberLoss",
    "Identity",
    "L1Loss",
    "LSTM",
    "LSTMCell",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "PixelShuffle",
    "PixelUnshuffle",
    "RNN",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
    "ReLU",
    "ReLU6",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Softplus",
    "Tanh",
    "Unflatten",
    "functional",
    "init",
    "utils",
]
