"""Blitz 3, "Neural Networks" (pruning): ``torch.nn.utils.prune`` -- refused by
name when a pruning is applied.

Pruning (a ``weight_orig`` parameter, a ``weight_mask`` buffer and a forward
pre-hook that multiplies them) is not implemented yet. The names import, and a
script's own ``BasePruningMethod`` subclass can be defined; applying any method,
``remove`` and ``is_pruned`` raise ``NotImplementedError``. A fixed mask can be
applied by hand: ``with torch.no_grad(): module.weight.mul_(mask)``, and again
after each optimizer step.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat._not_offered import NotOffered, refused

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]

_WHY = "pruning is not implemented; multiply the weight by a mask under no_grad"


class BasePruningMethod:
    """``torch.nn.utils.prune.BasePruningMethod``: applying one is refused."""

    PRUNING_TYPE: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        raise NotOffered(
            f"torch.nn.utils.prune ({cls.__name__}.apply) is not supported by "
            f"jaxblitz.compat: {_WHY}"
        )

    def __call__(self, module: Any, inputs: Any) -> Any:
        self.apply(module, "")

    def apply_mask(self, module: Any) -> Any:
        self.apply(module, "")

    def prune(self, t: Any, *args: Any, **kwargs: Any) -> Any:
        self.apply(None, "")

    def remove(self, module: Any) -> None:
        self.apply(module, "")


class PruningContainer(BasePruningMethod):
    """``torch.nn.utils.prune.PruningContainer``: refused when applied."""


class Identity(BasePruningMethod):
    PRUNING_TYPE = "unstructured"


class RandomUnstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"


class L1Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"


class RandomStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"


class LnStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"


custom_from_mask = refused("torch.nn.utils.prune.custom_from_mask", _WHY)
global_unstructured = refused("torch.nn.utils.prune.global_unstructured", _WHY)
identity = refused("torch.nn.utils.prune.identity", _WHY)
is_pruned = refused("torch.nn.utils.prune.is_pruned", _WHY)
l1_unstructured = refused("torch.nn.utils.prune.l1_unstructured", _WHY)
ln_structured = refused("torch.nn.utils.prune.ln_structured", _WHY)
random_structured = refused("torch.nn.utils.prune.random_structured", _WHY)
random_unstructured = refused("torch.nn.utils.prune.random_unstructured", _WHY)
remove = refused("torch.nn.utils.prune.remove", _WHY)
