"""Blitz 3, "Neural Networks": ``torch.nn.functional``, one name per torch function.

Each function is defined beside its concept and gathered here: convolutions in
:mod:`.conv` and :mod:`.conv_transpose`, ``linear`` in :mod:`._linear`, pooling in
:mod:`.pooling` and :mod:`.max_pooling` (their argument checks in :mod:`._pool_args`),
activations in :mod:`.functional_activation`, losses in :mod:`.losses`, and so on.
Those modules never import this one: it is the facade, imported last. Each
function is one recorded op whose JAX function calls the core's layers
(:mod:`jaxblitz.models`, :mod:`jaxblitz.kernels`) where the Blitz's layers have one.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat import _autocast, _not_offered, ops
from jaxblitz.compat.nn._linear import (  # noqa: F401
    linear,
)
from jaxblitz.compat.nn.attention import (  # noqa: F401
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from jaxblitz.compat.nn.bilinear import (  # noqa: F401
    bilinear,
)
from jaxblitz.compat.nn.channel_shuffle import (  # noqa: F401
    channel_shuffle,
    native_channel_shuffle,
)
from jaxblitz.compat.nn.conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
)
from jaxblitz.compat.nn.conv_transpose import (  # noqa: F401
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from jaxblitz.compat.nn.ctc import (  # noqa: F401
    ctc_loss,
)
from jaxblitz.compat.nn.distance import (  # noqa: F401
    cosine_similarity,
    pairwise_distance,
    pdist,
)
from jaxblitz.compat.nn.dropout import (  # noqa: F401
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from jaxblitz.compat.nn.fold import (  # noqa: F401
    fold,
    unfold,
)
from jaxblitz.compat.nn.fractional_pooling import (  # noqa: F401
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from jaxblitz.compat.nn.functional_activation import (  # noqa: F401
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    silu,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from jaxblitz.compat.nn.grid import (  # noqa: F401
    affine_grid,
    grid_sample,
)
from jaxblitz.compat.nn.instancenorm import (  # noqa: F401
    instance_norm,
)
from jaxblitz.compat.nn.local_response import (  # noqa: F401
    local_response_norm,
)
from jaxblitz.compat.nn.losses import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from jaxblitz.compat.nn.losses_likelihood import (  # noqa: F401
    gaussian_nll_loss,
    kl_div,
    poisson_nll_loss,
)
from jaxblitz.compat.nn.losses_margin import (  # noqa: F401
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from jaxblitz.compat.nn.max_pooling import (  # noqa: F401
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from jaxblitz.compat.nn.normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    layer_norm,
    normalize,
    rms_norm,
)
from jaxblitz.compat.nn.padding import pad  # noqa: F401
from jaxblitz.compat.nn.pixel_shuffle import (  # noqa: F401
    pixel_shuffle,
    pixel_unshuffle,
)
from jaxblitz.compat.nn.pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
)
from jaxblitz.compat.nn.shaping import (  # noqa: F401
    one_hot,
)
from jaxblitz.compat.nn.sparse import (  # noqa: F401
    embedding,
    embedding_bag,
)
from jaxblitz.compat.nn.upsampling import (  # noqa: F401
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from jaxblitz.compat.ops import _out  # noqa: F401 -- ops._out below
from jaxblitz.compat.ops._arrange import _softmax
from jaxblitz.compat.tensor import Tensor

# -- torch.nn.functional -------------------------------------------------------------


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    if _autocast.on:
        return _autocast.run("softmax", softmax, input, dim, _stacklevel, dtype)
    # torch's signature: a third positional argument is _stacklevel, not dtype
    return _softmax("softmax", input, dim, dtype, log=False)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    if _autocast.on:
        return _autocast.run("log_softmax", log_softmax, input, dim, _stacklevel, dtype)
    # torch's signature: a third positional argument is _stacklevel, not dtype
    return _softmax("log_softmax", input, dim, dtype, log=True)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


sigmoid, tanh = ops.sigmoid, ops.tanh


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """torch's argument check of its own pooling functions, kept public."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


# torch names compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.nn.functional")

# torch's out= for the functions that take it (gelu, linear, avg_pool2d...)
ops._out.give_out(globals(), "nn.functional.")
