"""Blitz 3, "Neural Networks" (pruning): the machinery under
``torch.nn.utils.prune`` -- ``BasePruningMethod`` and ``PruningContainer``.

Applying a method moves ``module.weight`` to the parameter ``weight_orig``,
keeps the mask in the buffer ``weight_mask``, sets ``module.weight`` to
``weight_orig * weight_mask`` as a plain attribute and registers the method as
a forward pre-hook that recomputes that product before each forward, exactly
as torch does (so ``state_dict`` keys and ``named_buffers`` agree). A second
method on the same tensor joins the first in a ``PruningContainer``, which
prunes only what the earlier masks left.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._info import contiguous_format
from jaxblitz.compat.tensor.creation import ones_like

__all__ = ["BasePruningMethod", "PruningContainer"]


class BasePruningMethod(ABC):
    """``torch.nn.utils.prune.BasePruningMethod``: subclasses give
    ``compute_mask(t, default_mask)`` and a ``PRUNING_TYPE``."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Any, inputs: Any) -> None:
        """The forward pre-hook: ``module.<name>`` from orig and mask again."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t``, starting from ``default_mask``."""

    def apply_mask(self, module: Any) -> Tensor:
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls,
        module: Any,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, joined
        with the method already pruning it, if any."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter "
                    f"{name} of {module}, got {importance_scores.shape} vs "
                    f"{orig.shape}"
                )
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            # the first pruning of this tensor: keep the original as a parameter
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = (
                getattr(module, name + "_mask")
                .detach()
                .clone(memory_format=contiguous_format)
            )
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(
        self,
        t: Tensor,
        default_mask: Tensor | None = None,
        importance_scores: Tensor | None = None,
    ) -> Tensor:
        """``t`` times its mask, without touching any module."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as tensor t, "
                    f"got {importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter holding
        the masked values; ``<name>_orig`` and ``<name>_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed"
            )
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(
    cls: type[BasePruningMethod], module: Any, name: str, *args: Any, **kwargs: Any
) -> BasePruningMethod:
    """A new ``cls`` method for ``name``, in a container with the method that
    already prunes it (whose hook is removed: the container's replaces it)."""
    old_method = None
    found = 0
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
            found += 1
    if found > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of "
            f"module {module}. Use a PruningContainer."
        )
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif old_method is not None:
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """``torch.nn.utils.prune.PruningContainer``: the methods that pruned one
    tensor, in order; the last computes the new mask on what is left."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found "
                f"'{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask over the entries (unstructured) or channels
        (structured) the earlier masks kept, zero elsewhere."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        slc = _unpruned(method, t, default_mask)
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


def _unpruned(method: BasePruningMethod, t: Tensor, mask: Tensor) -> Any:
    """The index of what ``mask`` leaves for ``method`` to prune."""
    if method.PRUNING_TYPE == "unstructured":
        return mask == 1
    if method.PRUNING_TYPE == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError(
                'Pruning methods of PRUNING_TYPE "structured" need to have the '
                "attribute `dim` defined."
            )
        n_dims = t.dim()
        dim = method.dim
        if dim < 0:
            dim = n_dims + dim
        if dim < 0:
            raise IndexError(
                f"Index is out of bounds for tensor with dimensions {n_dims}"
            )
        keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
        slc: list[Any] = [slice(None)] * n_dims
        slc[dim] = keep_channel
        return tuple(slc)
    if method.PRUNING_TYPE == "global":
        return tuple([slice(None)] * len(t.shape))
    raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
