"""Blitz 3, "Neural Networks": the hook-based ``torch.nn.utils.weight_norm`` and
``remove_weight_norm`` (deprecated in torch for
``torch.nn.utils.parametrizations.weight_norm``, which shares the formula here).

The weight is ``weight_v * (weight_g / ||weight_v||)``, the norm over every
dimension but ``dim`` (over all of them where ``dim`` is None or -1); ``weight_g``
and ``weight_v`` are the parameters, as in torch's state dict, and a forward
pre-hook recomputes ``weight`` before each call.
"""

from __future__ import annotations

import warnings
from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.lazy_modules import UninitializedParameter
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor

__all__ = ["WeightNorm", "norm_except_dim", "remove_weight_norm", "weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim``: the ``pow``-norm over every dimension but
    ``dim`` (kept, size 1), or over all of them (a scalar) where ``dim`` is -1."""
    if dim == -1:
        return v.norm(pow)
    dim %= v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:  # torch: each element's norm over a dimension of size 1
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return v.norm(pow, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``torch._weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))``."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``name_g`` and
    ``name_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        check_no_hook(module, WeightNorm, name, "weight_norm")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized "
                "parameters. Make sure to run the dummy forward before applying "
                "weight normalization"
            )
        del module._parameters[name]
        with no_grad():
            g = norm_except_dim(weight, 2, fn.dim).detach()
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``torch.nn.utils.weight_norm`` (deprecated in torch, with its warning)."""
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """``torch.nn.utils.remove_weight_norm``: ``name`` a plain parameter again."""
    return remove_hook(module, WeightNorm, name, "weight_norm")


def find_hook(module: Module, kind: type, name: str) -> Any:
    """The key of ``module``'s forward pre-hook of ``kind`` on ``name``, or None."""
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for k, hook in hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return k
    return None


def check_no_hook(module: Module, kind: type, name: str, what: str) -> None:
    """torch's refusal of a second ``what`` hook on the same parameter."""
    if find_hook(module, kind, name) is not None:
        raise RuntimeError(
            f"Cannot register two {what} hooks on the same parameter {name}"
        )


def remove_hook(module: Module, kind: type, name: str, what: str) -> Module:
    """Undo the ``what`` hook of ``kind`` on ``name`` (torch's words if none)."""
    k = find_hook(module, kind, name)
    if k is None:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    hooks = module.__dict__["_forward_pre_hooks"]
    hooks[k].remove(module)
    del hooks[k]
    return module
