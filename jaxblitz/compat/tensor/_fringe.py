"""Blitz 1, "Tensors": the fringe of ``torch.Tensor``'s methods -- queries of
devices compat never runs on, deprecated and removed methods, and the quantized,
complex and sparse ones, which compat refuses by name (its tensors are real,
dense and unquantized). What torch answers for a CPU float tensor, compat answers
the same."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jaxblitz.compat._not_offered import REASONS, SUBMODULES, NotOffered
from jaxblitz.compat.tensor import _dtype

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_NESTED = SUBMODULES["torch.nested"]
_STORAGE = SUBMODULES["torch.storage"]


def _refused(name: str, reason: str) -> Callable[..., Any]:
    """``Tensor.{name}``: refused with ``reason``."""

    def refuse(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise NotOffered(f"Tensor.{name} is not supported by jaxblitz.compat: {reason}")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``Tensor.{name}``: refused (not supported by jaxblitz.compat)."
    refuse.refused = True  # type: ignore[attr-defined] -- what the docs count
    return refuse


def _like_torch(name: str) -> Callable[..., Any]:
    """``Tensor.{name}``, refused as ``torch.{name}`` is."""
    return _refused(name, REASONS["torch"][name])


def _sparse_only(name: str) -> Callable[..., Any]:
    """``Tensor.{name}``, which torch runs on a sparse ``self`` only."""

    def refuse(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")

    refuse.__name__ = refuse.__qualname__ = name
    return refuse


_false = property(lambda self: False)

_REMOVED_REINFORCE = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


class FringeMixin:
    """The fringe of torch's Tensor methods (see the module's docstring)."""

    __slots__ = ()

    # -- devices compat never runs on ---------------------------------------------
    is_xpu = is_mps = is_xla = is_ipu = is_maia = is_mtia = is_vulkan = _false
    is_sparse_csr = _false

    def is_distributed(self) -> bool:
        return False

    def ipu(self, *args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError("PyTorch is not linked with support for ipu devices")

    def xpu(self, *args: Any, **kwargs: Any) -> Tensor:
        raise AssertionError("Torch not compiled with XPU enabled")

    def mtia(self, *args: Any, **kwargs: Any) -> Tensor:
        raise AssertionError(
            "Torch not compiled with MTIA enabled. Ensure you have `import "
            "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file "
            "and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target "
            "dependency!"
        )

    def record_stream(self, stream: Any) -> None:
        """Nothing to record: compat's streams are the device's one queue."""
        from jaxblitz.compat._cuda_streams import Stream

        if not isinstance(stream, Stream):
            raise RuntimeError("unknown parameter type")

    # -- layout -------------------------------------------------------------------
    def const_data_ptr(self) -> int:
        return self.data_ptr()  # type: ignore[attr-defined]

    def is_set_to(self, tensor: Tensor) -> bool:
        """Whether ``tensor`` views the same storage with the same layout."""
        me: Any = self
        return (
            me._s is tensor._s
            and me.storage_offset() == tensor.storage_offset()
            and me.shape == tensor.shape
            and me.stride() == tensor.stride()
        )

    def dim_order(self, *, ambiguity_check: bool | list = False) -> tuple[int, ...]:
        """The dims from outermost to innermost in memory (torch's sort of the
        strides, ties left in place)."""
        return _dim_order(self, ambiguity_check)

    # -- deprecated and removed ---------------------------------------------------
    def resize(self, *sizes: Any) -> Tensor:
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        return _resized(self, sizes)

    def resize_as(self, tensor: Tensor) -> Tensor:
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        return _resized(self, tuple(tensor.size()))

    @property
    def volatile(self) -> bool:
        warnings.warn(
            "volatile was removed (Variable.volatile is always False)",
            UserWarning,
            stacklevel=2,
        )
        return False

    def reinforce(self, reward: Any) -> None:
        raise RuntimeError(_REMOVED_REINFORCE)

    @property
    def name(self) -> None:
        return None  # named tensors' one name: torch's is None unless set

    @property
    def grad_dtype(self) -> _dtype.dtype:
        if not self.is_leaf:  # type: ignore[attr-defined]
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.dtype  # type: ignore[attr-defined]

    def module_load(self, other: Tensor, assign: bool = False) -> Tensor:
        """How ``load_state_dict`` turns ``other`` into a parameter's value when
        parameters are swapped."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()  # type: ignore[attr-defined]

    def dequantize(self) -> Tensor:
        return self  # type: ignore[return-value] # torch: an unquantized tensor

    # -- refused by name ----------------------------------------------------------
    int_repr = _like_torch("int_repr")
    q_scale = _like_torch("q_scale")
    q_zero_point = _like_torch("q_zero_point")
    q_per_channel_axis = _like_torch("q_per_channel_axis")
    q_per_channel_scales = _like_torch("q_per_channel_scales")
    q_per_channel_zero_points = _like_torch("q_per_channel_zero_points")
    qscheme = _refused("qscheme", REASONS["torch"]["int_repr"])
    cfloat = _like_torch("cfloat")
    cdouble = _like_torch("cdouble")
    chalf = _like_torch("chalf")
    stft = _like_torch("stft")
    istft = _like_torch("istft")
    smm = _sparse_only("smm")
    sspaddmm = _sparse_only("sspaddmm")
    sparse_mask = _refused("sparse_mask", REASONS["torch"]["sparse_coo"])
    resize_as_sparse_ = _like_torch("resize_as_sparse_")
    sparse_resize_ = _refused("sparse_resize_", REASONS["torch"]["sparse_coo"])
    sparse_resize_and_clear_ = _refused(
        "sparse_resize_and_clear_", REASONS["torch"]["sparse_coo"]
    )
    slice_inverse = _like_torch("slice_inverse")
    as_strided_ = _like_torch("as_strided_")
    hash_tensor = _like_torch("hash_tensor")
    to_padded_tensor = _refused("to_padded_tensor", _NESTED)
    to_mkldnn = _refused(
        "to_mkldnn",
        "oneDNN's blocked layout is not offered: compat's tensors are strided",
    )
    storage_type = _refused("storage_type", _STORAGE)
    set_ = _refused(
        "set_",
        "rebinding a tensor to another storage is not implemented: use "
        "the other tensor, or copy_ its values",
    )
    index = _refused(
        "index",
        "first-class dimensions (functorch.dim) are not offered: index "
        "with einsum or permute",
    )


