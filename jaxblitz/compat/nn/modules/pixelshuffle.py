"""``torch.nn.modules.pixelshuffle``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.pixel_shuffle import (
    PixelShuffle,
    PixelUnshuffle,
)

__all__ = [
    "PixelShuffle",
    "PixelUnshuffle",
]
