"""``torch.nn.modules.lazy``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.lazy_modules import (
    LazyModuleMixin,
)

__all__ = [
    "LazyModuleMixin",
]
