"""Blitz 4 (train the network): ``CosineAnnealingWarmRestarts`` -- SGDR's cosine
from ``initial_lr`` down to ``eta_min`` over ``T_i`` epochs, restarting at the top
each time (``T_i`` times ``T_mult`` longer after each restart). ``step(epoch)``
takes a fraction of an epoch, as a per-batch call does
(``scheduler.step(epoch + i / iters)``). torch's rules, float for float.
"""

from __future__ import annotations

import math
from typing import Any

from jaxblitz.compat.optim._lr_base import LRScheduler, _set, _values
from jaxblitz.compat.optim.optimizer import Optimizer


class CosineAnnealingWarmRestarts(LRScheduler):
    """``torch.optim.lr_scheduler.CosineAnnealingWarmRestarts``."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,  # noqa: N803 -- torch's names
        T_mult: int = 1,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, float | int):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type "
                f"{type(eta_min)}"
            )
        self.T_0 = self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        cos = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [
            self.eta_min + (base - self.eta_min) * cos / 2 for base in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:
        # torch's own step: no order warning, no deprecation of step(epoch)
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                ratio = epoch / self.T_0 * (self.T_mult - 1) + 1
                n = int(math.log(ratio, self.T_mult))
                done = self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_cur = epoch - done
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set(group, "lr", lr)
        self._last_lr = _values(self.optimizer, "lr")
