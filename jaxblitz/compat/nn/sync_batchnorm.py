"""Blitz 5 (data parallelism): ``nn.SyncBatchNorm``. Its statistics are synced
across the processes of an initialised ``torch.distributed`` group; compat's is
never initialised (one process: jaxblitz.parallel shards a batch over devices),
so, as torch does then, it is batch norm over any input of two or more dims."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.nn.normalization import _BatchNorm
from jaxblitz.compat.tensor import Tensor


class SyncBatchNorm(_BatchNorm):
    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features,
            eps,
            momentum,
            affine,
            track_running_stats,
            device,
            dtype,
            bias=bias,
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError(
                "SyncBatchNorm number of input channels should be non-zero"
            )

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Any:
        """Each ``BatchNorm*d`` in ``module`` as a SyncBatchNorm sharing its
        parameters and running statistics (``module`` itself, converted, when it
        is one)."""
        output = module
        if isinstance(module, _BatchNorm):
            output = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                with no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
