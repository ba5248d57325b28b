"""Blitz 5, "Data parallelism": ``nn.DataParallel``.

torch scatters the batch over GPUs, replicates the module and gathers the outputs.
Here the input is placed sharded along dim 0 over ``jax.devices()`` and every op
runs SPMD where its data lives (computation follows data); the parameters are
uncommitted, so JAX replicates them. The result equals the unwrapped module's.
With one device, or a batch not divisible by the device count, it simply calls
the module.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor


class DataParallel(Module):
    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
    ):
        super().__init__()
        self.module = module
        devices = jax.devices()
        if device_ids is not None:
            devices = [devices[int(str(i).rpartition(":")[2] or 0)] for i in device_ids]
        self.devices = devices
        self.dim = dim
        self._mesh = Mesh(np.array(devices), ("batch",))

    def _scatter(self, x: Any) -> Any:
        if not isinstance(x, Tensor) or x.dim() == 0:
            return x
        n = len(self.devices)
        if n == 1 or x.shape[self.dim] % n:
            return x
        spec = [None] * x.dim()
        spec[self.dim] = "batch"
        sharding = NamedSharding(self._mesh, PartitionSpec(*spec))
        return Tensor._wrap(
            jax.device_put(x._data, sharding), x.requires_grad, x._grad_fn
        )

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*[self._scatter(x) for x in inputs], **kwargs)
