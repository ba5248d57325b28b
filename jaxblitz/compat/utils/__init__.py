"""``torch.utils``: ``utils.data``; ``utils.tensorboard`` is imported by name, as in
torch (it needs the ``tensorboard`` package)."""

from jaxblitz.compat.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
