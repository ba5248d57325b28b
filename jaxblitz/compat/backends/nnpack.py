"""``torch.backends.nnpack``: compat has no NNPACK, so ``is_available()`` is
False; ``set_flags`` and ``flags`` set and restore a switch that steers
nothing, as torch's build without it does."""

import sys

from jaxblitz.compat.backends._flags import switches

__all__ = ["flags", "is_available", "set_flags"]

enabled = True


def is_available() -> bool:
    return False


_set, _flags = switches(sys.modules[__name__], ("enabled",))


def set_flags(_enabled):
    return _set(_enabled)


def flags(enabled=False):
    return _flags(enabled)
