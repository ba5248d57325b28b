"""Blitz 4 (train the network): ``torch.optim.lr_scheduler.CyclicLR`` -- the
cyclical learning rate policy (Smith, "Cyclical Learning Rates for Training
Neural Networks"): per batch, ``lr`` climbs from ``base_lr`` to ``max_lr`` over
``step_size_up`` steps and back over ``step_size_down``, the momentum (SGD's
``momentum`` or Adam's ``betas[0]``) the other way.

    scheduler = CyclicLR(optimizer, base_lr=0.001, max_lr=0.1, step_size_up=200)
    for inputs, labels in loader:
        ...
        optimizer.step()
        scheduler.step()      # once per batch

torch's rules, float for float; exported by :mod:`jaxblitz.compat.optim.lr_scheduler`.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from jaxblitz.compat.optim._lr_base import LRScheduler, _set
from jaxblitz.compat.optim._lr_policies import _per_group, _uses_beta1
from jaxblitz.compat.optim.optimizer import Optimizer


class CyclicLR(LRScheduler):
    """``lr`` cycles between ``base_lr`` and ``max_lr`` (``mode`` "triangular",
    "triangular2" halving the height each cycle, "exp_range" scaling it by
    ``gamma**step``, or a ``scale_fn`` of the cycle or step)."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _uses_beta1(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(
                    self.max_momentums,
                    self.base_momentums,
                    optimizer.param_groups,
                    strict=True,
                ):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        # A mode's own scale_fn fixes the scale_mode too (torch's rule).
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The scaling policy: the user's ``scale_fn``, else the mode's."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> list[Any]:
        # last_epoch counts batches; the momentum is set here too (torch's side
        # effect of get_lr)
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            momentums = [
                high - (high - low) * scale_factor * self.scale_fn(at)
                for low, high in zip(
                    self.base_momentums, self.max_momentums, strict=True
                )
            ]
            for group, momentum in zip(
                self.optimizer.param_groups, momentums, strict=True
            ):
                self._set_momentum(group, momentum)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state without the mode's scale function; a ``scale_fn`` that is a
        callable object keeps its ``__dict__``, a function or lambda is dropped."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
