"""``torch.utils``: ``utils.data``; ``utils.tensorboard`` is imported by name, as in
torch (it needs the ``tensorboard`` package)."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.utils import checkpoint, data

__all__ = ["checkpoint", "data"]

# torch.utils's submodules compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.utils")
