"""The names of torch, torch.nn, torch.nn.functional and torch.optim that compat
does not offer, each refused by name with its reason: ``nn.LinearCrossEntropyLoss``
raises :class:`NotOffered` (a ``NotImplementedError``, and an ``AttributeError``,
so ``hasattr`` still answers False), and ``from torch.nn import
LinearCrossEntropyLoss`` :class:`NotOfferedImport` (an ``ImportError`` saying
why). torch's submodules that compat does not offer (``torch.fx``...) are refused
the same way as attributes, and as imports by :class:`SubmoduleRefuser` (a
``ModuleNotFoundError`` saying why)."""

from __future__ import annotations

import dis
import inspect
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any


class NotOffered(NotImplementedError, AttributeError):
    """A PyTorch name compat does not offer; the message says why."""


class NotOfferedImport(ImportError, NotImplementedError):
    """:class:`NotOffered` as ``from torch.nn import LinearCrossEntropyLoss`` raises
    it. Python turns an AttributeError there into a bare "cannot import name",
    dropping the reason, and no class can be both errors (their layouts
    conflict)."""


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


def refusal(message: str, module: str) -> Exception:
    """The error refusing a name, raised by ``module``'s ``__getattr__``:
    :class:`NotOfferedImport` where the statement asking is ``from module import
    name``, else :class:`NotOffered`."""
    here = inspect.currentframe()
    # this function's frame <- the module's __getattr__ <- the asking code
    asking = here.f_back.f_back if here and here.f_back else None
    if (
        asking is not None
        and asking.f_lasti >= 0
        and asking.f_code.co_code[asking.f_lasti] == _IMPORT_FROM
    ):
        return NotOfferedImport(message, name=module)
    return NotOffered(message)


_LOW_PRECISION = "float8 and grouped matrix products have no counterpart in compat"
_FUSED_LOSS = "torch's fused linear + cross-entropy loss is not implemented"

_QUANTIZED = (
    "quantized tensors are not supported (compat's dtypes are float, int and bool)"
)
_SPARSE = "sparse tensors are not supported: use dense tensors"
_DLPACK = "DLPack exchange is not implemented: use torch.from_numpy and Tensor.numpy()"
BUILD = "a fact of PyTorch's own build or process set-up, which compat does not have"
STREAMS = (
    "JAX schedules GPU work itself: there are no CUDA graphs, and compat's streams "
    "and events (torch.cuda.Stream, torch.cuda.Event) are the device's one queue"
)

REASONS: dict[str, dict[str, str]] = {
    "torch.nn": {
        "LinearCrossEntropyLoss": _FUSED_LOSS,
        "LinearCrossEntropyOptions": _FUSED_LOSS,
    },
    "torch.nn.functional": {
        "conv_tbc": "the time-batch-channel convolution is not implemented",
        "grouped_mm": _LOW_PRECISION,
        "boolean_dispatch": "TorchScript's helper for an op whose result depends on "
        "a flag (max_pool2d's return_indices): compat has no TorchScript compiler; "
        "call the op with the flag, or its _with_indices form",
        **dict.fromkeys(
            (
                "handle_torch_function",
                "has_torch_function",
                "has_torch_function_unary",
                "has_torch_function_variadic",
            ),
            "a helper of torch's __torch_function__ override protocol "
            "(torch.overrides), which compat's tensors do not dispatch through",
        ),
        "linear_cross_entropy": _FUSED_LOSS,
        "scaled_grouped_mm": _LOW_PRECISION,
        "scaled_mm": _LOW_PRECISION,
    },
    "torch.optim": {
        "SparseAdam": "compat has no sparse gradients",
        "swap_in_optimizer_params_and_state": "not implemented: load the state "
        "with Optimizer.load_state_dict and copy the parameters in with copy_",
    },
}


