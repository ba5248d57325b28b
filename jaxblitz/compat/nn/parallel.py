"""Blitz 5, "Data parallelism": ``nn.DataParallel``.

torch scatters the batch over GPUs, replicates the module and gathers the outputs.
Here the input is placed sharded along dim 0 over ``jax.devices()`` and every op
runs SPMD where its data lives (computation follows data); the parameters are
uncommitted, so JAX replicates them. The result equals the unwrapped module's.
A batch that does not split evenly (30 rows over 8 devices) is padded with zero
rows to equal shards (``jaxblitz.parallel.padded_size``) and the padding is cut
from the output, so outputs and gradients are the unpadded batch's. With one
device it simply calls the module. ``DistributedDataParallel`` needs a process
group, which compat never starts: constructing one raises PyTorch's error.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxblitz.compat.distributed import NOT_INITIALIZED
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.parallel import padded_size


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

    def _scatter(self, x: Any, rows: int) -> Any:
        if not isinstance(x, Tensor) or x.dim() == 0 or x.shape[self.dim] != rows:
            return x
        n = len(self.devices)
        pad = padded_size(rows, n) - rows
        if pad:  # equal shards: zero rows, cut from the output again in forward
            shape = list(x.shape)
            shape[self.dim] = pad
            with _dtype.x64(True):  # an int64 batch stays int64
                zeros = Tensor._wrap(jax.numpy.zeros(shape, x._data.dtype))
            x = cat([x, zeros], dim=self.dim)
        spec = [None] * x.dim()
        spec[self.dim] = "batch"
        sharding = NamedSharding(self._mesh, PartitionSpec(*spec))
        with _dtype.x64(True):
            placed = jax.device_put(x._data, sharding)
        return Tensor._wrap(placed, x.requires_grad, x._grad_fn)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        first = next((x for x in inputs if isinstance(x, Tensor) and x.dim()), None)
        if len(self.devices) == 1 or first is None:
            return self.module(*inputs, **kwargs)
        rows = first.shape[self.dim]
        out = self.module(*[self._scatter(x, rows) for x in inputs], **kwargs)
        if isinstance(out, Tensor) and out.dim() and out.shape[self.dim] != rows:
            out = out[(slice(None),) * self.dim + (slice(0, rows),)]
        return out


class DistributedDataParallel(Module):
    """``torch.nn.parallel.DistributedDataParallel``: needs a process group, which
    compat never has (:mod:`jaxblitz.compat.distributed`), so constructing one
    raises PyTorch's error for that. ``isinstance(model, DistributedDataParallel)``
    checks still work. One process drives every device: use ``DataParallel``."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise ValueError(
            f"{NOT_INITIALIZED} (jaxblitz.compat: DistributedDataParallel needs a "
            "process group, and compat runs in one process; nn.DataParallel shards "
            "the batch over jax.devices())"
        )
