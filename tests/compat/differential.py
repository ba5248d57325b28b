"""compat against real PyTorch on PyTorch's own test inputs (OpInfo, ModuleInfo,
OptimizerInfo from ``torch.testing._internal``).

Run: python -m tests.compat.differential --write     # regenerate the page
     python -m tests.compat.differential --op add    # one op, failing samples shown

Every op, module and optimizer that compat offers (the name exists in
``jaxblitz.compat``, on its ``Tensor``, in ``compat.nn.functional``, ``compat.nn``
or ``compat.optim``) runs the samples PyTorch ships for it (at most ``BUDGET`` per
dtype), on both libraries, with the inputs copied through NumPy. Each sample ends
as one :class:`Outcome`:

- ``passed``: the same values (torch.testing's tolerance for the dtype), dtypes,
  shapes, gradients (for a fixed random cotangent), error type, and aliasing;
- ``not supported``: compat raised ``NotImplementedError`` (its message says why);
- ``silent``: anything else, a silent difference: what differs is in ``detail``;
- ``skipped``: the sample is not meaningful here (the reason is recorded).

Aliasing (does the output share memory with the input) is compared where compat
tensors have ``untyped_storage()``; until then it counts as unknown.

Each op's first float32 sample (every variant: function, method, in-place) also
runs with compat in lazy mode (:mod:`jaxblitz.compat.lazy`: recorded, then run
as one program when its result is read); a sample that passes eagerly but not
lazily is a silent difference, its detail prefixed "lazy mode:". The whole
suite runs lazily with ``JAXBLITZ_COMPAT_LAZY=1``.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import contextlib
import functools
import math
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

import jaxblitz.compat as compat
import jaxblitz.compat.nn.functional as compat_F

PAGE = Path(__file__).resolve().parents[2] / "docs" / "compat_coverage.md"
# Samples per op (module) and dtype, spread evenly over what PyTorch ships: all of
# them take many CPU-minutes, nearly all of it XLA compiling each new shape (a
# gradient compiles twice). float32 runs every variant (function, method, in-place,
# aliases) and gradients, the other dtypes the first variant's values only.
# ``--op NAME --all`` runs everything for one op.
BUDGET = {torch.float32: 8, torch.float64: 3, torch.int64: 4, torch.bool: 3}
DTYPES = tuple(BUDGET)
PASSED, UNSUPPORTED, SILENT, SKIPPED = "passed", "not supported", "silent", "skipped"
# torch.testing's defaults (rtol 1.3e-6 for float32) are for ATen against itself;
# XLA sums and fuses in another order, and a gradient like asin's near 1 amplifies
# that: float32 gets 1e-4 relative (a wrong formula is off by far more).
TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}}
# Where float32 values or gradients are not close even so, the sample is run again
# in float64 in torch, and compat passes when its float32 result is no farther
# from that (summed absolute difference) than torch's own float32 result is: how
# PyTorch tests its own alternative implementations of its ops (test_ops.py,
# TestCommon._ref_test_helper, for the Python references: "Test passed because
# the reference was more accurate than the torch operator"). An element that
# cancels to about 0 (a conv's output, a gradient that is 0 in exact arithmetic)
# keeps each library's rounding error, which no fixed atol bounds; a wrong formula
# is far from the float64 result, and stays caught.
PRECISE = torch.float64
# float64 has no more precise torch: where its OpInfo has a NumPy/SciPy reference
# (``ref``), a float64 sample is measured against that the same way.
_MEASURED = (torch.float32, torch.float64)
# Ops whose outputs torch defines only up to a gauge: LAPACK's singular vectors'
# signs are its own choice (torch's CPU LAPACK, MKL, picks other signs than JAX's
# for a wide matrix). PyTorch's own tests compare them through each sample's
# ``output_process_fn_grad`` (``sample_inputs_svd`` in torch's
# ``opinfo/definitions/linalg.py``: ``U.abs()``, ``S``, ``(S, Vh.abs())`` or
# ``(U @ Vh, S)`` of the first min(m, n) vectors), values and gradients both;
# so does this comparison. An eigenvector's sign likewise (``linalg.eigh``:
# ``sample_inputs_linalg_eigh`` compares the eigenvalues and ``abs`` of the
# eigenvectors).
GAUGE = {"svd", "linalg.svd", "linalg.eigh"}
# Ops whose values are undefined (uninitialised memory): shapes and dtypes only.
UNDEFINED_VALUES = {
    "empty",
    "empty_like",
    "new_empty",
    "empty_strided",
    "new_empty_strided",
}


@dataclass(frozen=True)
class Outcome:
    row: str  # the OpInfo's name (".variant" added), "nn.Conv2d", "optim.SGD"
    case: str  # which variant, dtype and sample, for the reader of a failure
    status: str  # PASSED, UNSUPPORTED, SILENT or SKIPPED
    detail: str = ""  # the NotImplementedError's message, the difference, the reason
    aliasing: str = "n/a"  # "checked", "unknown" (compat has no storages yet), "n/a"


class Unsupported(Exception):
    """A torch argument that compat has no counterpart for (torch.complex64 ...)."""


class NotConvertible(Exception):
    """A torch value NumPy cannot carry over: the sample is skipped."""


class NotOffered(Exception):
    """This variant calls a name compat does not have: it is not counted."""


# -- torch -> compat -----------------------------------------------------------------


def _dtype(d: torch.dtype):
    name = str(d).removeprefix("torch.")
    if not isinstance(getattr(compat, name, None), compat.dtype):
        raise Unsupported(f"compat has no torch.{name}")
    return getattr(compat, name)


def to_compat(obj: Any, memo: dict) -> Any:
    """The compat twin of a torch value; ``memo`` maps id(torch) -> compat."""
    if isinstance(obj, torch.nn.parameter.UninitializedTensorMixin):
        # a lazy module's tensor before its first call: no values to carry
        lazy = isinstance(obj, torch.nn.Parameter)
        kind = (
            compat.nn.UninitializedParameter if lazy else compat.nn.UninitializedBuffer
        )
        return kind(obj.requires_grad, dtype=_dtype(obj.dtype))
    if isinstance(obj, torch.Tensor):
        if id(obj) in memo:
            return memo[id(obj)]
        t = obj.detach()
        if t.is_complex():
            raise Unsupported(f"compat has no {t.dtype}")
        if t.device.type == "meta":  # error inputs: a tensor with no values
            raise NotConvertible("a tensor on the meta device")
        if t.dim() > 32:  # NumPy's limit; error inputs have 65 dimensions
            raise NotConvertible(f"a {t.dim()}-dimensional tensor")
        low = t.dtype in (torch.bfloat16, torch.float16)
        # from a copy: .numpy() of torch's own tensor would make its storage
        # unresizable, and torch would then refuse to resize it as an out=
        array = (t.float() if low else t).detach().clone().numpy()
        out = compat.tensor(array, dtype=_dtype(t.dtype))
        if obj.requires_grad:
            out.requires_grad_(True)
        if isinstance(obj, torch.nn.Parameter):
            out = compat.nn.Parameter(out, obj.requires_grad)
        memo[id(obj)] = out
        return out
    if isinstance(obj, torch.dtype):
        return _dtype(obj)
    if isinstance(obj, torch.device):
        return compat.device(str(obj))
    if isinstance(obj, torch.Size):
        return compat.Size(obj)
    if isinstance(obj, tuple | list):
        items = [to_compat(v, memo) for v in obj]
        return type(obj)(items) if type(obj) in (tuple, list) else tuple(items)
    if isinstance(obj, dict):
        return {k: to_compat(v, memo) for k, v in obj.items()}
    if obj is None or isinstance(obj, bool | int | float | str | slice | type(...)):
        return obj
    if isinstance(obj, torch.Generator):
        return compat.Generator().manual_seed(obj.initial_seed())
    if isinstance(obj, torch.nn.Module) and not any(True for _ in obj.parameters()):
        return _stateless_module(obj, memo)
    name = getattr(obj, "__name__", None)
    if name and getattr(torch.nn.functional, name, None) is obj:
        # an activation passed as an argument (a Transformer layer's F.gelu)
        if not hasattr(compat.nn.functional, name):
            raise Unsupported(f"compat has no torch.nn.functional.{name}")
        return getattr(compat.nn.functional, name)
    if isinstance(obj, torch.memory_format | torch.layout):
        name = str(obj).removeprefix("torch.")
        if not hasattr(compat, name):
            raise Unsupported(f"compat has no torch.{name}")
        return getattr(compat, name)
    raise Unsupported(f"no compat counterpart for {type(obj).__name__}")


def _stateless_module(obj: torch.nn.Module, memo: dict) -> Any:
    """compat's module of the same class and settings (one without parameters
    or buffers passed as an argument: a loss's ``distance_function``)."""
    cls = getattr(compat.nn, type(obj).__name__, None)
    if cls is None or any(True for _ in obj.buffers()) or obj._modules:
        raise Unsupported(f"no compat counterpart for {type(obj).__name__}")
    twin = cls.__new__(cls)
    compat.nn.Module.__init__(twin)
    for key, value in vars(obj).items():
        if not key.startswith("_"):
            setattr(twin, key, to_compat(value, memo))
    return twin


