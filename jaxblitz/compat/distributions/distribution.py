"""``torch.distributions.Distribution``: the base class -- batch and event shapes,
argument and sample validation with torch's words, ``sample`` through ``rsample``
under ``no_grad``, and torch's repr."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from jaxblitz.compat import lazy
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.utils import _format, lazy_property
from jaxblitz.compat.ops._unary import exp
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._checks import check_values
from jaxblitz.compat.tensor._tensor_base import Size

__all__ = ["Distribution"]


def _invalid(valid: Any) -> tuple:
    return ~valid.astype(bool), valid


def _check_all(valid: Tensor, message: Callable[[], str]) -> None:
    """torch's ``if not valid.all(): raise ValueError(message)``, where the
    values are (:mod:`compat.tensor._checks`): a pending check raises at the next
    sync, so that building a distribution in a loop runs no work early."""
    check_values([valid], _invalid, lambda *_: ValueError(message()))


def _at_once_where_known(init: Callable) -> Callable:
    """``init`` run with :func:`lazy.at_once_where_known`: parameters made from
    known values (normalised, broadcast) are known, and so their checks raise
    at the op as torch's do; pending ones are recorded and checked at the sync."""

    @functools.wraps(init)
    def made(self: Any, *args: Any, **kwargs: Any) -> None:
        with lazy.at_once_where_known():
            init(self, *args, **kwargs)

    made._at_once = True  # type: ignore[attr-defined]
    return made


class Distribution:
    """The abstract base class of probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """torch checks a distribution's parameters as it is made: each
        constructor runs with :func:`_at_once_where_known`."""
        super().__init_subclass__(**kwargs)
        # a class's own __init__, or one from a mixin (LocScale) before the base
        if not getattr(cls.__init__, "_at_once", False):
            cls.__init__ = _at_once_where_known(cls.__init__)  # type: ignore[method-assign]

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument validation on or off for distributions made from now on
        (on by default, off under ``python -O``, as torch's)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: tuple[int, ...] = (),
        event_shape: tuple[int, ...] = (),
        validate_args: bool | None = None,
    ) -> None:
        # torch.Size: compat's Size sliced or added is a tuple (torch's a Size)
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    + "Please set `arg_constraints = {}` or initialize the "
                    + "distribution with `validate_args=False` to turn off "
                    + "validation.",
                    stacklevel=2,
                )
            made = self._later_repr()
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param), lazy_property
                ):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                _check_all(
                    constraint.check(value),
                    lambda param=param, value=value, constraint=constraint: (
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {made()} "
                        f"to satisfy the constraint {repr(constraint)}, "
                        f"but found invalid values:\n{value}"
                    ),
                )
        super().__init__()

    def expand(self, batch_shape: tuple[int, ...], _instance: Any = None) -> Any:
        """A new distribution with its parameters expanded to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint | None:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: tuple[int, ...] = ()) -> Tensor:
        """``sample_shape`` draws (of the batch), with no gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: tuple[int, ...] = ()) -> Tensor:
        """``sample_shape`` reparameterized draws: gradients reach the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return exp(self.entropy())

    def _extended_shape(self, sample_shape: tuple[int, ...] = ()) -> Any:
        """``sample_shape + batch_shape + event_shape``."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        """torch's checks of a value to score: a tensor, of a shape that
        broadcasts with the batch and event shapes, within the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                + "sample validation. Please initialize the distribution with "
                + "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        made = self._later_repr()
        with lazy.at_once_where_known():  # a known value is checked here
            valid = support.check(value)
        _check_all(
            valid,
            lambda: (
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({repr(support)}) "
                f"of the distribution {made()}, "
                f"but found invalid values:\n{value}"
            ),
        )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines "
                "a custom __init__ method must also define a custom .expand() "
                "method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        return self._repr([k for k in self.arg_constraints if k in self.__dict__])

    def _repr(self, param_names: list[str]) -> str:
        args_string = ", ".join(
            [f"{p}: {_format_param(self.__dict__[p])}" for p in param_names]
        )
        return self.__class__.__name__ + "(" + args_string + ")"

    def _later_repr(self) -> Callable[[], str]:
        """torch's repr as it is now, made when called: a late error's message
        names the parameters set when its check was recorded, and reading their
        values then runs no pending work early."""
        names = [k for k in self.arg_constraints if k in self.__dict__]
        return lambda: self._repr(names)


def _format_param(value: Tensor) -> str:
    """torch's ``f"{value}"`` of a one-element parameter (a 0-d tensor formats as
    its number), else its size."""
    if value.numel() != 1:
        return str(value.size())
    return _format(value)