# torch.* names by kind: why each kind is refused, and the names of that kind.
_TORCH_KINDS: dict[str, str] = {
    _QUANTIZED: """choose_qparams_optimized dequantize empty_quantized
        fake_quantize_per_channel_affine fake_quantize_per_tensor_affine
        fused_moving_avg_obs_fake_quant int_repr q_per_channel_axis
        q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point
        quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic
        quantized_batch_norm quantized_gru quantized_gru_cell quantized_lstm
        quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
        quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell
        qint8 qint32 quint8 quint2x4 quint4x2 per_channel_affine
        per_channel_affine_float_qparams per_channel_symmetric per_tensor_affine
        per_tensor_symmetric""",
    _SPARSE: """dsmm hsmm hspmm
        resize_as_sparse_ saddmm smm spmm sspaddmm sparse_bsc_tensor
        sparse_bsr_tensor sparse_compressed_tensor sparse_coo_tensor
        sparse_csc_tensor sparse_csr_tensor sparse_bsc sparse_bsr sparse_coo
        sparse_csc sparse_csr""",
    "compat has no complex dtypes (its tensors are real)": """complex polar
        view_as_complex view_as_complex_copy view_as_real view_as_real_copy stft
        istft cfloat cdouble chalf complex32 complex64 complex128""",
    "compat has no such dtype (float32/64, float16, bfloat16, int8-64, uint8 "
    "and bool)": """bits16 bits1x8 bits2x4 bits4x2 bits8 float4_e2m1fn_x2
        float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu
        int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 uint6
        uint7 uint16 uint32 uint64""",
    "an internal kernel of one of PyTorch's backends (cuDNN, MIOpen, oneDNN, "
    "FBGEMM): call the public op (torch.nn.functional's)": """
        affine_grid_generator conv_tbc cudnn_affine_grid_generator
        cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu
        cudnn_convolution_relu cudnn_convolution_transpose cudnn_grid_sampler
        fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
        fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation
        fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16
        fbgemm_pack_quantized_matrix grid_sampler grid_sampler_2d grid_sampler_3d
        miopen_batch_norm miopen_convolution miopen_convolution_add_relu
        miopen_convolution_relu miopen_convolution_transpose miopen_ctc_loss
        miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d
        mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d
        mkldnn_max_pool3d mkldnn_rnn_layer embedding_renorm_ slice_inverse
        cudnn_is_acceptable""",
    "SyncBatchNorm's kernels: compat trains in one process (jaxblitz.parallel "
    "shards a batch over devices)": """batch_norm_backward_elemt
        batch_norm_backward_reduce batch_norm_elemt batch_norm_gather_stats
        batch_norm_gather_stats_with_counts batch_norm_stats
        batch_norm_update_stats""",
    "autocast's per-device switches: use torch.autocast(device_type, dtype=...), "
    "torch.is_autocast_enabled() and torch.get_autocast_dtype(device_type)": """
        autocast_decrement_nesting autocast_increment_nesting
        clear_autocast_cache get_autocast_cpu_dtype get_autocast_gpu_dtype
        get_autocast_ipu_dtype get_autocast_xla_dtype
        is_autocast_cpu_enabled is_autocast_ipu_enabled is_autocast_xla_enabled
        set_autocast_cache_enabled set_autocast_cpu_dtype
        set_autocast_cpu_enabled set_autocast_dtype set_autocast_enabled
        set_autocast_gpu_dtype set_autocast_ipu_dtype set_autocast_ipu_enabled
        set_autocast_xla_dtype set_autocast_xla_enabled""",
    "TorchScript's internals: compat has no TorchScript compiler": """fork wait
        import_ir_module import_ir_module_from_buffer merge_type_from_type_comment
        parse_ir parse_schema parse_type_comment unify_type_list""",
    "symbolic shapes belong to torch.export and torch.compile's tracer; compat's "
    "shapes are plain ints": """sym_constrain_range sym_constrain_range_for_size
        sym_float sym_fresh_size sym_int sym_ite sym_max sym_min sym_not sym_sqrt
        sym_sum""",
    "torch's control-flow operators are not implemented: use Python's if and "
    "while (torch.compile traces them as JAX traces Python)": "cond while_loop",
    "randomised low-rank methods are not implemented: use torch.linalg.svd or "
    "torch.linalg.eigh": "lobpcg pca_lowrank svd_lowrank",
    _DLPACK: "from_dlpack to_dlpack",
    BUILD: """classproperty compiled_with_cxx11_abi get_device_module
        get_file_path init_num_threads prepare_multiprocessing_environment
        profiler_allow_cudagraph_cupti_lazy_reinit_cuda12 thread_safe_generator
        has_lapack has_mkl has_openmp has_spectral USE_GLOBAL_DEPS
        USE_RTLD_GLOBAL_WITH_LIBTORCH""",
    "not implemented": """as_strided_ empty_permuted from_file hash_tensor
        segment_reduce jagged""",
}
REASONS["torch"] = {
    name: reason for reason, names in _TORCH_KINDS.items() for name in names.split()
}


