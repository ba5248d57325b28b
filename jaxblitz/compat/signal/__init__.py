"""``torch.signal``: the window functions of ``torch.signal.windows``."""

from jaxblitz.compat.signal import windows

__all__ = ["windows"]
