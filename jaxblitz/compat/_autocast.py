"""Blitz 4, "Training on GPU": what ``torch.autocast`` does to each op -- torch's
per-device op lists and cast policies (ATen's ``autocast_mode.cpp``), its
per-device state and its cache of casted weights.

torch casts at the dispatcher: a listed op has its floating inputs cast, then
runs below autocast, so the ops it calls inside are not cast again. compat's
listed ops do the same with one line at their entry point::

    if _autocast.on: return _autocast.run("linear", linear, input, weight, bias)

``on`` is the one module-level flag the entry points read while autocast is off
(the hot path): true while any device's autocast is enabled, or while
``torch.profiler`` records (:mod:`._profiling`: the entry point names the op
the user called). Ops on no list run on their inputs' dtypes, as in torch.
"""

from __future__ import annotations

import weakref
from typing import Any

from jaxblitz.compat import _profiling
from jaxblitz.compat.tensor._dtype import bfloat16, float16, float32, float64
from jaxblitz.compat.tensor._tensor_base import TensorBase

on = False  # read by each listed op's entry point: keep it a plain bool

# torch.get_autocast_dtype's defaults; state changed by torch.autocast regions
_enabled: dict[str, bool] = {}
_dtypes: dict[str, Any] = {"cpu": bfloat16, "cuda": float16}
_cache_enabled = True
_nesting = 0
_cache: dict[int, tuple[Any, Any]] = {}  # id(weight) -> (weakref, its cast)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# torch's AutocastCPU registrations, by compat's entry-point names
_CPU = {
    "lower": _names("""
        conv1d conv2d conv3d bmm mm vecdot baddbmm addmm addbmm linear matmul
        conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d prelu
        scaled_dot_product_attention"""),
    "fp32": _names("""
        avg_pool3d binary_cross_entropy grid_sampler polar prod quantile
        nanquantile stft cdist trace view_as_complex cholesky cholesky_inverse
        cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d
        max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d
        reflection_pad2d replication_pad1d replication_pad2d replication_pad3d
        mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss
        poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss
        margin_ranking_loss soft_margin_loss triplet_margin_loss
        multi_margin_loss ctc_loss kl_div multilabel_margin_loss
        binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2
        fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn
        fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank
        linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals
        linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv
        linalg_tensorsolve geqrf qr svd triangular_solve fractional_max_pool2d
        fractional_max_pool3d adaptive_max_pool3d linalg_qr linalg_cholesky_ex
        linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex"""),
    "promote": _names("stack cat index_copy"),
    # not on torch's CPU list, but composites of its matmuls there (compat's
    # own kernels are not), so their results come out in the lower dtype
    "lower_composite": _names("""
        tensordot multi_dot rnn_tanh_cell rnn_relu_cell lstm rnn_tanh rnn_relu"""),
    "lower_if_product": _names("einsum inner chain_matmul"),
}

# torch's Autocast (CUDA) registrations: AT_FORALL_* in autocast_mode.h
_CUDA = {
    "lower": _names("""
        conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
        conv_transpose3d prelu addmm addmv addr matmul einsum mm mv vecdot
        linear addbmm baddbmm bmm chain_matmul multi_dot lstm_cell gru_cell
        rnn_tanh_cell rnn_relu_cell scaled_dot_product_attention"""),
    "fp32": _names("""
        acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt
        sinh tan pow softplus layer_norm group_norm cosine_similarity
        poisson_nll_loss cosine_embedding_loss nll_loss hinge_embedding_loss
        kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
        multilabel_margin_loss soft_margin_loss triplet_margin_loss
        multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist
        renorm logsumexp"""),
    # run with dtype=torch.float32 where no dtype is passed
    "fp32_set_opt_dtype": _names("""
        prod softmax log_softmax cumprod cumsum vector_norm matrix_norm sum"""),
    "promote": _names("""
        addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put
        tensordot scatter_add"""),
    "banned": _names("binary_cross_entropy"),
    # cuDNN's recurrent kernel, which torch's AutocastRNN casts
    "lower_composite": _names("lstm gru rnn_tanh rnn_relu"),
}

_POLICIES = {"cpu": _CPU, "cuda": _CUDA}

_BANNED = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
    "autocast.\nMany models use a sigmoid layer right before the binary cross "
    "entropy layer.\nIn this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\nor "
    "torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
    "BCEWithLogits are\nsafe to autocast."
)


def refresh() -> None:
    """Set :data:`on` from the regions open and the profiler."""
    global on
    on = _profiling.on or any(_enabled.values())


_profiling.REFRESH.append(refresh)


def is_enabled(device_type: str) -> bool:
    return _enabled.get(device_type, False)


def get_dtype(device_type: str) -> Any:
    return _dtypes.get(device_type, float16)


def is_cache_enabled() -> bool:
    return _cache_enabled


def enter(device_type: str, enabled: bool, dtype: Any, cache: bool) -> tuple:
    """Open a region (``torch.autocast.__enter__``); returns what to restore."""
    global on, _nesting, _cache_enabled
    prev = (is_enabled(device_type), get_dtype(device_type), _cache_enabled)
    _enabled[device_type] = enabled
    _dtypes[device_type] = dtype
    _nesting += 1
    _cache_enabled = cache
    refresh()
    return prev


def leave(device_type: str, prev: tuple) -> None:
    """Close a region; leaving the outermost one drops the cached casts."""
    global on, _nesting, _cache_enabled
    _nesting -= 1
    if _nesting == 0:
        _cache.clear()
    _enabled[device_type], _dtypes[device_type], _cache_enabled = prev
    refresh()


