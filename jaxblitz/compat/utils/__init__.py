"""``torch.utils``: only ``utils.data``."""

from jaxblitz.compat.utils import data

__all__ = ["data"]
