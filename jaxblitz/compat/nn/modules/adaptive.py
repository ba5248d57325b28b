"""``torch.nn.modules.adaptive``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.adaptive_softmax import (
    AdaptiveLogSoftmaxWithLoss,
    _ASMoutput,
)

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
