"""Blitz 3, "Neural Networks" (pruning): ``torch.nn.utils.prune`` -- the pruning
methods (random or by magnitude, per entry or per channel, global, from a given
mask) and ``remove``, ``is_pruned``.

    prune.l1_unstructured(net.fc1, name="weight", amount=0.4)
    net.fc1.weight_orig, net.fc1.weight_mask  # the parameter and the buffer
    prune.remove(net.fc1, "weight")           # weight is a parameter again

The machinery (``weight_orig``, ``weight_mask``, the forward pre-hook) is in
:mod:`._prune_base`. The random methods draw from compat's generator, so their
masks differ from PyTorch's for one seed; the magnitude methods agree.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

from jaxblitz.compat.nn.utils._prune_base import BasePruningMethod, PruningContainer
from jaxblitz.compat.nn.utils.convert_parameters import parameters_to_vector
from jaxblitz.compat.ops._order import kthvalue, topk
from jaxblitz.compat.ops._reduce import norm
from jaxblitz.compat.ops._unary import abs as abs_
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._info import contiguous_format
from jaxblitz.compat.tensor.creation import ones_like, rand, rand_like, zeros_like

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


class Identity(BasePruningMethod):
    """Prunes nothing: a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


def _unstructured_mask(
    t: Tensor, default_mask: Tensor, amount: float, pick: Any
) -> Tensor:
    """torch's unstructured step: ``default_mask`` with the entries ``pick(k)``
    chooses (a topk's indices) zeroed, ``k`` the count ``amount`` asks for."""
    tensor_size = t.nelement()
    nparams_toprune = _compute_nparams_toprune(amount, tensor_size)
    _validate_pruning_amount(nparams_toprune, tensor_size)
    mask = default_mask.clone(memory_format=contiguous_format)
    if nparams_toprune != 0:
        mask.view(-1)[pick(nparams_toprune).indices] = 0
    return mask


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(
            t, default_mask, self.amount, lambda k: topk(rand_like(t).view(-1), k=k)
        )

    @classmethod
    def apply(cls, module: Any, name: str, amount: float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of least magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(
            t,
            default_mask,
            self.amount,
            lambda k: topk(abs_(t).view(-1), k=k, largest=False),
        )

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Any,
        name: str,
        amount: float,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        return super().apply(
            module, name, amount=amount, importance_scores=importance_scores
        )


def _channel_mask(t: Tensor, dim: int, index: Any) -> Tensor:
    """Zeros like ``t``, ones in the channels ``index`` picks along ``dim``."""
    mask = zeros_like(t)
    slc: list[Any] = [slice(None)] * len(t.shape)
    slc[dim] = index
    mask[tuple(slc)] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = rand(tensor_size)
        threshold = kthvalue(prob, k=nparams_toprune).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Any, name: str, amount: float, dim: int = -1
    ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of least L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        kept = topk(_compute_norm(t, self.n, self.dim), k=nparams_tokeep)
        if nparams_toprune == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Any,
        name: str,
        amount: float,
        n: Any,
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        return super().apply(
            module,
            name,
            amount=amount,
            n=n,
            dim=dim,
            importance_scores=importance_scores,
        )


class CustomFromMask(BasePruningMethod):
    """Prunes where a given ``mask`` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Any, name: str) -> Any:
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: float) -> Any:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Any, name: str, amount: float, importance_scores: Tensor | None = None
) -> Any:
    L1Unstructured.apply(
        module, name, amount=amount, importance_scores=importance_scores
    )
    return module


def random_structured(module: Any, name: str, amount: float, dim: int) -> Any:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Any,
    name: str,
    amount: float,
    n: Any,
    dim: int,
    importance_scores: Tensor | None = None,
) -> Any:
    LnStructured.apply(
        module, name, amount, n, dim, importance_scores=importance_scores
    )
    return module


def global_unstructured(
    parameters: Iterable[tuple[Any, str]],
    pruning_method: type[BasePruningMethod],
    importance_scores: dict | None = None,
    **kwargs: Any,
) -> None:
    """Prune the ``(module, name)`` pairs together: ``pruning_method`` (an
    unstructured one) ranks all their entries as one vector."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    relevant_importance_scores = parameters_to_vector(
        [
            importance_scores.get((module, name), getattr(module, name))
            for (module, name) in parameters
        ]
    )
    default_mask = parameters_to_vector(
        [
            getattr(module, name + "_mask", ones_like(getattr(module, name)))
            for (module, name) in parameters
        ]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
            f"Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer : pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make ``module.<name>``'s pruning permanent and drop its hook."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning "
        "can be removed"
    )


def is_pruned(module: Any) -> bool:
    """Whether any submodule of ``module`` has a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral)
        and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _validate_pruning_amount(amount: int, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t: Tensor) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. "
            f"Found tensor of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount: float, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    """The L``n`` norm of each channel of ``t`` along ``dim``."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return norm(t, p=n, dim=dims)
