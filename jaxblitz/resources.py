"""Blitz 4, "Training a classifier": what the machine can hold.

Before :func:`jaxblitz.train.fit` puts a split on the device it asks here whether
the run fits: :func:`memory_estimate` (the bytes a run needs on one device, from
below), :func:`device_memory` (the bytes the device has: RAM within any cgroup
limit on a CPU) and :func:`check_memory`, which refuses up front what cannot fit.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import jax

from jaxblitz import kernels

if TYPE_CHECKING:
    from jaxblitz.train import Config


def memory_estimate(
    config: Config,
    in_channels: int,
    num_examples: int,
    num_classes: int = 10,
    devices: int = 1,
) -> int:
    """Bytes a training run needs on one device, roughly and from below.

    Parameters with their gradients, updates and optimizer slots; the split on the
    device; one gradient chunk's patches and activations, kept for the backward.
    """
    c, (w1, w2) = in_channels, config.widths
    params = (
        (c * 25 + 1) * w1 + (w1 * 25 + 1) * w2 + (w2 * 25 + 1) * 120 + 121 * 84
    ) + 85 * num_classes
    slots = {"adam": 2, "rmsprop": 1}.get(config.optimizer, int(config.momentum > 0))
    rows = -(-min(config.batch_size, num_examples) // devices)  # per device
    rows = kernels.grad_chunk(rows) or rows
    per_image = c * 25 * 784 + 2 * w1 * 784 + w1 * 25 * 100 + 2 * w2 * 100
    values = (
        params * (4 + slots) + 2 * rows * per_image + num_examples * c * 1024 // devices
    )
    return 4 * values  # float32


def check_memory(
    config: Config,
    in_channels: int,
    num_examples: int,
    num_classes: int = 10,
    devices: int = 1,
) -> None:
    """Refuse up front a run that cannot fit in the device's memory."""
    need = memory_estimate(config, in_channels, num_examples, num_classes, devices)
    have = device_memory()
    if have is not None and need > have:
        raise ValueError(
            f"This run needs at least {need / 2**30:,.1f} GiB on one device "
            f"(widths {config.widths}, batch {config.batch_size}, {in_channels} "
            f"channel(s)), more than the {have / 2**30:,.1f} GiB it has. Lower "
            "--batch-size or --widths."
        )


def device_memory() -> int | None:
    """Bytes of memory on JAX's first device (RAM, within any cgroup limit, on a
    CPU); None where it cannot be told."""
    device = jax.devices()[0]
    if device.platform != "cpu":
        return (device.memory_stats() or {}).get("bytes_limit")
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    with contextlib.suppress(OSError, ValueError):
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            total = min(total, int(limit))
    return total
