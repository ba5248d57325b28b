"""Blitz 4, "Training a classifier": ``torch.nn.utils`` -- gradient clipping,
parameters as one vector, BatchNorm fusion, ``skip_init``."""

from jaxblitz.compat.nn.utils import (
    parametrizations,
    parametrize,
    prune,
    rnn,
    stateless,
)
from jaxblitz.compat.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from jaxblitz.compat.nn.utils.convert_parameters import (
    parameters_to_vector,
    vector_to_parameters,
)
from jaxblitz.compat.nn.utils.deprecated import clip_grad_norm
from jaxblitz.compat.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from jaxblitz.compat.nn.utils.init import skip_init
from jaxblitz.compat.nn.utils.memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from jaxblitz.compat.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from jaxblitz.compat.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "prune",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "skip_init",
    "spectral_norm",
    "stateless",
    "vector_to_parameters",
    "weight_norm",
]
