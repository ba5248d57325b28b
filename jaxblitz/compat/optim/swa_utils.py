"""Blitz 4 (train the network): ``torch.optim.swa_utils`` -- stochastic weight
averaging and EMA of a model's weights -- is not implemented. Its names import,
as a script's imports must, and each refuses by name when used, so a script
stops at its first use with the reason, not at an unknown module.
"""

from __future__ import annotations

from jaxblitz.compat._not_offered import refused

_WHY = (
    "weight averaging (SWA, EMA) is not implemented; keep a copy of the "
    "state_dict and average it with torch.no_grad() lerp_ instead"
)

AveragedModel = refused("torch.optim.swa_utils.AveragedModel", _WHY)
SWALR = refused("torch.optim.swa_utils.SWALR", _WHY)
update_bn = refused("torch.optim.swa_utils.update_bn", _WHY)
get_ema_avg_fn = refused("torch.optim.swa_utils.get_ema_avg_fn", _WHY)
get_ema_multi_avg_fn = refused("torch.optim.swa_utils.get_ema_multi_avg_fn", _WHY)
get_swa_avg_fn = refused("torch.optim.swa_utils.get_swa_avg_fn", _WHY)
get_swa_multi_avg_fn = refused("torch.optim.swa_utils.get_swa_multi_avg_fn", _WHY)

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]
