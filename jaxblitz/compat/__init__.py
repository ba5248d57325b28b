# ruff: noqa: F401 -- this module re-exports torch's top-level names
"""jaxblitz.compat: the Blitz's PyTorch code runs with only its imports changed.

    import jaxblitz.compat as torch
    from jaxblitz.compat import nn, optim
    import jaxblitz.compat.nn.functional as F

A torch-style stateful facade over the functional core: a :class:`Tensor` wraps a
``jax.Array``; every op is a jitted JAX function recorded on a tape for
``backward()``; ``nn`` layers call :mod:`jaxblitz.models`; ``optim`` wraps Optax.
torch's 64-bit dtypes are real: compat runs its ops with JAX's x64 mode switched on
for the op only, so the rest of the process keeps JAX's 32-bit defaults. PyTorch
itself is never imported.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

import jax as _jax

from jaxblitz import runtime as _runtime

# Loaded first, so that `torch.tensor` is the function imported below, not this
# module (importing a submodule sets the package's attribute of its name).
from jaxblitz.compat import _not_offered
from jaxblitz.compat import tensor as _tensor_module  # noqa: F401
from jaxblitz.compat._cuda_build import (  # noqa: E402
    AcceleratorError,
    OutOfMemoryError,
)
from jaxblitz.compat._determinism import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from jaxblitz.compat._threads import (  # noqa: E402
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from jaxblitz.compat._warn_always import (  # noqa: E402
    is_warn_always_enabled,
    set_warn_always,
)
from jaxblitz.compat.autograd.anomaly_mode import (  # noqa: E402
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
)
from jaxblitz.compat.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from jaxblitz.compat.serialization import load, save
from jaxblitz.compat.tensor import (  # noqa: E402 -- a real tensor's complex parts
    Size,
    Tensor,
    adjoint,
    conj,
    detach,
    get_device,
    imag,
    is_complex,
    is_conj,
    is_floating_point,
    is_neg,
    is_nonzero,
    is_same_size,
    is_signed,
    real,
    resize_as_,
    resolve_conj,
    resolve_neg,
)
from jaxblitz.compat.tensor._dtype import (
    bfloat16,
    bool,
    can_cast,
    device,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_device,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_device,
    set_default_dtype,
    short,
    uint8,
)
from jaxblitz.compat.tensor._format import set_printoptions  # noqa: E402
from jaxblitz.compat.tensor._info import (  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    finfo,
    iinfo,
    memory_format,
    preserve_format,
)
from jaxblitz.compat.tensor._tensor_base import (  # noqa: E402
    UntypedStorage as _UntypedStorage,
)
from jaxblitz.compat.tensor._tensor_base import layout, strided  # noqa: E402
from jaxblitz.compat.tensor.creation import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    Generator,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    arange,
    as_tensor,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    seed,
    set_default_tensor_type,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)


def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj: object) -> bool:
    """``torch.is_storage``: a tensor's storage (``x.untyped_storage()``)."""
    return isinstance(obj, _UntypedStorage)


