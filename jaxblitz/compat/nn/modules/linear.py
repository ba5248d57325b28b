"""``torch.nn.modules.linear``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.bilinear import (
    Bilinear,
)
from jaxblitz.compat.nn.layers import (
    Identity,
    Linear,
)
from jaxblitz.compat.nn.lazy_modules import (
    LazyLinear,
)

__all__ = [
    "Bilinear",
    "Identity",
    "LazyLinear",
    "Linear",
]
