"""``torch.cpu.synchronize()``, ``torch.cuda.synchronize()`` and
``torch.accelerator.synchronize()``: compat's pending work run (lazy mode), then
waited for, as torch's return once the device's queue is empty."""

from __future__ import annotations

import jax

from jaxblitz.compat import lazy


def synchronize(platform: str | None = None) -> None:
    """Run the pending work and wait for every array on ``platform`` (None: JAX's
    default backend) to be computed. JAX dispatches asynchronously and has no
    queue-wide barrier (``jax.effects_barrier`` waits for effects only), so the
    live arrays are waited for: a timer read after this reads the work's time,
    and an error a computation raised surfaces here, as an asynchronous CUDA
    error does at torch's synchronize."""
    lazy.sync()
    jax.block_until_ready(jax.live_arrays(platform))
    jax.effects_barrier()
