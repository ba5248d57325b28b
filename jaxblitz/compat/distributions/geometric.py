"""``torch.distributions.Geometric``: the number of failures before the first success,
with ``probs`` or ``logits``.

``sample`` maps ``uniform_(tiny, 1)`` draws as torch's, from compat's generator.
"""

from __future__ import annotations

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.distribution import Distribution, _check_all
from jaxblitz.compat.distributions.utils import (
    _finfo,
    _Number,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from jaxblitz.compat.nn.functional import binary_cross_entropy_with_logits
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import Size
from jaxblitz.compat.tensor.creation import zeros_like

__all__ = ["Geometric"]


class Geometric(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(
        self,
        probs: Tensor | float | None = None,
        logits: Tensor | float | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError(
                "Either `probs` or `logits` must be specified, but not both."
            )
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            if logits is None:
                raise AssertionError("logits is unexpectedly None")
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        if isinstance(probs_or_logits, _Number):
            batch_shape = ()
        else:
            if probs_or_logits is None:
                raise AssertionError("probs_or_logits is unexpectedly None")
            batch_shape = probs_or_logits.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # torch's extra check beyond unit_interval (pending probs: at the sync)
            value, made = self.probs, self._later_repr()
            _check_all(
                value > 0,
                lambda: (
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {made()} to be "
                    f"positive but found invalid values:\n{value.data[~(value > 0)]}"
                ),
            )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = _finfo(self.probs.dtype).tiny
        with no_grad():
            u = self.probs.new_empty(shape).uniform_(float(tiny), 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return (
            binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
            / self.probs
        )
