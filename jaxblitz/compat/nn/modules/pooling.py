"""``torch.nn.modules.pooling``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.nn.fractional_pooling import (
    FractionalMaxPool2d,
    FractionalMaxPool3d,
)
from jaxblitz.compat.nn.layers import (
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    _MaxPoolNd,
)
from jaxblitz.compat.nn.max_pooling import (
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    _LPPoolNd,
    _MaxUnpoolNd,
)
from jaxblitz.compat.nn.modules.utils import (
    _pair,
    _single,
    _triple,
)
from jaxblitz.compat.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolNd,
)

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
]

# torch.nn's names compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.nn.modules.pooling")
