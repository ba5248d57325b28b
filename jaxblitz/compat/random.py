"""Blitz 1 (tensors, random numbers): ``torch.random`` -- the default generator's
seed and state, and ``fork_rng``.

    with torch.random.fork_rng():
        noise = torch.randn(3)      # draws here do not move the outer sequence

compat has one generator for every device (``torch.cuda.manual_seed`` seeds it
too), so forking it forks every device's: ``devices`` is checked, not needed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from jaxblitz.compat import _not_offered
from jaxblitz.compat.tensor._dtype import device
from jaxblitz.compat.tensor.creation import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


def _check_devices(device_type: str, devices: Iterable[Any] | None) -> None:
    """torch reads each named device's generator: a device that is not there
    raises its module's error (``Torch not compiled with CUDA enabled``...)."""
    # Deferred: these device modules sit beside this one under the facade.
    from jaxblitz.compat import cuda, mps, xpu

    modules = {"cuda": cuda, "mps": mps, "xpu": xpu}
    if device_type not in modules:
        return
    for index in devices or ():
        if device_type == "cuda":
            cuda.current_device() if index is None else cuda.get_device_name(index)
        else:
            modules[device_type].get_rng_state(index)


@contextlib.contextmanager
def fork_rng(
    devices: Iterable[Any] | None = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """``torch.random.fork_rng``: on leaving, the default generator is back in
    the state it had on entering (its draws inside repeat nothing outside)."""
    if device_type == "meta":
        yield
        return
    if device_type is not None:
        device(device_type)  # torch's error for a name that is no device type
    if not enabled:
        yield
        return
    devices = None if devices is None else list(devices)
    _check_devices(device_type or "cuda", devices)
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.random",
    {"thread_safe_generator": _not_offered.BUILD},
)