def _resized(self: Any, sizes: tuple) -> Tensor:
    """torch's autograd ``Resize``: a new shape of as many elements."""
    from jaxblitz.compat.tensor._tensor_base import sizes as _sizes

    shape = _sizes("resize", sizes)
    numel, have = 1, self.numel()
    for n in shape:
        numel *= n
    if numel != have:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({numel} elements in "
            f"total), but the given tensor has a size of "
            f"{'x'.join(map(str, self.shape))} ({have} elements). autograd's resize "
            "can only change the shape of a given tensor, while preserving the "
            "number of elements. "
        )
    return self.contiguous().view(shape)


def _dim_order(self: Any, ambiguity_check: bool | list) -> tuple[int, ...]:
    """torch's ``Tensor.dim_order``: its insertion sort of the dims by stride
    (``torch._prims_common.compute_elementwise_output_logical_to_physical_perm``)
    and its ambiguity checks."""
    from jaxblitz.compat.tensor._info import channels_last, memory_format

    if not isinstance(ambiguity_check, bool) and (
        not isinstance(ambiguity_check, list)
        or not all(isinstance(f, memory_format) for f in ambiguity_check)
    ):
        raise TypeError(
            "The ambiguity_check argument must be a bool or a list of memory formats."
        )
    shape, strides, ndim = tuple(self.shape), self.stride(), self.dim()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    if check and (
        any(a == b for a, b in zip(strides, strides[1:], strict=False)) or 1 in shape
    ):
        legal = sum(self.is_contiguous(memory_format=f) for f in formats)
        if legal != 1:
            raise RuntimeError(
                "The tensor does not have unique dim order, or cannot map to exact "
                "one of the given memory formats."
            )
    if ndim < 2:
        return tuple(range(ndim))
    contiguous = self.is_contiguous()
    last = self.is_contiguous(memory_format=channels_last)
    if contiguous and not last:
        return tuple(range(ndim))
    if last and not contiguous:
        return (0, *range(2, ndim), 1)

    def ge(a: int, b: int) -> bool:
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        return -1 if ge(sb, sa) else 1 if ge(sa, sb) else 0

    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):  # insertion sort with ambiguous comparisons
        dim1 = i
        for dim0 in reversed(range(i)):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    if ambiguity_check and any(
        should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1)
    ):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))
