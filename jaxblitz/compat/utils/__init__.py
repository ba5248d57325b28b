"""``torch.utils``: ``utils.data``, ``utils.checkpoint`` and ``utils.hooks``;
``utils.tensorboard``, ``utils.benchmark`` and ``utils.model_zoo`` are imported by
name, as in torch (tensorboard needs the ``tensorboard`` package)."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.utils import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]

# torch.utils's submodules compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.utils")
