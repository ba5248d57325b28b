"""Blitz 4 (train the network): ``torch.optim.lr_scheduler`` -- the learning rate
per epoch (or per step), written into ``optimizer.param_groups[i]["lr"]``.

    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, epochs + 1):
        train(...)            # optimizer.step() per batch
        scheduler.step()      # once per epoch

The schedulers only touch param groups (plain Python numbers), so they are torch's
rules, float for float: the same chainable formulas (``get_lr``), the same closed
forms for ``step(epoch)``, the same ``state_dict()`` keys (the instance's
``__dict__`` without the optimizer) and the same warnings. compat's optimizers read
``lr`` (and SGD's ``momentum``, Adam's ``betas``) from the group at every
``step()``, so a new value takes effect at once. ``ReduceLROnPlateau`` and
``OneCycleLR`` and the composites are in
:mod:`jaxblitz.compat.optim._lr_policies`, ``CyclicLR`` in
:mod:`jaxblitz.compat.optim._lr_cyclic`, SGDR's warm restarts in
:mod:`jaxblitz.compat.optim._lr_restarts`, the per-epoch factors in
:mod:`jaxblitz.compat.optim._lr_factors`, the ``LRScheduler`` they subclass in
:mod:`jaxblitz.compat.optim._lr_base`.
"""

from __future__ import annotations

from jaxblitz.compat.optim._lr_base import (  # noqa: F401 (torch's)
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
)
from jaxblitz.compat.optim._lr_cyclic import CyclicLR
from jaxblitz.compat.optim._lr_factors import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from jaxblitz.compat.optim._lr_policies import (
    ChainedScheduler,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
)
from jaxblitz.compat.optim._lr_restarts import CosineAnnealingWarmRestarts

_LRScheduler = LRScheduler  # torch's old name


__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
