"""Blitz 3/4, "Update the weights": ``torch.optim``'s optimizers as Optax
transformations, with torch's update rules: the one torch -> Optax map, used by
``train.make_optimizer`` and ``jaxblitz.compat.optim``.

A stage given as ``None`` is left out, with its state (the core's optimizers, whose
settings never change); a number keeps it even at 0, so a later change to it
(compat's ``param_groups[i]["weight_decay"] = ...``) takes effect under
``optax.inject_hyperparams``.
"""

from __future__ import annotations

import optax


def _decayed(weight_decay, tx: optax.GradientTransformation):
    # torch's weight_decay is L2 added to the gradient before the update rule.
    if weight_decay is None:
        return tx
    return optax.chain(optax.add_decayed_weights(weight_decay), tx)


def sgd(learning_rate, momentum=None, weight_decay=None, nesterov=False):
    """``torch.optim.SGD(lr, momentum, weight_decay, nesterov)``."""
    return _decayed(
        weight_decay, optax.sgd(learning_rate, momentum=momentum, nesterov=nesterov)
    )


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, weight_decay=None):
    """``torch.optim.Adam(lr, betas=(b1, b2), eps, weight_decay)``."""
    return _decayed(weight_decay, optax.adam(learning_rate, b1, b2, eps))


def rmsprop(
    learning_rate,
    alpha=0.99,
    eps=1e-8,
    weight_decay=None,
    momentum=None,
    centered=False,
):
    """``torch.optim.RMSprop(lr, alpha, eps, weight_decay, momentum, centered)``.

    eps outside the square root, as torch; torch's order: the momentum buffer holds
    unscaled steps and lr multiplies last, so a changed lr applies to it at once.
    """
    scale = optax.scale_by_stddev if centered else optax.scale_by_rms
    stages = [scale(decay=alpha, eps=eps, eps_in_sqrt=False)]
    if momentum is not None:
        stages.append(optax.trace(decay=momentum))
    stages.append(optax.scale_by_learning_rate(learning_rate))
    return _decayed(weight_decay, optax.chain(*stages))
