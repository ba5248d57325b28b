"""Blitz 4 (train the network), weight averaging: ``torch.optim.swa_utils`` --
Stochastic Weight Averaging and exponential moving averages of a model's weights.

    swa_model = AveragedModel(net)                 # or multi_avg_fn=get_ema_...
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    ...
    swa_model.update_parameters(net)               # after an epoch
    swa_scheduler.step()
    update_bn(trainloader, swa_model)              # BatchNorm's statistics

Each average is torch's formula, on compat's tensors: on the CPU torch averages
one tensor at a time (``get_swa_avg_fn``), as here on every device.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.nn.normalization import _BatchNorm
from jaxblitz.compat.optim._lr_base import LRScheduler
from jaxblitz.compat.optim._lr_policies import _per_group
from jaxblitz.compat.optim.optimizer import Optimizer
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import long
from jaxblitz.compat.tensor.creation import tensor as _tensor

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

# Tensors; their in-place methods (lerp_...) are declared beside each op.
ParamList = list[Any] | tuple[Any, ...]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in "
            "[0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """EMA in place over lists: ``ema = lerp(ema, model, 1 - decay)``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_list: ParamList, current_list: ParamList, _: Any) -> None:
        if ema_list[0].is_floating_point():  # torch: _foreach_lerp_
            for p_ema, p_model in zip(ema_list, current_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_list, current_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """The equal-weight running average in place over lists."""

    @no_grad()
    def swa_update(
        averaged_list: ParamList, current_list: ParamList, num_averaged: Any
    ) -> None:
        if averaged_list[0].is_floating_point():  # torch: _foreach_lerp_
            weight = 1 / (num_averaged + 1)
            for p_avg, p_model in zip(averaged_list, current_list, strict=True):
                p_avg.lerp_(p_model, weight)
            return
        for p_avg, p_model in zip(averaged_list, current_list, strict=True):
            diff = p_model - p_avg
            if isinstance(num_averaged, Tensor):
                p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[..., Tensor]:
    """EMA of one tensor: ``decay * ema + (1 - decay) * model``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[..., Tensor]:
    """The equal-weight running average of one tensor."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """``torch.optim.swa_utils.AveragedModel``: a copy of ``model`` whose
    parameters (and buffers, with ``use_buffers``) are a running average of the
    model's, updated by :meth:`update_parameters`; ``n_averaged`` counts them."""

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
        multi_avg_fn: Callable[[ParamList, ParamList, Any], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError(
                "Only one of avg_fn and multi_avg_fn should be provided"
            )
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _pairs(self, model: Module) -> tuple[Iterable[Tensor], Iterable[Tensor]]:
        if self.use_buffers:
            return (
                itertools.chain(self.module.parameters(), self.module.buffers()),
                itertools.chain(model.parameters(), model.buffers()),
            )
        return self.parameters(), model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current weights in; the first call copies them."""
        mine, theirs = self._pairs(model)
        averaged, current = [], []
        copy = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(mine, theirs, strict=False):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            self._average(averaged, current)
        if not self.use_buffers:
            # Buffers not averaged follow the model's.
            for b_swa, b_model in zip(
                self.module.buffers(), model.buffers(), strict=True
            ):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, averaged: list[Tensor], current: list[Tensor]) -> None:
        if self.avg_fn is not None:
            for p_averaged, p_model in zip(averaged, current, strict=True):
                n = self.n_averaged.to(p_averaged.device)
                p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n))
            return
        # torch groups the tensors by device and dtype, keeping their order.
        groups: dict[tuple, tuple[list[Tensor], list[Tensor]]] = {}
        for p_averaged, p_model in zip(averaged, current, strict=True):
            key = (p_averaged.device, p_averaged.dtype)
            mine, theirs = groups.setdefault(key, ([], []))
            mine.append(p_averaged)
            theirs.append(p_model)
        for (device, _), (mine, theirs) in groups.items():
            n = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, n)
                continue
            avg_fn = get_swa_avg_fn()
            for p_averaged, p_model in zip(mine, theirs, strict=True):
                p_averaged.copy_(avg_fn(p_averaged, p_model, n))


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """``torch.optim.swa_utils.update_bn``: BatchNorm's running statistics
    recomputed as the plain average over one pass of ``loader`` (each batch a
    tensor, or a list/tuple whose first element is the input)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, list | tuple):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module, momentum in momenta.items():
        bn_module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """``torch.optim.swa_utils.SWALR``: anneals each group's learning rate to its
    ``swa_lr`` over ``anneal_epochs`` steps ("cos" or "linear"), then holds it."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _per_group("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', "
                f"instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(
                f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}"
            )
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