# torch's submodules by kind: why each kind is refused, and the modules of that kind.
_SUBMODULE_KINDS: dict[str, str] = {
    _QUANTIZED: """torch.ao torch.quantization torch.nn.intrinsic torch.nn.qat
        torch.nn.quantizable torch.nn.quantized torch.backends.quantized""",
    _SPARSE: "torch.sparse torch.cuda.sparse torch.optim.sparse_adam",
    _DLPACK: "torch.utils.dlpack",
    STREAMS: "torch.cuda.graphs torch.cuda.streams",
    "torch.fx's symbolic tracing and graph rewriting are not offered: "
    "jax.make_jaxpr shows the program JAX traces from a function": "torch.fx",
    "torch.export's ahead-of-time graphs are not offered: jax.export serialises a "
    "jitted JAX function": "torch.export torch.nativert",
    "TorchDynamo and TorchInductor, torch.compile's tracer and code generator, are "
    "not part of compat: its torch.compile is jax.jit of the step, compiled by XLA "
    "(torch.compiler's reset, disable and is_compiling are offered)": """
        torch._dynamo torch._inductor""",
    "torch.package's pickled model archives are not offered: compat saves with "
    "torch.save and safetensors, both pickle-free": "torch.package",
    "TorchScript's and its mobile runtime's tools: compat has no TorchScript "
    "compiler": """torch.futures torch.utils.jit torch.utils.bundled_inputs
        torch.utils.mobile_optimizer torch.utils.model_dump
        torch.utils.throughput_benchmark torch.nn.cpp""",
    "C++ and CUDA extensions build against libtorch, which compat does not have: "
    "write the op in JAX (jax.custom_vjp) and wrap it in torch.autograd.Function": """
        torch.utils.cpp_extension torch.utils.hipify torch.utils.file_baton
        torch.utils.cpp_backtrace torch.cuda.jiterator""",
    "custom operators and dispatch go through PyTorch's dispatcher (ATen), which "
    "compat does not have: a torch.autograd.Function over JAX code is compat's "
    "custom op": """torch.library torch.overrides torch.utils.backend_registration
        torch.utils.flop_counter torch.utils.module_tracker torch.utils.debug_log
        torch.backends.python_native""",
    "masked and nested (jagged) tensors are not supported: pad to one shape and "
    "mask with torch.where": "torch.masked torch.nested",
    "a switch of one of PyTorch's own kernel libraries: compat's kernels are XLA's "
    "(torch.backends.cudnn and cuda's flags are offered)": """
        torch.backends.cusparselt torch.backends.kleidiai torch.backends.miopen
        torch.backends.xnnpack
        torch.backends.xeon torch.utils.mkldnn torch.cuda.tunable torch.nn.backends""",
    "a device compat does not run on (its devices are JAX's CPU, GPU and TPU)": """
        torch.mtia torch.cuda.green_contexts torch.cuda.gds""",
    "multi-GPU collectives: jaxblitz.parallel shards a batch over devices with "
    "JAX's own": "torch.cuda.comm torch.cuda.nccl",
    "CUDA profiler ranges: jax.profiler.TraceAnnotation marks a range in JAX's "
    "profiler": "torch.cuda.nvtx torch.cuda.profiler",
    "a fact of PyTorch's own build or process set-up, which compat does not have "
    "(torch.version says what compat claims)": """torch.utils.collect_env torch.numa
        torch.monitor torch.utils.viz torch.utils.show_pickle
        torch.utils.serialization torch.utils.backcompat torch.utils.deterministic
        torch.contrib""",
    "torch's typing aliases and result types are not offered: annotate with "
    "Python's own types; compat's ops return named tuples of their own": """
        torch.types torch.return_types torch.nn.common_types""",
    "typed storages are not offered: a tensor's bytes are its "
    "Tensor.untyped_storage()": "torch.storage",
    "torch's weak-reference containers keyed by tensor are internal helpers: use "
    "Python's weakref": "torch.utils.weak",
    "quasi-random sequences (SobolEngine) are not implemented": "torch.quasirandom",
    "the legacy autograd profiler's internals: torch.profiler.profile is compat's "
    "profiler": "torch.autograd.profiler_legacy torch.autograd.profiler_util",
    "an implementation module of torch's: import its names from the package "
    "(torch.einsum, torch.nn.Conv2d, torch.optim.AdamW, torch.autograd.gradcheck, "
    "torch.cuda.memory_allocated, torch.cuda.manual_seed)": """torch.functional
        torch.optim.adadelta torch.optim.adagrad torch.optim.adamax
        torch.optim.adamw torch.optim.nadam torch.optim.radam torch.optim.rmsprop
        torch.autograd.gradcheck torch.cuda.memory torch.cuda.random""",
}
SUBMODULES: dict[str, str] = {
    module: reason
    for reason, modules in _SUBMODULE_KINDS.items()
    for module in modules.split()
}


