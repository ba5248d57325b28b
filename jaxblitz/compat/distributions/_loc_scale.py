"""What ``Normal``, ``Laplace`` and ``Cauchy`` share: broadcast ``loc`` and
``scale`` parameters, and ``expand`` over them."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.utils import _Number, broadcast_all
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import Size


class LocScale:
    """A mixin before a :class:`Distribution` base: ``(loc, scale)`` broadcast
    together; the batch shape is theirs (``()`` for two Python numbers)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _family: Any  # the class that mixes this in (torch's expand checks it)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if LocScale in cls.__bases__:
            cls._family = cls

    def __init__(
        self,
        loc: Tensor | float,
        scale: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, _Number) and isinstance(scale, _Number)
        batch_shape = () if numbers else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._family, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(LocScale, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new
