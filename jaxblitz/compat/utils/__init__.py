"""``torch.utils``: ``utils.data``, ``utils.checkpoint`` and ``utils.hooks``;
``utils.tensorboard``, ``utils.benchmark`` and ``utils.model_zoo`` are imported by
name, as in torch (tensorboard needs the ``tensorboard`` package)."""

import sys

from jaxblitz.compat import _not_offered
from jaxblitz.compat.utils import (
    _data_dataloader,
    _data_dataset,
    checkpoint,
    data,
    hooks,
)

# torch.utils.data.dataloader and .dataset, modules of compat's data's names
# (they import it, so it cannot import them)
data.dataloader, data.dataset = _data_dataloader, _data_dataset  # type: ignore[attr-defined]
sys.modules[data.__name__ + ".dataloader"] = _data_dataloader
sys.modules[data.__name__ + ".dataset"] = _data_dataset

__all__ = ["checkpoint", "data", "hooks"]

# torch.utils's submodules compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.utils")