def _nest_map(fn, obj: Any) -> Any:
    """``fn`` of each leaf of a nest of tuples, lists and dicts."""
    if isinstance(obj, tuple | list) and not isinstance(obj, torch.Size):
        items = [_nest_map(fn, v) for v in obj]
        return type(obj)(items) if type(obj) in (tuple, list) else tuple(items)
    if isinstance(obj, dict):
        return {k: _nest_map(fn, v) for k, v in obj.items()}
    return fn(obj)


def _leaf_copy(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone().requires_grad_(obj.requires_grad)
    return obj


def fresh(obj: Any) -> Any:
    """Leaf copies of every torch tensor (samples may hold non-leaf views)."""
    return _nest_map(_leaf_copy, obj)


def tensors(obj: Any) -> list:
    """Every tensor in a nest of tuples, lists and dicts, in order."""
    if isinstance(obj, torch.Tensor | compat.Tensor):
        return [obj]
    if isinstance(obj, tuple | list):
        return [t for v in obj for t in tensors(v)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in tensors(v)]
    return []


def describe(obj: Any) -> str:
    """A short, deterministic picture of a sample's arguments."""
    if isinstance(obj, torch.Tensor):
        rg = ", requires_grad" if obj.requires_grad else ""
        dt = str(obj.dtype).removeprefix("torch.")
        return f"Tensor{list(obj.shape)}:{dt}{rg}"
    if isinstance(obj, tuple | list):
        inner = ", ".join(describe(v) for v in obj)
        return f"({inner})" if isinstance(obj, tuple) else f"[{inner}]"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k}={describe(v)}" for k, v in obj.items()) + "}"
    return repr(obj)


# -- comparing -----------------------------------------------------------------------


def _name(d: Any) -> str:
    return str(d).removeprefix("torch.")


def _as_torch(t: compat.Tensor, like: torch.Tensor) -> torch.Tensor:
    array = np.asarray(t.detach().numpy())
    if array.dtype.kind == "V" or str(array.dtype) == "bfloat16":
        array = array.astype(np.float32)
    return torch.from_numpy(np.array(array, order="C")).to(like.dtype)


def _distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """test_ops.py's ``_distance``: the summed absolute difference, nan == nan."""
    a, b = a.detach().double(), b.detach().double()
    same = (a == b) | (a.isnan() & b.isnan())
    return float(torch.where(same, 0, (a - b).abs()).sum())


def _more_accurate(ref: torch.Tensor, got: torch.Tensor, precise: Any) -> str | None:
    """None where compat's ``got`` is no farther from the more ``precise``
    result than torch's ``ref`` is, else what was measured."""
    if not isinstance(precise, torch.Tensor) or precise.shape != ref.shape:
        return "no float64 result to measure against"
    ours, theirs = _distance(got, precise), _distance(ref, precise)
    if ours <= theirs:
        return None
    return f"compat is {ours:.3g} from the float64 result, torch {theirs:.3g}"


