"""Blitz 4 (train the network): the ``torch.optim.lr_scheduler`` schedulers that
multiply the learning rate by a factor of the epoch -- ``LambdaLR``,
``MultiplicativeLR``, ``StepLR``, ``MultiStepLR``, ``ConstantLR``, ``LinearLR``,
``ExponentialLR``, ``PolynomialLR`` and ``CosineAnnealingLR``.

torch's chainable rules (``get_lr``) and closed forms (``step(epoch)``), float for
float; exported by :mod:`jaxblitz.compat.optim.lr_scheduler`.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from jaxblitz.compat.optim._lr_base import LRScheduler
from jaxblitz.compat.optim.optimizer import Optimizer


class _LambdaState:
    """torch's ``state_dict`` for lambdas: a callable object's ``__dict__``, a
    plain function or lambda as ``None``."""

    def state_dict(self) -> dict[str, Any]:
        out = {
            k: v
            for k, v in self.__dict__.items()
            if k not in ("optimizer", "lr_lambdas")
        }
        out["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas  # torch leaves the argument as it was
        for fn, saved in zip(self.lr_lambdas, lr_lambdas, strict=False):
            if saved is not None:
                fn.__dict__.update(saved)

    def _lambdas(self, optimizer: Optimizer, lr_lambda: Any) -> list[Callable]:
        if not isinstance(lr_lambda, list | tuple):
            return [lr_lambda] * len(optimizer.param_groups)
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(
                f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                f"{len(lr_lambda)}"
            )
        return list(lr_lambda)


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``."""

    def __init__(
        self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = self._lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        return [
            base * fn(self.last_epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """``lr *= lr_lambda(epoch)`` at each step."""

    def __init__(
        self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = self._lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(
                    f"lr_lambda should be a function, but got {type(fn).__name__}"
                )
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self._is_initial:
            return self._lrs()
        return [
            g["lr"] * fn(self.last_epoch)
            for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)
        ]


class StepLR(LRScheduler):
    """``lr *= gamma`` every ``step_size`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        step_size: int,
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        k = self.last_epoch // self.step_size
        return [base * self.gamma**k for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``lr *= gamma`` at each milestone (twice at a milestone given twice)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return self._lrs()
        k = self.milestones[self.last_epoch]
        return [g["lr"] * self.gamma**k for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        k = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**k for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """``lr * factor`` for the first ``total_iters`` epochs, then ``lr``."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError(
                "Constant multiplicative factor expected to be between 0 and 1."
            )
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        done = self.last_epoch >= self.total_iters
        return [
            base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """``lr`` from ``start_factor * lr`` to ``end_factor * lr`` over
    ``total_iters`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(
                "Ending multiplicative factor expected to be between 0 and 1."
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * span
        )
        return [g["lr"] * ratio for g in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        span = self.end_factor - self.start_factor
        done = min(self.total_iters, self.last_epoch)
        return [
            base * (self.start_factor + span * done / self.total_iters)
            for base in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """``lr *= gamma`` every epoch."""

    def __init__(
        self, optimizer: Optimizer, gamma: float, last_epoch: int = -1
    ) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self._is_initial:
            return self._lrs()
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr`` decays to 0 over ``total_iters`` epochs as ``(1 - t/T) ** power``."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        t, total = self.last_epoch, self.total_iters
        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [g["lr"] * decay for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left**self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr`` along half a cosine from ``initial_lr`` to ``eta_min`` over ``T_max``
    epochs (and back up, if stepped on)."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,  # noqa: N803 -- torch's name
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        t, t_max, low = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._lrs()
        if self._step_count == 1 and t > 0:
            return [
                low + (base - low) * (1 + math.cos(t * math.pi / t_max)) / 2
                for base in self.base_lrs
            ]
        if (t - 1 - t_max) % (2 * t_max) == 0:
            return [
                g["lr"] + (base - low) * (1 - math.cos(math.pi / t_max)) / 2
                for base, g in zip(self.base_lrs, groups, strict=True)
            ]
        return [
            (1 + math.cos(math.pi * t / t_max))
            / (1 + math.cos(math.pi * (t - 1) / t_max))
            * (g["lr"] - low)
            + low
            for g in groups
        ]

    def _get_closed_form_lr(self) -> list[Any]:
        cos = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        return [
            self.eta_min + (base - self.eta_min) * cos / 2 for base in self.base_lrs
        ]
