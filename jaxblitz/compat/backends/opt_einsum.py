"""``torch.backends.opt_einsum``: compat's ``torch.einsum`` is ``jnp.einsum``,
which orders its contractions with the opt_einsum package (a dependency of
JAX's): available, enabled, strategy ``"auto"``. The switches are kept and read
back; JAX chooses its own order."""

import sys
from typing import Any

from jaxblitz.compat.backends._flags import switches

__all__ = ["flags", "get_opt_einsum", "is_available", "set_flags"]

enabled = True
strategy = "auto"


def is_available() -> bool:
    return True


def get_opt_einsum() -> Any:
    import opt_einsum

    return opt_einsum


_set, _flags = switches(sys.modules[__name__], ("enabled", "strategy"))


def set_flags(_enabled=None, _strategy=None):
    return _set(_enabled, _strategy)


def flags(enabled=None, strategy=None):
    return _flags(enabled, strategy)
