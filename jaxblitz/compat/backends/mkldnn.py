"""``torch.backends.mkldnn``: compat has no oneDNN of torch's, so
``is_available()`` is False; its flags hold torch's defaults and can be set and
read back (``flags(enabled=False)``), steering nothing."""

import sys

from jaxblitz.compat import _not_offered
from jaxblitz.compat.backends._flags import switches

__all__ = ["flags", "is_available", "set_flags"]

enabled = True
deterministic = False


def is_available() -> bool:
    return False


def is_acl_available() -> bool:
    return False


_set, _flags = switches(sys.modules[__name__], ("enabled", "deterministic"))


def set_flags(
    _enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"
):
    return _set(_enabled, _deterministic)


def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    return _flags(enabled, deterministic)


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.backends.mkldnn",
    _not_offered.each("verbose VERBOSE_ON VERBOSE_OFF", "compat has no oneDNN"),
)
