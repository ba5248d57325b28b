"""``torch.distributions.transforms``' ``CatTransform`` and ``StackTransform``:
a transform per slice of one dimension, as torch's ``cat`` and ``stack`` join
them. Re-exported by :mod:`.transforms`."""

from __future__ import annotations

from collections.abc import Sequence

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.transforms import Transform
from jaxblitz.compat.distributions.utils import _sum_rightmost, lazy_property
from jaxblitz.compat.ops.shape_ops import cat, stack

__all__ = ["CatTransform", "StackTransform"]


def _check_dim(dim: int, t, what: str) -> None:
    if not (-t.dim() <= dim < t.dim()):
        raise AssertionError(
            f"dim {dim} out of range for {what} with {t.dim()} dimensions"
        )


def _check_size(dim: int, t, name: str, size: int, of: str) -> None:
    if t.size(dim) != size:
        raise AssertionError(
            f"{name}.size({dim}) = {t.size(dim)} must equal {of} {size}"
        )


def _checked(transforms: Sequence[Transform], cache_size: int) -> list[Transform]:
    if not all(isinstance(t, Transform) for t in transforms):
        raise AssertionError("All elements of tseq must be Transform instances")
    if cache_size:
        return [t.with_cache(cache_size) for t in transforms]
    return list(transforms)


class CatTransform(Transform):
    """``transforms[i]`` applied to the i-th block (``lengths[i]`` long) of
    dimension ``dim``."""

    transforms: list[Transform]

    def __init__(
        self,
        tseq: Sequence[Transform],
        dim: int = 0,
        lengths: Sequence[int] | None = None,
        cache_size: int = 0,
    ) -> None:
        tseq = _checked(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms "
                f"({len(self.transforms)})"
            )
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _blocks(self, t, name: str) -> list:
        _check_dim(self.dim, t, "tensor")
        _check_size(self.dim, t, name, self.length, "length")
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [
            t.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths, strict=True)
        ]

    def _call(self, x):
        blocks = self._blocks(x, "x")
        return cat(
            [t(b) for t, b in zip(self.transforms, blocks, strict=True)], dim=self.dim
        )

    def _inverse(self, y):
        blocks = self._blocks(y, "y")
        return cat(
            [t.inv(b) for t, b in zip(self.transforms, blocks, strict=True)],
            dim=self.dim,
        )

    def log_abs_det_jacobian(self, x, y):
        _check_dim(self.dim, x, "x")
        _check_size(self.dim, x, "x", self.length, "length")
        _check_dim(self.dim, y, "y")
        _check_size(self.dim, y, "y", self.length, "length")
        logdetjacs = []
        for trans, xs, ys in zip(
            self.transforms, self._blocks(x, "x"), self._blocks(y, "y"), strict=False
        ):
            logdetjac = trans.log_abs_det_jacobian(xs, ys)
            if trans.event_dim < self.event_dim:
                logdetjac = _sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
        # torch: concatenated where dim is a batch dimension, else summed
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return cat(logdetjacs, dim=dim)
        return sum(logdetjacs)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat(
            [t.domain for t in self.transforms], self.dim, self.lengths
        )

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat(
            [t.codomain for t in self.transforms], self.dim, self.lengths
        )


class StackTransform(Transform):
    """``transforms[i]`` applied to the i-th slice of dimension ``dim``."""

    transforms: list[Transform]

    def __init__(
        self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0
    ) -> None:
        tseq = _checked(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z, name: str, what: str = "tensor"):
        _check_dim(self.dim, z, what)
        _check_size(self.dim, z, name, len(self.transforms), "len(transforms)")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        slices = self._slice(x, "x")
        return stack(
            [t(s) for s, t in zip(slices, self.transforms, strict=True)], dim=self.dim
        )

    def _inverse(self, y):
        slices = self._slice(y, "y")
        return stack(
            [t.inv(s) for s, t in zip(slices, self.transforms, strict=True)],
            dim=self.dim,
        )

    def log_abs_det_jacobian(self, x, y):
        xs, ys = self._slice(x, "x", "x"), self._slice(y, "y", "y")
        logdetjacs = [
            t.log_abs_det_jacobian(a, b)
            for a, b, t in zip(xs, ys, self.transforms, strict=True)
        ]
        return stack(logdetjacs, dim=self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
