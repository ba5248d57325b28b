"""``torch.nn.modules.channelshuffle``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.channel_shuffle import (
    ChannelShuffle,
)

__all__ = [
    "ChannelShuffle",
]
