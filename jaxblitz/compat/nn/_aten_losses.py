"""Blitz 3, "Neural Networks": the losses under their ``torch.*`` names --
``torch.binary_cross_entropy_with_logits``, ``kl_div``, ``cosine_embedding_loss``,
``hinge_embedding_loss``, ``margin_ranking_loss``, ``poisson_nll_loss``,
``triplet_margin_loss``, ``ctc_loss`` -- which take ATen's reduction, an int
(0 none, 1 mean, 2 sum; any other int reduces nothing, as ATen's
``apply_loss_reduction``), over compat's ``nn.functional`` losses. Left out,
the reduction is none: torch's argument parser reads the schema's default
(``at::Reduction::Mean``) as 0.

This module loads after the Tensor class (it needs ``compat.nn``).
"""

from __future__ import annotations

import warnings
from typing import Any

from jaxblitz.compat import _autocast
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.nn.losses_margin import aten_margin_ranking_loss
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _check_broadcast, _require_tensors
from jaxblitz.compat.ops.shape_ops import broadcast_shapes
from jaxblitz.compat.tensor import Tensor

_REDUCTIONS = {1: "mean", 2: "sum"}


def _reduction(name: str, reduction: Any) -> str:
    """ATen's int reduction as ``nn.functional``'s string."""
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise TypeError(
            f"{name}(): argument 'reduction' must be int, not "
            f"{type(reduction).__name__}"
        )
    return _REDUCTIONS.get(reduction, "none")


@declare
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 0,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "binary_cross_entropy_with_logits",
            binary_cross_entropy_with_logits,
            input,
            target,
            weight,
            pos_weight,
            reduction,
        )
    how = _reduction("binary_cross_entropy_with_logits", reduction)
    _require_tensors("binary_cross_entropy_with_logits", input, target)
    if tuple(target.shape) != tuple(input.shape):  # ATen broadcasts, into target
        _check_broadcast(target, input)
        shape = tuple(broadcast_shapes(input.shape, target.shape))
        if shape != tuple(target.shape):
            raise RuntimeError(
                f"output with shape {list(target.shape)} doesn't match the "
                f"broadcast shape {list(shape)}"
            )
        raise NotImplementedError(
            "torch.binary_cross_entropy_with_logits of an input of shape "
            f"{list(input.shape)} broadcast to its target's {list(target.shape)} is "
            "not supported by jaxblitz.compat: expand the input to the target's shape"
        )
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=how, pos_weight=pos_weight
    )


@declare
def kl_div(
    input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False
) -> Tensor:
    """``torch.kl_div``: its mean is over every element, with none of
    ``F.kl_div``'s warning about it."""
    if _autocast.on:
        return _autocast.run(
            "kl_div", kl_div, input, target, reduction, log_target=log_target
        )
    how = _reduction("kl_div", reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return F.kl_div(input, target, reduction=how, log_target=log_target)


@declare
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    reduction: int = 0,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "cosine_embedding_loss",
            cosine_embedding_loss,
            input1,
            input2,
            target,
            margin,
            reduction,
        )
    how = _reduction("cosine_embedding_loss", reduction)
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=how)


@declare
def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "hinge_embedding_loss",
            hinge_embedding_loss,
            input,
            target,
            margin,
            reduction,
        )
    how = _reduction("hinge_embedding_loss", reduction)
    return F.hinge_embedding_loss(input, target, margin, reduction=how)


@declare
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    reduction: int = 0,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "margin_ranking_loss",
            margin_ranking_loss,
            input1,
            input2,
            target,
            margin,
            reduction,
        )
    how = _reduction("margin_ranking_loss", reduction)
    return aten_margin_ranking_loss(input1, input2, target, margin, how)


@declare
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool,
    full: bool,
    eps: float,
    reduction: int,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "poisson_nll_loss",
            poisson_nll_loss,
            input,
            target,
            log_input,
            full,
            eps,
            reduction,
        )
    how = _reduction("poisson_nll_loss", reduction)
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=how)


@declare
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = 0,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "triplet_margin_loss",
            triplet_margin_loss,
            anchor,
            positive,
            negative,
            margin,
            p,
            eps,
            swap,
            reduction,
        )
    how = _reduction("triplet_margin_loss", reduction)
    return F.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=how
    )


@declare
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 0,
    zero_infinity: bool = False,
) -> Tensor:
    if _autocast.on:
        return _autocast.run(
            "ctc_loss",
            ctc_loss,
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            blank,
            reduction,
            zero_infinity,
        )
    how = _reduction("ctc_loss", reduction)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError(
            "ctc_loss() received an invalid combination of arguments: "
            "input_lengths and target_lengths must both be tuples of ints or both "
            "Tensors"
        )
    return F.ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        reduction=how,
        zero_infinity=zero_infinity,
    )
