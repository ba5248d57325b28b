"""``torch.nn.modules.fold``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.fold import (
    Fold,
    Unfold,
)

__all__ = [
    "Fold",
    "Unfold",
]
