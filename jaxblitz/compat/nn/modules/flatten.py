"""``torch.nn.modules.flatten``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.layers import (
    Flatten,
)
from jaxblitz.compat.nn.shaping import (
    Unflatten,
)

__all__ = [
    "Flatten",
    "Unflatten",
]
