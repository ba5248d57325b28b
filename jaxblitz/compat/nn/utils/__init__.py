"""Blitz 4, "Training a classifier": ``torch.nn.utils`` -- gradient clipping."""

from jaxblitz.compat.nn.utils import rnn
from jaxblitz.compat.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "rnn",
]
