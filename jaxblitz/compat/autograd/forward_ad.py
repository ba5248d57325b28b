"""Blitz 2, "autograd" (forward mode): ``torch.autograd.forward_ad`` --
``dual_level``, ``make_dual``, ``unpack_dual`` -- refused by name.

compat's autograd is reverse mode only (a tape walked by ``backward()``); dual
tensors would need a tangent carried through every op. Forward mode is offered
functionally, as JAX has it: ``torch.func.jvp`` (and ``jacfwd``, ``linearize``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jaxblitz.compat._not_offered import NotOffered, refused

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

_INSTEAD = (
    "compat's autograd has no dual tensors; use torch.func.jvp(func, primals, "
    "tangents) (with torch.func.functional_call for a module's parameters)"
)


class UnpackedDualTensor(NamedTuple):
    """``torch.autograd.forward_ad.UnpackedDualTensor``: (primal, tangent)."""

    primal: Any
    tangent: Any


class dual_level:  # noqa: N801 -- torch's name
    """``torch.autograd.forward_ad.dual_level``: refused when entered."""

    def __enter__(self) -> Any:
        raise NotOffered(
            "torch.autograd.forward_ad.dual_level is not supported by "
            f"jaxblitz.compat: {_INSTEAD}"
        )

    def __exit__(self, *exc: object) -> None:
        return None


enter_dual_level = refused("torch.autograd.forward_ad.enter_dual_level", _INSTEAD)
exit_dual_level = refused("torch.autograd.forward_ad.exit_dual_level", _INSTEAD)
make_dual = refused("torch.autograd.forward_ad.make_dual", _INSTEAD)
unpack_dual = refused("torch.autograd.forward_ad.unpack_dual", _INSTEAD)
