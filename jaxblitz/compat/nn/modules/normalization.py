"""``torch.nn.modules.normalization``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.local_response import (
    CrossMapLRN2d,
    LocalResponseNorm,
)
from jaxblitz.compat.nn.normalization import (
    GroupNorm,
    LayerNorm,
    RMSNorm,
)

__all__ = [
    "LocalResponseNorm",
    "CrossMapLRN2d",
    "LayerNorm",
    "GroupNorm",
    "RMSNorm",
]