def each(names: str, reason: str) -> dict[str, str]:
    """``{name: reason}`` for each of the space-separated ``names``."""
    return dict.fromkeys(names.split(), reason)


def reasons(namespace: str, names: str) -> dict[str, str]:
    """``{name: reason}`` as :data:`REASONS` gives ``namespace``'s, for each of
    the space-separated ``names``: the refusals a module shares with another
    (``torch.nn.modules.loss``'s with ``torch.nn``'s)."""
    return {name: REASONS[namespace][name] for name in names.split()}


def refuser(
    module: str, namespace: str, refused: dict[str, str] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for compat's ``namespace`` (``torch.nn``...),
    refusing its names in :data:`REASONS` and its submodules in
    :data:`SUBMODULES`; ``refused`` adds the namespace's refused names (name:
    reason) to :data:`REASONS`."""
    reasons = REASONS.setdefault(namespace, {})
    reasons.update(refused or {})

    def __getattr__(name: str) -> Any:  # noqa: N807 -- a module's __getattr__
        # a refused name, or a refused submodule (torch.fx)
        reason = reasons.get(name) or SUBMODULES.get(f"{namespace}.{name}")
        if reason is not None:
            raise refusal(
                f"{namespace}.{name} is not supported by jaxblitz.compat: {reason}",
                module,
            )
        raise AttributeError(f"module '{module}' has no attribute '{name}'")

    return __getattr__


def refused(qualname: str, reason: str) -> Callable[..., Any]:
    """A stand-in for the function ``qualname`` (``torch.func.vmap``) that raises
    :class:`NotOffered` with ``reason`` when called: importing it works, as a
    script's imports must, and the script stops where it first uses it."""
    name = qualname.rpartition(".")[2]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotOffered(f"{qualname} is not supported by jaxblitz.compat: {reason}")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``{qualname}``: refused (not supported by jaxblitz.compat)."
    refuse.refused = True  # type: ignore[attr-defined] -- what the docs count
    return refuse


class SubmoduleRefuser:
    """An import finder for compat's name of each torch module in
    :data:`SUBMODULES` (``jaxblitz.compat.fx``): the import raises
    ``ModuleNotFoundError`` saying why, so that a script's ``except ImportError``
    fallback still runs. It sits last on ``sys.meta_path``: a module compat
    offers is found before it is asked."""

    prefix = "jaxblitz.compat"

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(cls.prefix + "."):
            return None
        torch_name = "torch" + fullname.removeprefix(cls.prefix)
        reason = SUBMODULES.get(torch_name)
        if reason is None:
            return None
        # name= is torch's module, not ours: Python's `from package import name`
        # passes over a ModuleNotFoundError whose name is the submodule's own,
        # and `from torch import fx` would lose the reason.
        raise ModuleNotFoundError(
            f"No module named '{fullname}': {torch_name} is not supported by "
            f"jaxblitz.compat: {reason}",
            name=torch_name,
        )


def install_submodule_refuser() -> None:
    """Put :class:`SubmoduleRefuser` last on ``sys.meta_path`` (once)."""
    if SubmoduleRefuser not in sys.meta_path:
        sys.meta_path.append(SubmoduleRefuser)