def compare(
    ref: Any, got: Any, where: str = "output", precise: Any = None
) -> str | None:
    """What differs between torch's ``ref`` and compat's ``got`` (None: nothing).

    ``precise``: the same op in float64 (a nest like ``ref``'s), for float32
    values that are not close: see ``PRECISE``.
    """
    if isinstance(ref, torch.Tensor):
        if not isinstance(got, compat.Tensor):
            return f"{where}: torch gives a Tensor, compat a {type(got).__name__}"
        if _name(ref.dtype) != _name(got.dtype):
            return f"{where}: dtype torch.{_name(ref.dtype)} vs compat {got.dtype}"
        if tuple(ref.shape) != tuple(got.shape):
            return f"{where}: shape {list(ref.shape)} vs compat {list(got.shape)}"
        try:
            torch.testing.assert_close(
                _as_torch(got, ref),
                ref.detach(),
                equal_nan=True,
                check_stride=False,
                **TOLERANCE.get(ref.dtype, {}),
            )
        except AssertionError as e:
            measured = precise is not None and ref.dtype in _MEASURED
            if measured:
                far = _more_accurate(ref, _as_torch(got, ref), precise)
                if far is None:
                    return None
            lines = [x.strip() for x in str(e).splitlines() if x.strip()]
            if measured:
                lines = lines[:3] + [far]
            return f"{where}: values differ ({'; '.join(lines[:4])})"
        return None
    if isinstance(ref, tuple | list) and not isinstance(ref, torch.Size):
        if not isinstance(got, tuple | list) or len(got) != len(ref):
            return f"{where}: torch gives {describe(ref)}, compat {type(got).__name__}"
        fields = getattr(type(ref), "_fields", None)
        if fields and getattr(type(got), "_fields", None) != fields:
            return f"{where}: torch's named tuple has fields {fields}, compat's none"
        nested = isinstance(precise, tuple | list) and len(precise) == len(ref)
        for i, (r, g) in enumerate(zip(ref, got, strict=True)):
            why = compare(r, g, f"{where}[{i}]", precise[i] if nested else None)
            if why:
                return why
        return None
    if isinstance(ref, torch.Size):
        ok = isinstance(got, tuple) and tuple(got) == tuple(ref)
        return None if ok else f"{where}: {ref} vs compat {got!r}"
    if isinstance(ref, torch.dtype):
        return None if _name(ref) == _name(got) else f"{where}: {ref} vs {got!r}"
    if isinstance(ref, bool | int | float) or ref is None:
        if type(ref) is not type(got):
            return f"{where}: torch gives {ref!r}, compat {got!r}"
        same = (
            ref == got
            or (
                isinstance(ref, float)
                and math.isclose(ref, got, rel_tol=1e-5, abs_tol=1e-6)
            )
            or (isinstance(ref, float) and math.isnan(ref) and math.isnan(got))
        )
        return None if same else f"{where}: torch gives {ref!r}, compat {got!r}"
    return f"{where}: cannot compare a torch {type(ref).__name__}"


def _builtin_base(kind: type) -> type:
    """The builtin exception torch's error type derives from (_LinAlgError ...)."""
    return next(k for k in kind.__mro__ if k.__module__ == "builtins")


def _message(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else '(no message)'}"


def _shares_storage(out: Any, inp: Any) -> bool | None:
    """Does ``out`` share memory with ``inp``? None where it cannot be told."""
    if not (hasattr(out, "untyped_storage") and hasattr(inp, "untyped_storage")):
        return None
    if not inp.numel():
        return None  # empty storages all sit at address 0
    return out.untyped_storage().data_ptr() == inp.untyped_storage().data_ptr()


# -- running one sample --------------------------------------------------------------


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _call(fn, args, kwargs, seed: int):
    # The CPU generator only: torch.manual_seed also seeds (lazily) every other
    # backend, and records a stack trace each time to do so.
    torch.default_generator.manual_seed(seed)
    compat.manual_seed(seed)
    try:
        with _quiet():
            return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 -- every error is an outcome
        return None, e


