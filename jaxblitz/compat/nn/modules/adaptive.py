"""``torch.nn.modules.adaptive``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat import _not_offered

__all__: list[str] = []

# torch.nn's names compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.nn.modules.adaptive",
    _not_offered.reasons("torch.nn", "AdaptiveLogSoftmaxWithLoss"),
)
