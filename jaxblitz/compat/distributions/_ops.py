"""The ops torch's distributions call that compat's ``torch`` namespace lacks:
the samplers ``_standard_gamma``, ``poisson`` and ``binomial``, each one
recorded op through compat's funnel (:func:`~jaxblitz.compat.autograd.graph.apply`).

The samplers take the generator's next key and draw with ``jax.random`` (torch's
distributions and gradients, not its stream): ``_standard_gamma``'s gradient is
the implicit reparameterization ``-(dF/dalpha) / (dF/dx)`` of JAX's gamma draw,
the quantity torch's ``_standard_gamma_grad`` computes.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import default_generator


def _typed_key(key: Any) -> jax.Array:
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    return jax.random.wrap_key_data(key, impl="threefry2x32")


def _key() -> Any:
    key = default_generator.next_key()
    return np.asarray(key) if isinstance(key, np.ndarray) else key


def _standard_gamma_fn(alpha, key):
    # torch: a draw of exactly 0 (alpha far below 1) becomes the dtype's tiny
    draw = jax.random.gamma(_typed_key(key), alpha, alpha.shape, alpha.dtype)
    return jnp.maximum(draw, jnp.finfo(alpha.dtype).tiny)


def _standard_gamma(concentration: Tensor) -> Tensor:
    """``torch._standard_gamma``: Gamma(concentration, 1) draws, differentiable
    in ``concentration``."""
    return apply("StandardGammaBackward0", _standard_gamma_fn, concentration, _key())


def _poisson_fn(rate, key):
    draw = jax.random.poisson(_typed_key(key), rate, rate.shape)
    return draw.astype(rate.dtype)


def poisson(rate: Tensor) -> Tensor:
    """``torch.poisson``: Poisson(rate) counts in ``rate``'s dtype."""
    return apply("PoissonBackward0", _poisson_fn, rate.detach(), _key())


def _binomial_fn(count, prob, key):
    draw = jax.random.binomial(_typed_key(key), count, prob, count.shape)
    return draw.astype(count.dtype)


def binomial(count: Tensor, prob: Tensor) -> Tensor:
    """``torch.binomial``: Binomial(count, prob) counts in ``count``'s dtype."""
    return apply(
        "BinomialBackward0", _binomial_fn, count.detach(), prob.detach(), _key()
    )


def _von_mises_fn(loc, concentration, proposal_r, key):
    # torch's rejection sampler (Best & Fisher), its loop as a while_loop over
    # the not yet accepted draws, so the sample is one recorded op
    def body(state):
        x, done, key = state
        key, sub = jax.random.split(key)
        u1, u2, u3 = jax.random.uniform(sub, (3, *x.shape), x.dtype)
        z = jnp.cos(jnp.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | (jnp.log(c / u2) + 1 - c >= 0)
        accept = accept & ~done
        x = jnp.where(accept, jnp.sign(u3 - 0.5) * jnp.arccos(f), x)
        return x, done | accept, key

    start = (jnp.zeros_like(loc), jnp.zeros(loc.shape, bool), _typed_key(key))
    x, _, _ = jax.lax.while_loop(lambda s: ~jnp.all(s[1]), body, start)
    return (x + jnp.pi + loc) % (2 * jnp.pi) - jnp.pi


def von_mises(loc: Tensor, concentration: Tensor, proposal_r: Tensor) -> Tensor:
    """VonMises(loc, concentration) draws of ``loc``'s shape, in its dtype."""
    return apply(
        "VonMisesSampleBackward0",
        _von_mises_fn,
        loc.detach(),
        concentration.detach(),
        proposal_r.detach(),
        _key(),
    )
