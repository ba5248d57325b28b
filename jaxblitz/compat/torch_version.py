"""Blitz 1 (what is PyTorch?): ``torch.torch_version`` -- :class:`TorchVersion`,
the ``str`` that ``torch.__version__`` is, comparing as a version.

    if torch.__version__ >= "2.0": ...          # a version comparison, not a str one
    if torch.__version__ >= (2, 0): ...         # tuples compare as versions too

torch's own class, rule for rule: a ``str`` (so ``.split("+")`` and printing work)
whose ``<``, ``<=``, ``==``, ``>=`` and ``>`` parse both sides with
``packaging.version.Version`` (a tuple or list is joined with dots), falling back to
``str``'s comparison when a side is no version (``"parrot"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from packaging.version import InvalidVersion, Version

from jaxblitz.compat.version import __version__ as internal_version

__all__ = ["TorchVersion"]


class TorchVersion(str):
    """``torch.torch_version.TorchVersion``: a version string that compares as a
    version against strings, tuples and ``packaging`` versions."""

    __slots__ = ()

    def _convert_to_version(self, inp: Any) -> Version:
        if isinstance(inp, Version):
            return inp
        if isinstance(inp, str):
            return Version(inp)
        if isinstance(inp, Iterable):  # (2, 1) -> Version("2.1")
            return Version(".".join(str(item) for item in inp))
        raise InvalidVersion(inp)

    def _cmp_wrapper(self, cmp: Any, method: str) -> bool:
        try:
            return getattr(Version(self), method)(self._convert_to_version(cmp))
        except InvalidVersion:
            # torch: not a version on one side ("parrot"): str's comparison
            return getattr(super(), method)(cmp)


# Set after the class, as torch does: defining __eq__ in the body would drop str's
# __hash__, and torch's versions hash as their strings.
for _method in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):
    setattr(
        TorchVersion,
        _method,
        lambda x, y, method=_method: x._cmp_wrapper(y, method),
    )

__version__ = TorchVersion(internal_version)
