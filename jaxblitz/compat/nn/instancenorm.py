"""Blitz 3, "Neural Networks": instance normalisation (``torch.nn.InstanceNorm1d``,
``InstanceNorm2d``, ``InstanceNorm3d``) and ``nn.functional.instance_norm``.

As in torch, an instance norm is a batch norm of the input viewed as one sample
of ``N * C`` channels, with the parameters and running statistics repeated per
sample; the updated running statistics are averaged back over the samples.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.normalization import _NormBase, aten_batch_norm
from jaxblitz.compat.tensor import Tensor


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    size = tuple(input.shape)
    if use_input_stats and math.prod(size[2:]) == 1:  # torch's _verify_spatial_size
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"torch.Size({list(size)})"
        )
    return aten_instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps
    )


def aten_instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
) -> Tensor:
    """ATen's ``instance_norm`` (``torch.instance_norm``): ``F.instance_norm``
    without its Python check of the spatial size."""
    size = tuple(input.shape)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when "
            "use_input_stats is false"
        )
    b, c = size[0], size[1]

    def repeated(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(b)

    stats = [repeated(t) for t in (running_mean, running_var)]
    # torch takes running statistics of any float dtype here: they go in as the
    # parameters' dtype (the weight's, else the input's) and come back in their own
    like = (weight if weight is not None else input).dtype
    with no_grad():  # torch repeats the running stats outside autograd
        stats = [None if t is None else t.detach().to(like) for t in stats]
    out = aten_batch_norm(
        input.reshape(1, b * c, *size[2:]),
        repeated(weight),
        repeated(bias),
        *stats,
        use_input_stats,
        momentum,
        eps,
    )
    if use_input_stats:
        with no_grad():
            for given, updated in zip((running_mean, running_var), stats, strict=True):
                if given is not None:
                    given.copy_(updated.view(b, c).mean(0))
    return out.view(size)


class _InstanceNorm(_NormBase):
    """torch's ``_InstanceNorm``: ``affine`` and ``track_running_stats`` off by
    default."""

    _no_batch_dim = 0  # the rank of an unbatched input

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
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

    def _load_upgrade(
        self, state_dict: dict, prefix: str, version: int | None, errors: list[str]
    ) -> None:
        # before version 1 an instance norm saved running stats it did not track
        keys = [prefix + n for n in ("running_mean", "running_var")]
        keys = [k for k in keys if k in state_dict]
        if version is None and not self.track_running_stats and keys:
            klass = type(self).__name__
            names = " and ".join(f'"{k}"' for k in keys)
            errors.append(
                f"Unexpected running stats buffer(s) {names} for {klass} "
                "with track_running_stats=False. If state_dict is a "
                "checkpoint saved before 0.4.0, this may be expected "
                f"because {klass} does not track running stats by default "
                "since 0.4.0. Please remove these keys from state_dict. If "
                "the running stats are actually needed, instead set "
                f"track_running_stats=True in {klass} to enable them. See "
                f"the documentation of {klass} for details."
            )
            for key in keys:
                state_dict.pop(key)
        super()._load_upgrade(state_dict, prefix, version, errors)

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._no_batch_dim
        if input.dim() not in (n, n + 1):
            raise ValueError(
                f"expected {n}D or {n + 1}D input (got {input.dim()}D input)"
            )

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match "
                    f"num_features ({self.num_features}), but got: "
                    f"{input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. "
                "You can silence this warning by not passing in num_features, "
                "which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    _no_batch_dim = 4