def _eligible(t: Any, device_type: str) -> bool:
    return (
        isinstance(t, TensorBase)
        and t.dtype.is_floating_point
        and t.dtype is not float64
        and t.device.type == device_type
    )


def _cached_cast(t: Any, to: Any, device_type: str) -> Any:
    """torch's ``cached_cast``: float32 leaf weights cast once per region."""
    if not _eligible(t, device_type) or t.dtype is to:
        return t
    if not (
        to is _dtypes[device_type]
        and t.dtype is float32
        and t.requires_grad
        and t.is_leaf
        and not t._is_view()
        and _cache_enabled
    ):
        return t.to(to)
    hit = _cache.get(id(t))
    if hit is not None and hit[0]() is t:
        return hit[1]
    cast = t.to(to)
    _cache[id(t)] = (weakref.ref(t), cast)
    return cast


def _map(value: Any, fn: Any) -> Any:
    """``fn`` on each tensor of an argument (a tensor, or a list/tuple of them)."""
    if isinstance(value, TensorBase):
        return fn(value)
    if isinstance(value, list | tuple) and any(
        isinstance(v, TensorBase) for v in value
    ):
        return type(value)(fn(v) if isinstance(v, TensorBase) else v for v in value)
    return value


def _tensors(args: tuple, kwargs: dict) -> list:
    found: list = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, TensorBase):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(v for v in value if isinstance(v, TensorBase))
    return found


def _promoted(tensors: list, device_type: str) -> Any:
    """torch's ``promote_type``: the widest of the lower dtype and the inputs'
    (float64 inputs ignored); any other floating dtype is torch's error."""
    lower = current = _dtypes[device_type]
    for t in tensors:
        if not (isinstance(t, TensorBase) and t.dtype.is_floating_point):
            continue
        if t.device.type != device_type or t.dtype is float64:
            continue
        if current is float32 or t.dtype is float32:
            current = float32
        elif not (current is lower and t.dtype is lower):
            raise RuntimeError(
                "Unexpected floating ScalarType in at::autocast::prioritize"
            )
    return current


def _cast_all(args: tuple, kwargs: dict, to: Any, device_type: str) -> tuple:
    def cast(t: Any) -> Any:
        return _cached_cast(t, to, device_type)

    return (
        tuple(_map(a, cast) for a in args),
        {k: _map(v, cast) for k, v in kwargs.items()},
    )


def _einsum_contracts(equation: Any, operands: tuple) -> bool:
    """Whether torch's einsum multiplies matrices (bmm): an index summed away
    that two operands share."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or len(operands) < 2:
        return False
    equation = equation.replace(" ", "").replace("...", "")
    inputs, _, output = equation.partition("->")
    terms = inputs.split(",")
    if "->" not in equation:  # implicit output: the indices seen once
        joined = "".join(terms)
        output = "".join(c for c in joined if joined.count(c) == 1)
    summed = {c for term in terms for c in term} - set(output)
    return any(sum(c in term for term in terms) >= 2 for c in summed)


def _is_product(name: str, args: tuple) -> bool:
    """torch's CPU einsum, inner and chain_matmul reach bmm/mm only for these
    inputs (an inner of two vectors is a dot, one matrix chains to itself)."""
    if name == "einsum":
        return _einsum_contracts(args[0], args[1:])
    if name == "inner":
        dims = [a.dim() if isinstance(a, TensorBase) else 0 for a in args[:2]]
        return min(dims) >= 1 and max(dims) >= 2
    return len(args) >= 2  # chain_matmul


def _policy(name: str, device_type: str) -> str | None:
    for policy, names in _POLICIES.get(device_type, {}).items():
        if name in names:
            return policy
    return None


def run(name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` as torch's autocast kernel for op ``name`` runs
    it: inputs cast by the policy of the device the tensors are on, and the op
    itself run with autocast off (its inner ops are not cast again)."""
    if _profiling.on:
        return _profiling.op(name, args, _run, name, fn, *args, **kwargs)
    return _run(name, fn, *args, **kwargs)


def _run(name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    global on
    tensors = _tensors(args, kwargs)
    device_type = tensors[0].device.type if tensors else "cpu"
    policy = _policy(name, device_type) if is_enabled(device_type) else None
    if policy is not None and kwargs.get("out") is None:
        if policy == "lower_if_product" and _is_product(name, args):
            policy = "lower_composite"
        if name == "tensordot" and args[0].dtype is not args[1].dtype:
            policy = None  # torch's composite checks the dtypes before its mm
        if policy in ("lower", "lower_composite"):
            args, kwargs = _cast_all(args, kwargs, _dtypes[device_type], device_type)
        elif policy == "fp32":
            args, kwargs = _cast_all(args, kwargs, float32, device_type)
        elif policy == "promote":
            to = _promoted(tensors, device_type)
            args, kwargs = _cast_all(args, kwargs, to, device_type)
        elif policy == "fp32_set_opt_dtype":
            if kwargs.get("dtype") is None and _eligible(tensors[0], device_type):
                kwargs = {**kwargs, "dtype": float32}
        elif policy == "banned":
            raise RuntimeError(_BANNED)
    on = False
    try:
        return fn(*args, **kwargs)
    finally:
        on = _profiling.on or any(_enabled.values())  # (refresh(), inline)


def cast(name: str, *tensors: Any) -> tuple:
    """``tensors`` cast as op ``name``'s policy casts its inputs, for an op
    whose entry point is not one function (a recurrent module's forward)."""
    return _run(name, lambda *args: args, *tensors)


def off(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn`` with autocast off: torch's in-place and ``out=`` variants are not
    autocast, and compat builds them from the out-of-place ops."""
    global on
    on = False
    try:
        return fn(*args, **kwargs)
    finally:
        on = _profiling.on or any(_enabled.values())  # (refresh(), inline)