def is_inference(input: Tensor) -> bool:
    """``torch.is_inference``: made inside ``torch.inference_mode()``."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "is_inference(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input.is_inference()


def typename(obj: object) -> str:
    """``torch.typename``: a tensor's type string ('torch.FloatTensor'), else the
    object's module-qualified name, as torch writes it."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def set_flush_denormal(mode: bool) -> bool:
    """``torch.set_flush_denormal``: whether the mode is in effect. XLA's CPU
    programs flush denormal floats to zero always, so compat's ops do: True
    turns nothing on and answers True; False cannot turn flushing off and
    answers False (torch's answer where the CPU cannot set the mode)."""
    if not isinstance(mode, _builtins.bool):
        raise TypeError(
            "set_flush_denormal(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    return mode


def numel(input: Tensor) -> int:
    return input.numel()


def t(input: Tensor) -> Tensor:
    return input.t()


def clone(input: Tensor) -> Tensor:
    return input.clone()


# A second compat script starts compiled: each op's small XLA program is kept on
# disk (jaxblitz.runtime.use_compilation_cache; JAXBLITZ_XLA_CACHE="" turns it
# off), unless JAX's own cache folder is already set.
if _jax.config.jax_compilation_cache_dir is None:
    _runtime.use_compilation_cache(min_compile_secs=0)

from jaxblitz.compat import (  # noqa: E402
    accelerator,
    amp,
    autograd,
    backends,
    compiler,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    hub,
    jit,
    lazy,
    linalg,
    mps,
    multiprocessing,
    nn,
    onnx,
    optim,
    profiler,
    random,
    signal,
    special,
    testing,
    utils,
    xpu,
)
from jaxblitz.compat.amp import (  # noqa: E402 -- torch.autocast
    autocast,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
)
from jaxblitz.compat.backends._precision import (  # noqa: E402
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from jaxblitz.compat.bridge import functional  # noqa: E402
from jaxblitz.compat.compile import compile  # noqa: E402 -- torch.compile
from jaxblitz.compat.func import vmap  # noqa: E402 -- torch.vmap (refused)
from jaxblitz.compat.lazy import sync  # noqa: E402 -- run pending work (lazy mode)

# The ops' torch.* functions, each declared beside its definition (ops/_declare.py);
# these op modules load after the Tensor class, so are imported here.
from jaxblitz.compat.nn import (  # noqa: E402, F401 -- torch.* names of ATen's
    _aten_losses,
    _aten_nn,
    _aten_norms,
    _aten_rnn,
)
from jaxblitz.compat.nn.distance import cdist  # noqa: E402 -- torch.cdist
from jaxblitz.compat.ops import (  # noqa: E402
    _multinomial,
    _out,  # noqa: E402
    _random_inplace,
    _sampling,
    _scatter,
)
from jaxblitz.compat.ops._declare import declared as _declared  # noqa: E402

globals().update({name: op.fn for name, op in _declared().items()})

# torch.* names of torch.nn.functional's ops that take the same arguments there
# (the losses are left out: torch's own take reduction as an enum number)
_SAME_AS_F = (
    "adaptive_avg_pool1d",
    "avg_pool1d",
    "bilinear",
    "celu",
    "celu_",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "group_norm",
    "hardshrink",
    "layer_norm",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool3d",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "relu_",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "threshold",
    "threshold_",
)
globals().update({name: getattr(nn.functional, name) for name in _SAME_AS_F})
globals().update(
    {n: getattr(_tensor_module, n) for n in _tensor_module.INPLACE_FUNCTIONS}
)


def adaptive_max_pool1d(
    input: Tensor, output_size: int | tuple[int]
) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: the pooled values and their indices."""
    return nn.functional.adaptive_max_pool1d(input, output_size, return_indices=True)


# torch's constants (torch.pi ...): Python's own floats, as torch's are
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan
newaxis = None

# torch.__version__: the torch API version compat implements, comparing as a
# version (torch.version says what compat claims and why)
from jaxblitz.compat import torch_version, version  # noqa: E402

__version__ = torch_version.__version__


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: anomaly detection on or off from now on
    (``torch.autograd.set_detect_anomaly`` without its context)."""
    autograd.set_detect_anomaly(enabled, check_nan)


def is_vulkan_available() -> bool:
    """False: compat runs on XLA's CPU, GPU and TPU backends, none of them Vulkan."""
    return False


def is_distributed(input: Tensor) -> bool:
    """False: a compat tensor is never a distributed one (torch's legacy query)."""
    return False


# torch's out= for every op that takes it (ops/_out.py)
_out.give_out(globals())

__all__ = [name for name in dir() if not name.startswith("_")]

# The torch.* names compat does not offer, refused by name with the reason (a
# NotImplementedError that is also an AttributeError: hasattr answers False).
__getattr__ = _not_offered.refuser(__name__, "torch")
# torch's submodules that compat does not offer (torch.fx...): their imports raise
# ModuleNotFoundError saying why.
_not_offered.install_submodule_refuser()
