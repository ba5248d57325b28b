"""``torch.utils.data.dataloader``: where torch defines ``DataLoader`` and its
collation (``from torch.utils.data.dataloader import default_collate``); they
are compat's :mod:`.data`'s."""

from jaxblitz.compat.utils.data import (
    DataLoader,
    default_collate,
    default_convert,
    get_worker_info,
)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
