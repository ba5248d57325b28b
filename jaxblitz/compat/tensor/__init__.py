"""Blitz 1, "Tensors": ``torch.Tensor`` as a thin handle over a ``jax.Array``.

:class:`Tensor` is the handle (:class:`~jaxblitz.compat.tensor._tensor_base.TensorBase`:
storage, shape, dtype, conversions) plus one mixin per kind of method, each in the
module that owns it:

- :class:`~jaxblitz.compat.autograd.graph.AutogradMixin`: ``requires_grad``,
  ``grad_fn``, ``retain_grad``, ``.data``, ``detach``;
- :class:`~jaxblitz.compat.ops.MathMixin`: math, comparisons and operators,
  ``to``/``float``/``cuda``;
- :class:`~jaxblitz.compat.ops.shape_ops.ShapeMixin`: ``view``, ``permute``, ...,
  ``x[idx]`` and ``x[idx] = v``;
- :class:`~jaxblitz.compat.ops.inplace.InplaceMixin`: ``add_``, ``+=``, ``fill_``,
  ``copy_``, ``uniform_``;
- :class:`~jaxblitz.compat.tensor.creation.CreationMixin`: ``new_ones``, ``new_tensor``;
- :class:`~jaxblitz.compat.tensor._fringe.FringeMixin`: other devices' queries,
  deprecated methods, and the quantized/complex/sparse ones refused by name.

Every math op goes through the funnel :func:`jaxblitz.compat.autograd.graph.apply`.
Imports run one way: ``_dtype`` -> ``_tensor_base`` -> ``autograd.graph`` ->
``creation`` -> ``ops`` -> ``shape_ops``/``inplace`` -> this module.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from jaxblitz.compat.autograd import backward as _backward
from jaxblitz.compat.ops import MathMixin
from jaxblitz.compat.ops._declare import PYTHON_LEVEL, numpy_names
from jaxblitz.compat.ops._random_inplace import RandomMixin
from jaxblitz.compat.ops._scatter import ScatterMixin
from jaxblitz.compat.ops.inplace import InplaceMixin
from jaxblitz.compat.ops.shape_ops import ShapeMixin
from jaxblitz.compat.tensor import _dtype, _layout, _tensor_base, creation
from jaxblitz.compat.tensor._fringe import FringeMixin
from jaxblitz.compat.tensor._sparse import SparseMixin
from jaxblitz.compat.tensor._tensor_base import Size, _type_name, sizes
from jaxblitz.compat.tensor.creation import CreationMixin

__all__ = ["Size", "Tensor"]


class Tensor(
    InplaceMixin,
    MathMixin,
    ShapeMixin,
    ScatterMixin,
    RandomMixin,
    CreationMixin,
    SparseMixin,
    FringeMixin,
):
    """``torch.Tensor``. Build with ``torch.tensor``/``zeros``/...; see module doc."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any):
        # torch.Tensor(2, 3) (uninitialised float) or torch.Tensor([1, 2]) (data).
        if cls is Tensor and (args or kwargs):
            device = kwargs.pop("device", None)
            dt = _dtype.get_default_dtype()
            return creation._legacy_new(dt, device, args, kwargs, alias=False)
        return super().__new__(cls)

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) . gradient into every leaf's ``.grad``."""
        _backward(self, gradient, retain_graph, create_graph, inputs)

    # -- complex parts: compat's dtypes are real ----------------------------------
    def conj(self) -> Tensor:
        return self  # torch: a real tensor is its own conjugate (the same object)

    resolve_conj = resolve_neg = conj

    @property
    def real(self) -> Tensor:
        return self

    @property
    def imag(self) -> Tensor:
        raise RuntimeError(
            "imag is not implemented for tensors with non-complex dtypes."
        )

    @property
    def H(self) -> Tensor:  # noqa: N802 -- torch's name
        if self.dim() not in (0, 2):
            extra = (
                " For batches of matrices, consider using tensor.mH"
                if self.dim() > 2
                else ""
            )
            raise RuntimeError(
                "tensor.H is only supported on matrices (2-D tensors). Got "
                f"{self.dim()}-D tensor.{extra}"
            )
        return self.transpose(0, 1) if self.dim() else self

    @property
    def mH(self) -> Tensor:  # noqa: N802 -- torch's name
        if self.dim() < 2:
            raise RuntimeError(
                "tensor.mH is only supported on matrices or batches of matrices. "
                f"Got {self.dim()}-D tensor."
            )
        return self.mT

    # -- memory ----------------------------------------------------------------------
    @property
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is (a piece of ``split``...)."""
        multi = self.__dict__.get("_multi_view")
        return multi[1] if multi else 0

    def pin_memory(self, device: Any = None) -> Tensor:
        if not _dtype.gpus():
            raise RuntimeError(
                "Cannot access accelerator device when none is available."
            )
        raise NotImplementedError(
            "Tensor.pin_memory is not supported by jaxblitz.compat (JAX manages "
            "host-to-device transfers)"
        )

    def share_memory_(self) -> Tensor:
        """Refused: a no-op here would let processes started afterwards (as
        Hogwild training starts them) each train their own copy, silently."""
        raise NotImplementedError(
            "Tensor.share_memory_ is not supported by jaxblitz.compat: its tensors "
            "live in one process's memory, so each process started after it would "
            "update its own copy; train in one process (jaxblitz.parallel shards "
            "a batch over devices)"
        )

    def resize_(self, *size: Any, memory_format: Any = None) -> Tensor:
        """``x.resize_(*size)``: ``x`` re-laid contiguously over its storage, from
        its offset; growing past the storage is refused."""
        shape = sizes("resize_", size)
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        offset = self.storage_offset()
        room = int(np.prod(self._s.shape, dtype=np.int64))
        if offset + int(np.prod(shape, dtype=np.int64)) > room:
            raise NotImplementedError(
                "Tensor.resize_: growing past the tensor's storage is not supported "
                "by jaxblitz.compat"
            )
        if self._as is not None:
            raise NotImplementedError(
                "Tensor.resize_ of a dtype view is not supported by jaxblitz.compat"
            )
        layout = _layout.Layout(shape, _layout.contiguous_strides(shape), offset)
        self._view = None if layout == _layout.identity(self._s.shape) else layout
        self._cache = None
        return self

    def resize_as_(self, other: Tensor, memory_format: Any = None) -> Tensor:
        return self.resize_(other.shape)

    def new_empty_strided(
        self,
        size: Any,
        stride: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        from jaxblitz.compat.ops._factories import empty_strided

        return empty_strided(
            size,
            stride,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
            layout=layout,
        )

    # -- Python callables over the elements (CPU, no autograd) -------------------
    def _host_fill(self, name: str, values: np.ndarray) -> Tensor:
        if self.requires_grad:
            raise RuntimeError(
                f"Can't call {name}() on Variable that requires grad. Use "
                f"var.detach().{name}() instead."
            )
        self._check_inplace()
        self._set_data(_tensor_base.from_host(values.astype(self.dtype.np)))
        return self

    def apply_(self, callable: Any) -> Tensor:
        """Each element replaced by ``callable(element)`` (a Python loop)."""
        values = [callable(v) for v in np.asarray(self._data).reshape(-1).tolist()]
        return self._host_fill("apply_", np.asarray(values).reshape(self.shape))

    def map_(self, tensor: Tensor, callable: Any) -> Tensor:
        """Each element replaced by ``callable(element, tensor's element)``."""
        other = np.broadcast_to(np.asarray(tensor._data), tuple(self.shape))
        pairs = zip(
            np.asarray(self._data).reshape(-1).tolist(),
            other.reshape(-1).tolist(),
            strict=True,
        )
        values = [callable(a, b) for a, b in pairs]
        return self._host_fill("map_", np.asarray(values).reshape(self.shape))

    def map2_(self, x: Tensor, y: Tensor, callable: Any) -> Tensor:
        """Each element replaced by ``callable(element, x's, y's)``."""
        shape = tuple(self.shape)
        others = [_broadcast_to(t, shape) for t in (x, y)]
        triples = zip(
            np.asarray(self._data).reshape(-1).tolist(),
            *(o.reshape(-1).tolist() for o in others),
            strict=True,
        )
        values = [callable(a, b, c) for a, b, c in triples]
        return self._host_fill("map2_", np.asarray(values).reshape(shape))

    def as_subclass(self, cls: type) -> Tensor:
        """``x.as_subclass(cls)``: an alias of ``x`` (same elements, on the
        autograd graph) that is an instance of ``cls``, a subclass of Tensor."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(
                "Creating a Tensor subclass from a class that does not inherit from "
                "Tensor is not possible. Make sure your class inherits from Tensor."
            )
        out = self.view_as(self)
        try:
            out.__class__ = cls
        except TypeError as e:  # a subclass with its own __slots__ layout
            raise NotImplementedError(
                f"Tensor.as_subclass({cls.__name__}) is not supported by "
                f"jaxblitz.compat: {e}"
            ) from None
        return out


def _broadcast_to(t: Tensor, shape: tuple) -> np.ndarray:
    """``t``'s values expanded to ``shape``, with torch's expand error."""
    try:
        return np.broadcast_to(np.asarray(t._data), shape)
    except ValueError:
        t.expand(*shape)  # raises torch's message
        raise


_tensor_base.use_tensor_class(Tensor)


def _numpy_named_methods() -> None:
    """Every method with a ``dim`` or ``keepdim`` takes NumPy's ``axis`` and
    ``keepdims`` too, as torch's (the declared ops' are already wrapped)."""
    for name in dir(Tensor):
        if name.startswith("_") or name in PYTHON_LEVEL:
            continue
        owner = next(k for k in Tensor.__mro__ if name in vars(k))
        fn = vars(owner)[name]
        if isinstance(fn, types.FunctionType):
            named = numpy_names(fn)
            if named is not fn:
                setattr(Tensor, name, named)


_numpy_named_methods()


def _as_function(name: str) -> Any:
    """``torch.name(input, *args)``: the Tensor method (or property) ``name``."""

    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{_type_name(input)}"
            )
        got = getattr(input, name)
        return got if name in ("real", "imag") else got(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    return fn


conj, resolve_conj, resolve_neg, real, imag = map(
    _as_function, ("conj", "resolve_conj", "resolve_neg", "real", "imag")
)
is_complex, is_nonzero, is_same_size, is_signed, is_conj, is_neg = map(
    _as_function,
    ("is_complex", "is_nonzero", "is_same_size", "is_signed", "is_conj", "is_neg"),
)
is_floating_point, detach, adjoint, get_device = map(
    _as_function, ("is_floating_point", "detach", "adjoint", "get_device")
)

# torch's in-place functions: torch.sigmoid_(x) is x.sigmoid_(), and returns x.
INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_",
    "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_",
    "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_",
    "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_",
    "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_",
    "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
    "xlogy_", "zero_",
)  # fmt: skip
globals().update({name: _as_function(name) for name in INPLACE_FUNCTIONS})


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None):
    return input.resize_as_(the_template)
