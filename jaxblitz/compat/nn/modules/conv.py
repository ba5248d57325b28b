"""``torch.nn.modules.conv``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.conv_transpose import (
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    _ConvTransposeNd,
)
from jaxblitz.compat.nn.layers import (
    Conv1d,
    Conv2d,
    Conv3d,
    _ConvNd,
)
from jaxblitz.compat.nn.lazy_modules import (
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    _LazyConvXdMixin,
)
from jaxblitz.compat.nn.modules.utils import (
    _pair,
    _reverse_repeat_tuple,
    _single,
    _triple,
)

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]