def _cotangent(t: torch.Tensor, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(tuple(t.shape)).astype(np.float64)


def _grad_outputs(out: Any) -> list:
    return [t for t in tensors(out) if t.dtype.is_floating_point and t.requires_grad]


def _backward(outputs: list, cotangents: list, backward) -> None:
    for i, (o, c) in enumerate(zip(outputs, cotangents, strict=True)):
        backward(o, c, retain_graph=i < len(outputs) - 1)


def _torch_backward(o, c, retain_graph):
    o.backward(torch.from_numpy(c).to(o.dtype), retain_graph=retain_graph)


def _compat_backward(o, c, retain_graph):
    o.backward(compat.tensor(c).to(o.dtype), retain_graph=retain_graph)


@dataclass
class Case:
    """One call: torch's and compat's callables on one sample's arguments."""

    torch_fn: Any
    compat_fn: Any
    args: tuple
    kwargs: dict
    grads: bool = False  # compare gradients of the inputs
    random: bool | None = None  # None: find out (two seeds)
    inplace: bool = False  # the output must be the input itself
    error: type | None = None  # the error torch's sample says it raises
    # what of the output is compared (GAUGE: the sample's output_process_fn_grad)
    process: Any = None
    # (what, torch's grad, compat's grad) of leaves the arguments do not hold
    param_grads: Any = None
    # the OpInfo's NumPy/SciPy reference (``op.ref``), for float64 samples
    reference: Any = None


def run_case(case: Case, seed: int = 0) -> tuple[str, str, str]:
    """(status, detail, aliasing) for one case."""
    t_args, t_kwargs = fresh(case.args), fresh(case.kwargs)
    if case.inplace:  # torch refuses in-place ops on leaves that require grad
        for t in tensors((t_args, t_kwargs)):
            t.requires_grad_(False)
    try:
        memo: dict = {}
        c_args, c_kwargs = to_compat(t_args, memo), to_compat(t_kwargs, memo)
    except Unsupported as e:
        return UNSUPPORTED, f"argument: {e}", "n/a"
    except NotConvertible as e:
        return SKIPPED, f"NumPy cannot carry {e}", "n/a"
    got, c_err = _call(case.compat_fn, c_args, c_kwargs, seed)
    if isinstance(c_err, AttributeError) and _missing_torch_name(c_err):
        raise NotOffered(str(c_err))
    if isinstance(c_err, NotImplementedError):  # whatever torch does
        return _unsupported(c_err)
    ref, t_err = _call(case.torch_fn, t_args, t_kwargs, seed)
    if case.error is not None and t_err is None:
        return SKIPPED, "torch does not raise here on CPU", "n/a"
    if t_err is not None:
        base = _builtin_base(type(t_err))
        if c_err is None:
            return SILENT, f"torch raises {_message(t_err)}; compat returns", "n/a"
        if not isinstance(c_err, base):
            why = f"torch raises {_message(t_err)}; compat raises {_message(c_err)}"
            return SILENT, why, "n/a"
        return PASSED, "", "n/a"
    if c_err is not None:
        return SILENT, f"compat raises {_message(c_err)}", "n/a"
    random = case.random if case.random is not None else _seeded(case.torch_fn)
    if random is None:  # a random op draws differently under another seed
        with torch.no_grad():
            again, err = _call(case.torch_fn, fresh(case.args), case.kwargs, seed + 1)
        random = err is None and compare(ref, to_compat(again, {})) is not None
    if case.process is not None:
        ref, got = case.process(ref), case.process(got)
    precise = functools.cache(functools.partial(_precise, case, seed))
    why = _compare_outputs(ref, got, random, precise)
    if why:
        return SILENT, why, "n/a"
    why, aliasing = _compare_aliasing(case, t_args, c_args, ref, got)
    if why:
        return SILENT, why, aliasing
    if case.grads and not random:
        found = _compare_grads(case, ref, got, t_args, t_kwargs, memo, seed, precise)
        if found:
            unsupported, why = found
            return (UNSUPPORTED if unsupported else SILENT), why, aliasing
    return PASSED, "", aliasing


def _also_lazily(case: Case, seed: int) -> tuple[str, str]:
    """A passed case run again with compat lazy: (PASSED, "") or why it differs."""
    if compat.lazy.is_lazy():  # the whole run is lazy already
        return PASSED, ""
    compat.lazy.set_lazy(True)
    try:
        status, detail, _ = run_case(case, seed=seed)
    finally:
        compat.lazy.set_lazy(False)
    if status == PASSED:
        return PASSED, ""
    return SILENT, f"lazy mode: {status}: {detail}"


def _missing_torch_name(e: AttributeError) -> bool:
    """Is this compat lacking a torch name (``torch.zero_``, ``x.bfloat16()``)?"""
    obj = e.obj
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith("jaxblitz.compat")
    if obj is compat.Tensor or isinstance(obj, compat.Tensor):
        return hasattr(torch.Tensor, e.name) and not hasattr(compat.Tensor, e.name)
    return False


def _seeded(fn: Any) -> bool | None:
    """OpInfo wraps its random ops in ``wrapper_set_seed`` (a fixed seed)."""
    code = getattr(fn, "__code__", None)
    return True if code and "wrapper_set_seed" in code.co_names else None


def _unsupported(e: NotImplementedError) -> tuple[str, str, str]:
    text = str(e).strip()
    if not text:
        return SILENT, "compat raises NotImplementedError without a message", "n/a"
    return UNSUPPORTED, text.splitlines()[0], "n/a"


def _to_precise(obj: Any) -> Any:
    """A float32 tensor (or the dtype argument) in ``PRECISE``."""
    if isinstance(obj, torch.Tensor) and obj.dtype == torch.float32:
        return obj.detach().to(PRECISE).requires_grad_(obj.requires_grad)
    return PRECISE if obj is torch.float32 else obj


def _reference(op: Any) -> Any:
    """The OpInfo's NumPy/SciPy reference (``ref``), where it has one."""
    ref = getattr(op, "ref", None)
    return ref if callable(ref) else None


def _referenced(case: Case) -> Any:
    """The reference's output for a float64 sample of tensors and numbers
    (None where it takes anything else or fails)."""
    args = case.args
    if case.kwargs or not all(isinstance(a, torch.Tensor | int | float) for a in args):
        return None
    arrays = [a.detach().numpy() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            out = case.reference(*arrays)
    except Exception:  # noqa: BLE001 -- no reference for this sample
        return None
    return torch.as_tensor(np.asarray(out, dtype=np.float64))


def _precise(case: Case, seed: int) -> tuple[Any, list]:
    """torch's output, and its inputs' gradients (for the cotangents the
    comparison uses), with the sample in ``PRECISE``; (None, []) where torch
    cannot run it so. A float64 sample has no more precise torch: its OpInfo's
    NumPy/SciPy reference answers for the values, as in PyTorch's own
    ``test_reference_numerics``."""
    if case.reference is not None:
        return _referenced(case), []
    args, kwargs = _nest_map(_to_precise, fresh((case.args, case.kwargs)))
    out, err = _call(case.torch_fn, args, kwargs, seed)
    if err is not None:
        return None, []
    if case.process is not None:
        out = case.process(out)
    outs = _grad_outputs(out)
    if case.grads and outs:
        cots = [_cotangent(t, seed + i) for i, t in enumerate(outs)]
        try:
            _backward(outs, cots, _torch_backward)
        except RuntimeError:
            return out, []
    return out, [t.grad for t in tensors((args, kwargs)) if t.requires_grad]


def _compare_outputs(
    ref: Any, got: Any, random: bool, precise: Any = None
) -> str | None:
    if random:  # only what does not depend on the draw
        refs, gots = tensors(ref), tensors(got)
        if len(refs) != len(gots) or type(got) is not type(ref) and not refs:
            return f"output: torch gives {describe(ref)}, compat {got!r}"
        for r, g in zip(refs, gots, strict=True):
            if _name(r.dtype) != _name(g.dtype) or tuple(r.shape) != tuple(g.shape):
                return f"output: torch {describe(r)} vs compat {g.dtype} {g.shape}"
        return None
    why = compare(ref, got)
    if why and precise is not None:
        why = compare(ref, got, precise=precise()[0])
    if why:
        return why
    for i, (r, g) in enumerate(zip(tensors(ref), tensors(got), strict=True)):
        if r.requires_grad != g.requires_grad:
            return f"output[{i}].requires_grad: torch {r.requires_grad}, compat not"
    return None


def _compare_aliasing(case, t_args, c_args, ref, got) -> tuple[str | None, str]:
    if not t_args or not isinstance(t_args[0], torch.Tensor):
        return None, "n/a"
    t_in, c_in = t_args[0], c_args[0]
    outs = tensors(ref)
    if not outs:
        return None, "n/a"
    t_out, c_out = outs[0], tensors(got)[0]
    if (t_out is t_in) != (c_out is c_in):
        said = "returns its input" if t_out is t_in else "returns a new tensor"
        return f"identity: torch {said}, compat does not", "checked"
    t_shares, c_shares = _shares_storage(t_out, t_in), _shares_storage(c_out, c_in)
    if t_shares is None:
        return None, "n/a"
    if c_shares is None:
        return None, "unknown"
    if t_shares != c_shares:
        said = "shares memory with" if t_shares else "does not share memory with"
        return f"aliasing: torch's output {said} the input, compat's not", "checked"
    return None, "checked"


def _compare_grads(case, ref, got, t_args, t_kwargs, memo, seed, precise=None):
    """None, or (is_unsupported, what differs)."""
    t_outs, c_outs = _grad_outputs(ref), _grad_outputs(got)
    if not t_outs:
        return None
    cots = [_cotangent(t, seed + i) for i, t in enumerate(t_outs)]
    _backward(t_outs, cots, _torch_backward)
    try:
        with _quiet():
            _backward(c_outs, cots, _compat_backward)
    except NotImplementedError as e:
        return (True, f"backward: {_unsupported(e)[1]}")
    except Exception as e:  # noqa: BLE001
        return (False, f"backward: compat raises {_message(e)}")
    leaves = [t for t in tensors((t_args, t_kwargs)) if t.requires_grad]
    pairs = [
        (f"grad of input {i}", t.grad, memo[id(t)].grad) for i, t in enumerate(leaves)
    ]
    pairs += case.param_grads() if case.param_grads else []
    for what, t_grad, c_grad in pairs:
        if (t_grad is None) != (c_grad is None):
            said = "None" if t_grad is None else "a tensor"
            return (False, f"{what}: torch's is {said}, compat's not")
        if t_grad is not None:
            why = compare(t_grad, c_grad, what)
            if why and precise is not None and what.startswith("grad of input "):
                grads = precise()[1]
                i = int(what.removeprefix("grad of input "))
                if i < len(grads):
                    why = compare(t_grad, c_grad, what, precise=grads[i])
            if why:
                return (False, why)
    return None


# -- OpInfo --------------------------------------------------------------------------


def _resolve(root: Any, path: str) -> Any:
    for part in path.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def _compat_wrapper_set_seed(op, *args, **kwargs):
    compat.manual_seed(42)
    return op(*args, **kwargs)


def _rebound(fn: types.FunctionType) -> types.FunctionType:
    """OpInfo's lambda (``lambda x: torch.where(...)``) with ``torch`` -> compat."""
    scope = dict(fn.__globals__)
    scope.update(torch=compat, F=compat_F, wrapper_set_seed=_compat_wrapper_set_seed)
    return types.FunctionType(
        fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__
    )


def _method(name: str):
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)

    return call


def _is_method(fn: Any) -> bool:
    qualname = getattr(fn, "__qualname__", "") or ""
    return qualname.startswith(("TensorBase.", "Tensor."))


def _compat_function(name: str, fn: Any) -> Any:
    """compat's counterpart of one of an OpInfo's callables, or None."""
    if fn is None:
        return None
    if isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>":
        return _rebound(fn)
    if _is_method(fn):
        method = fn.__qualname__.split(".", 1)[1]
        return _method(method) if hasattr(compat.Tensor, method) else None
    return _resolve(compat, name)


def op_variants(op) -> list[tuple[str, Any, Any]]:
    """(label, torch callable, compat callable) for each variant compat offers."""
    found = []
    function = _compat_function(op.name, op.op)
    if function is not None:
        found.append(("function", op.op, function))
    for label, fn in (("method", op.method_variant), ("inplace", op.inplace_variant)):
        if fn is None:
            continue
        if isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>":
            found.append((label, fn, _rebound(fn)))
            continue
        if isinstance(fn, functools.partial):  # F.mish with inplace=True
            c = getattr(compat_F, fn.func.__name__, None)
            if c is not None:
                bound = functools.partial(c, *fn.args, **fn.keywords)
                found.append((label, fn, bound))
            continue
        name = fn.__name__
        if hasattr(compat.Tensor, name):
            found.append((label, fn, _method(name)))
    for alias in op.aliases:
        c = _resolve(compat, alias.name)
        if c is not None:
            found.append((f"torch.{alias.name}", alias.op, c))
    return found


def _offered(op) -> bool:
    name = op.name.split(".")[-1] if op.name.startswith("nn.functional.") else None
    if name is not None:
        return hasattr(compat_F, name)
    if hasattr(compat, op.name) or hasattr(compat.Tensor, op.name):
        return True
    if "." in op.name and _resolve(compat, op.name) is not None:  # linalg.det
        return True
    return any(_resolve(compat, a.name) is not None for a in op.aliases)


def row_name(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def offered_ops() -> list:
    from torch.testing._internal.common_methods_invocations import op_db

    return [op for op in op_db if _offered(op) and op_variants(op)]


def spread(items: list, n: int | None) -> list[tuple[int, Any]]:
    """At most ``n`` of ``items`` (with their indices), evenly spaced, ends kept."""
    if n is None or len(items) <= n:
        return list(enumerate(items))
    picked = sorted({round(k * (len(items) - 1) / (n - 1)) for k in range(n)})
    return [(i, items[i]) for i in picked]


def run_op(op, everything: bool = False) -> list[Outcome]:
    row = row_name(op)
    variants = op_variants(op)
    out: list[Outcome] = []
    dropped: set[str] = set()
    undefined = op.name in UNDEFINED_VALUES
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        grads = op.supports_autograd and (
            dtype == torch.float32 or (everything and dtype.is_floating_point)
        )
        torch.default_generator.manual_seed(0)  # once, not per sample (_call)
        with _quiet():  # the generator itself: op.sample_inputs walks the stack
            samples = list(op.sample_inputs_func(op, "cpu", dtype, grads))
        first_only = dtype != torch.float32 and not everything
        for i, sample in spread(samples, None if everything else BUDGET[dtype]):
            for label, t_fn, c_fn in variants[:1] if first_only else variants:
                if label in dropped:
                    continue
                case = Case(
                    t_fn,
                    c_fn,
                    (sample.input, *sample.args),
                    dict(sample.kwargs),
                    grads=grads and label == variants[0][0],
                    random=True if undefined else None,
                    inplace=label == "inplace",
                    process=(
                        sample.output_process_fn_grad if op.name in GAUGE else None
                    ),
                    reference=_reference(op) if dtype == torch.float64 else None,
                )
                name = f"{label} {_name(dtype)} #{i}: {describe(case.args)}"
                if case.kwargs:
                    name += f" {describe(case.kwargs)}"
                why = _unspecified(op.name, sample)
                if why:
                    out.append(Outcome(row, name, SKIPPED, why))
                    continue
                try:
                    status, detail, aliasing = run_case(case, seed=i)
                except NotOffered:
                    dropped.add(label)
                    out = [o for o in out if not o.case.startswith(label + " ")]
                    continue
                if status == PASSED and dtype == torch.float32 and i == 0:
                    status, detail = _also_lazily(case, i)
                out.append(Outcome(row, name, status, detail, aliasing))
    out += _run_error_inputs(op, row, [v for v in variants if v[0] not in dropped])
    return out


def _unspecified(name: str, sample) -> str | None:
    """Why torch's result for this sample is not a specification (or None)."""
    if name in ("sort", "argsort") and not sample.kwargs.get("stable"):
        t = sample.input
        if isinstance(t, torch.Tensor) and t.numel() > t.unique().numel():
            return "ties in an unstable sort: torch leaves their order unspecified"
    if name in ("topk", "kthvalue", "mode"):  # which of equal elements is unspecified
        t = sample.input
        if isinstance(t, torch.Tensor) and t.numel() > t.unique().numel():
            return f"ties in {name}: torch leaves which index it returns unspecified"
    return None


def _run_error_inputs(op, row: str, variants: list) -> list[Outcome]:
    if not variants or op.error_inputs_func is None:
        return []
    label, t_fn, c_fn = variants[0]
    torch.default_generator.manual_seed(0)
    try:
        with _quiet():
            errors = list(op.error_inputs_func(op, "cpu"))
    except Exception:  # noqa: BLE001 -- some need CUDA or more arguments
        return []
    out = []
    for i, e in spread(errors, BUDGET[torch.float32]):
        s = e.sample_input
        if _is_method(t_fn) and not isinstance(s.input, torch.Tensor):
            why = "a Tensor method called on a non-Tensor (torch's C check)"
            out.append(Outcome(row, f"{label} error #{i}", SKIPPED, why))
            continue
        case = Case(t_fn, c_fn, (s.input, *s.args), dict(s.kwargs), error=e.error_type)
        name = f"{label} error #{i}: {describe(case.args)} {describe(case.kwargs)}"
        try:
            status, detail, aliasing = run_case(case, seed=i)
        except NotOffered:
            return []
        out.append(Outcome(row, name, status, detail, aliasing))
    return out


# -- ModuleInfo ----------------------------------------------------------------------


def offered_modules() -> list:
    from torch.testing._internal.common_modules import module_db

    return [m for m in module_db if hasattr(compat.nn, m.module_cls.__name__)]


def run_module(info, everything: bool = False) -> list[Outcome]:
    cls = info.module_cls
    row = f"nn.{cls.__name__}"
    c_cls = getattr(compat.nn, cls.__name__)
    out = []
    for dtype in (torch.float32, torch.float64):
        if dtype not in info.dtypes:
            continue
        grads = dtype == torch.float32 or everything
        torch.default_generator.manual_seed(0)
        with _quiet():
            inputs = info.module_inputs_func(
                info, device="cpu", dtype=dtype, requires_grad=grads, training=True
            )
        inputs = [mi for mi in inputs if mi.forward_input is not None]
        for i, mi in spread(inputs, None if everything else BUDGET[dtype]):
            if mi.forward_input is None:
                continue
            ctor = mi.constructor_input
            name = (
                f"{_name(dtype)} #{i}: {cls.__name__}{describe(ctor.args)} "
                f"{describe(ctor.kwargs)} forward{describe(mi.forward_input.args)}"
            )
            found = _run_module_case(cls, c_cls, mi, dtype, i, grads)
            out.append(Outcome(row, name, *found))
    out += _run_module_errors(info, row, cls, c_cls)
    return out


def _run_module_case(cls, c_cls, mi, dtype, seed, grads):
    """Build both modules, give compat torch's parameters, compare a forward."""
    args, kwargs = mi.constructor_input.args, mi.constructor_input.kwargs
    torch.default_generator.manual_seed(seed)
    try:
        with _quiet():
            t_module = cls(*args, **kwargs).to(dtype).train()
            if isinstance(t_module, torch.nn.modules.lazy.LazyModuleMixin):
                # torch draws a lazy module's weights at its first call: one call
                # first, so that compat's copy gets them (it materialises from them)
                with torch.no_grad():
                    fwd = mi.forward_input
                    t_module(*fresh(fwd.args), **fresh(fwd.kwargs))
        c_args, c_kwargs = to_compat(args, {}), to_compat(kwargs, {})
        state = to_compat(dict(t_module.state_dict()), {})
    except Unsupported as e:
        return UNSUPPORTED, f"argument: {e}", "n/a"
    built = {}

    def c_fn(*a, **k):
        m = c_cls(*c_args, **c_kwargs).to(_dtype(dtype)).train()
        m.load_state_dict(state)
        built["module"] = m
        return m(*a, **k)

    def param_grads():
        c_params = dict(built["module"].named_parameters())
        return [
            (f"grad of {n}", p.grad, c_params[n].grad)
            for n, p in t_module.named_parameters()
        ]

    case = Case(
        t_module,
        c_fn,
        tuple(mi.forward_input.args),
        dict(mi.forward_input.kwargs),
        grads=grads,
        random=False,
        param_grads=param_grads,
    )
    return run_case(case, seed)


def _run_module_errors(info, row, cls, c_cls) -> list[Outcome]:
    if info.module_error_inputs_func is None:
        return []
    torch.default_generator.manual_seed(0)
    with _quiet():
        errors = info.module_error_inputs_func(
            info, device="cpu", dtype=torch.float32, requires_grad=False, training=True
        )
    out = []
    for i, e in enumerate(errors):
        mi = e.module_error_input
        ctor = (mi.constructor_input.args, mi.constructor_input.kwargs)
        fwd = mi.forward_input

        def t_fn(*args, ctor=ctor, **kwargs):
            return cls(*ctor[0], **ctor[1])(*args, **kwargs)

        try:
            c_ctor = (to_compat(ctor[0], {}), to_compat(ctor[1], {}))
        except Unsupported as err:
            out.append(Outcome(row, f"error #{i}", UNSUPPORTED, f"argument: {err}"))
            continue

        def c_fn(*args, c_ctor=c_ctor, **kwargs):
            return c_cls(*c_ctor[0], **c_ctor[1])(*args, **kwargs)

        args = tuple(fwd.args) if fwd is not None else ()
        kwargs = dict(fwd.kwargs) if fwd is not None else {}
        case = Case(t_fn, c_fn, args, kwargs, error=e.error_type)
        name = f"error #{i}: {describe(ctor[0])} {describe(ctor[1])} {describe(args)}"
        out.append(Outcome(row, name, *run_case(case, seed=i)))
    return out


# -- OptimizerInfo -------------------------------------------------------------------


def offered_optimizers() -> list:
    from torch.testing._internal.common_optimizers import optim_db

    return [o for o in optim_db if hasattr(compat.optim, o.optim_cls.__name__)]


STEPS = 3


def _optimizer_trajectory(lib, cls, params_fn, kwargs, grads):
    """Parameters after each of ``STEPS`` steps with the given gradients."""
    params = params_fn()
    opt = cls(params, **kwargs)
    leaves = [p for p in tensors(params) if p.requires_grad]
    seen = []
    for step in range(STEPS):
        for p, g in zip(leaves, grads[step], strict=True):
            p.grad = lib.tensor(g).to(p.dtype)
        opt.step()
        seen.append([p.detach().clone() for p in leaves])
    return seen


def run_optimizer(info, everything: bool = False) -> list[Outcome]:
    cls = info.optim_cls
    c_cls = getattr(compat.optim, cls.__name__)
    row = f"optim.{cls.__name__}"
    out = []
    for dtype in (torch.float32, torch.float64):
        with _quiet():
            inputs = info.optim_inputs_func(device="cpu", dtype=dtype)
        for i, oi in enumerate(inputs):
            name = f"{_name(dtype)} #{i} {oi.desc}: {describe(oi.kwargs)}"
            out.append(
                Outcome(row, name, *_run_optimizer_case(cls, c_cls, oi, dtype, i))
            )
    out += _run_optimizer_errors(info, row, cls, c_cls)
    return out


def _default_params(dtype, seed, cls=None):
    g = torch.Generator().manual_seed(seed)
    weight = torch.randn(4, 3, generator=g, dtype=dtype)
    bias = torch.randn(4, generator=g, dtype=dtype)
    if cls is not None and cls.__name__ in _MATRICES_ONLY:
        return [torch.nn.Parameter(weight)]
    return [torch.nn.Parameter(weight), torch.nn.Parameter(bias)]


# optimizers that take 2-D parameters alone (torch raises for a bias): their
# samples step the weight only
_MATRICES_ONLY = frozenset({"Muon"})


def _run_optimizer_case(cls, c_cls, oi, dtype, seed):
    t_params = oi.params if oi.params is not None else _default_params(dtype, seed, cls)
    leaves = [p for p in tensors(t_params) if p.requires_grad]
    rng = np.random.default_rng(seed)
    grads = [
        [rng.standard_normal(tuple(p.shape)) for p in leaves] for _ in range(STEPS)
    ]
    try:
        c_kwargs = to_compat(oi.kwargs, {})
    except Unsupported as e:
        return UNSUPPORTED, f"argument: {e}", "n/a"

    def t_fn():
        return _optimizer_trajectory(
            torch, cls, lambda: fresh(t_params), oi.kwargs, grads
        )

    def c_fn():
        return _optimizer_trajectory(
            compat, c_cls, lambda: to_compat(fresh(t_params), {}), c_kwargs, grads
        )

    ref, t_err = _call(t_fn, (), {}, seed)
    got, c_err = _call(c_fn, (), {}, seed)
    if isinstance(c_err, NotImplementedError):
        return _unsupported(c_err)
    if t_err is not None:
        return SKIPPED, f"torch raises {_message(t_err)}", "n/a"
    if c_err is not None:
        return SILENT, f"compat raises {_message(c_err)}", "n/a"
    for step, (r, g) in enumerate(zip(ref, got, strict=True)):
        why = compare(r, g, f"parameters after step {step + 1}")
        if why:
            return SILENT, why, "n/a"
    return PASSED, "", "n/a"


def _run_optimizer_errors(info, row, cls, c_cls) -> list[Outcome]:
    if info.optim_error_inputs_func is None:
        return []
    with _quiet():
        errors = info.optim_error_inputs_func(device="cpu", dtype=torch.float32)
    out = []
    for i, e in enumerate(errors):
        oi = e.optimizer_error_input
        name = f"error #{i} {oi.desc}: {describe(oi.kwargs)}"
        params = (
            oi.params if oi.params is not None else _default_params(torch.float32, i)
        )

        def t_fn(params=params, kwargs=oi.kwargs):
            opt = cls(fresh(params), **kwargs)
            for p in tensors(opt.param_groups):
                p.grad = torch.ones_like(p)
            opt.step()

        try:
            c_kwargs = to_compat(oi.kwargs, {})
            to_compat(fresh(params), {})  # (complex parameters: compat has none)
        except Unsupported as err:
            out.append(Outcome(row, name, UNSUPPORTED, f"argument: {err}"))
            continue

        def c_fn(params=params, c_kwargs=c_kwargs):
            opt = c_cls(to_compat(fresh(params), {}), **c_kwargs)
            for p in tensors(opt.param_groups):
                p.grad = compat.ones_like(p)
            opt.step()

        case = Case(t_fn, c_fn, (), {}, error=e.error_type)
        out.append(Outcome(row, name, *run_case(case, seed=i)))
    return out


# -- everything, and the page ----------------------------------------------------------


def rows() -> list[str]:
    """The names of the rows, without running anything (pytest's parameters)."""
    names = [row_name(op) for op in offered_ops()]
    names += [f"nn.{m.module_cls.__name__}" for m in offered_modules()]
    names += [f"optim.{o.optim_cls.__name__}" for o in offered_optimizers()]
    return names


def run_all(only: str | None = None, everything: bool = False) -> list[Outcome]:
    outcomes: list[Outcome] = []
    jobs = [(row_name(op), run_op, op) for op in offered_ops()]
    jobs += [(f"nn.{m.module_cls.__name__}", run_module, m) for m in offered_modules()]
    jobs += [
        (f"optim.{o.optim_cls.__name__}", run_optimizer, o)
        for o in offered_optimizers()
    ]
    for row, job, info in jobs:
        if only is None or row == only:
            outcomes += job(info, everything)
    return outcomes


def summarise(outcomes: list[Outcome]) -> dict[str, collections.Counter]:
    by_row: dict[str, collections.Counter] = {}
    for o in outcomes:
        by_row.setdefault(o.row, collections.Counter())[o.status] += 1
    return by_row


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(outcomes: list[Outcome]) -> str:
    by_row = summarise(outcomes)
    reasons: dict[str, set[str]] = {}
    for o in outcomes:
        if o.status in (UNSUPPORTED, SKIPPED):
            prefix = "skipped: " if o.status == SKIPPED else ""
            reasons.setdefault(o.row, set()).add(prefix + o.detail)
    total = collections.Counter()
    for counts in by_row.values():
        total.update(counts)
    *most, last = [f"{n} {_name(d)}" for d, n in BUDGET.items()]
    budget = f"{', '.join(most)} and {last}"
    unknown = sum(o.aliasing == "unknown" for o in outcomes)
    checked = sum(o.aliasing == "checked" for o in outcomes)
    lines = [
        "# compat against PyTorch, on PyTorch's own test inputs",
        "",
        "<!-- Generated by `python -m tests.compat.differential --write`; "
        "tests/compat/programs/test_differential.py checks it is current. -->",
        "",
        "Every op, module and optimizer that `jaxblitz.compat` offers runs the "
        "sample inputs PyTorch's own test suite ships for it (`OpInfo`, "
        "`ModuleInfo`, `OptimizerInfo` from `torch.testing._internal`, on CPU) in "
        "real PyTorch and in compat, and its error inputs. To keep the run to a "
        f"few minutes, each op takes at most {budget} samples (and as many error "
        "inputs as float32 samples), evenly spread over the ones PyTorch ships; "
        "float32 runs every variant (function, method, in-place, aliases) and "
        "compares gradients, the other dtypes the first variant's values; each "
        "op's first float32 sample also runs with compat in lazy mode (recorded, "
        "then run as one program when its result is read), where a difference "
        "is a silent one. A "
        "sample *passes* when values (torch.testing's tolerances, float32's "
        "relative one widened to 1e-4: XLA rounds differently from ATen), "
        "dtypes, shapes, gradients for a fixed random cotangent, the "
        "type of the error raised, and whether the output is the input or shares "
        "its memory all agree; it is *not supported* when compat raises "
        "`NotImplementedError` (the reasons are listed); anything else is a "
        "*silent difference*. `python -m tests.compat.differential --op NAME` "
        "prints an op's failing samples (`--all` adds every sample).",
        "",
        f"- ops, modules and optimizers: {len(by_row)}",
        f"- samples: {sum(total.values())}",
        f"- passed: {total[PASSED]}",
        f"- not supported: {total[UNSUPPORTED]}",
        f"- silent differences: {total[SILENT]}",
        f"- skipped: {total[SKIPPED]}",
        f"- output/input memory sharing compared: {checked} samples"
        + (
            f" ({unknown} more where compat has no `untyped_storage`)"
            if unknown
            else ""
        ),
        "",
        "| op | samples | passed | not supported | silent | why not supported |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for row, counts in by_row.items():
        why = "<br>".join(_cell(r) for r in sorted(reasons.get(row, ())))
        lines.append(
            f"| `{row}` | {sum(counts.values())} | {counts[PASSED]} | "
            f"{counts[UNSUPPORTED]} | {counts[SILENT]} | {why} |"
        )
    return "\n".join(lines) + "\n"


def silent_rows(page: str) -> dict[str, int]:
    """Row -> silent differences, as a rendered page records them."""
    found = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[1].startswith("`") and cells[5].isdigit():
            found[cells[1].strip("`")] = builtins.int(cells[5])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {PAGE.name}")
    parser.add_argument("--op", help="run one row and print its failing samples")
    parser.add_argument(
        "--all", action="store_true", help="with --op: every sample, every variant"
    )
    args = parser.parse_args(argv)
    if args.all and not args.op:
        parser.error("--all goes with --op (the page is the budgeted run)")
    outcomes = run_all(args.op, args.all)
    if args.op:
        for o in outcomes:
            if o.status != PASSED:
                print(f"[{o.status}] {o.case}\n    {o.detail}")
        counts = summarise(outcomes).get(args.op, collections.Counter())
        print(f"{args.op}: {dict(counts)}")
        return 0
    page = render(outcomes)
    if args.write:
        PAGE.write_text(page)
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
