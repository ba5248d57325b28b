"""Blitz 4, "Training on GPU": ``torch.amp`` -- ``autocast`` and ``GradScaler``.

Scripts written for mixed precision run unchanged where they switch it off
(``autocast(..., enabled=False)``, ``GradScaler(enabled=False)``), and where
PyTorch itself switches it off on a machine without CUDA (``autocast("cuda")``
and ``GradScaler("cuda")`` warn and disable, with PyTorch's warnings). An enabled
``GradScaler`` scales, unscales, skips steps with non-finite gradients and grows
or backs off its scale exactly as PyTorch's. An enabled ``autocast`` casts the
ops on PyTorch's lists for its device (:mod:`jaxblitz.compat._autocast`): matmuls
and convolutions to float16/bfloat16, losses to float32, joins to the widest.
"""

from __future__ import annotations

import functools
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

import numpy as np

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor._dtype import bfloat16, float16, float32
from jaxblitz.compat.tensor.creation import full

__all__ = [
    "GradScaler",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "is_autocast_available",
]

_CPU_DTYPES = (bfloat16, float16)


def _cuda_available() -> bool:
    return bool(_dtype.gpus())


def is_autocast_available(device_type: str) -> bool:
    """Whether compat knows ``device_type``'s autocast."""
    return _dtype.device(device_type).type != "meta"


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether ``device_type``'s autocast is on (no argument: CUDA's, as torch)."""
    if device_type is None:
        return _autocast.is_enabled("cuda")
    return _autocast.is_enabled(_dtype.device(device_type).type)


def get_autocast_dtype(device_type: str) -> Any:
    return _autocast.get_dtype(_dtype.device(device_type).type)


def is_autocast_cache_enabled() -> bool:
    return _autocast.is_cache_enabled()


class autocast:  # noqa: N801 -- torch's name
    """``torch.autocast``: a region (or decorated function) where the ops on
    PyTorch's lists for ``device_type`` cast their inputs; disabled, with
    PyTorch's warnings, where PyTorch's would be."""

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
            )
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (
            _autocast.is_cache_enabled() if cache_enabled is None else cache_enabled
        )
        if enabled and device_type == "cuda" and not _cuda_available():
            warnings.warn(
                "CUDA is not available or torch_xla is imported. Disabling autocast.",
                stacklevel=2,
            )
            enabled = False
        elif enabled and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn(
                f"In {device_type.upper()} autocast, but the target dtype is not "
                f"supported. Disabling autocast.\n{device_type.upper()} Autocast "
                "only supports dtypes of torch.bfloat16, torch.float16 currently.",
                stacklevel=2,
            )
            enabled = False
        if enabled and _dtype.device(device_type).type not in ("cpu", "cuda"):
            raise NotImplementedError(
                f"torch.autocast(device_type={device_type!r}) is not supported by "
                "jaxblitz.compat: it casts ops on 'cpu' and 'cuda' (JAX's GPU) only"
            )
        self._enabled = enabled
        self._device_type = _dtype.device(device_type).type
        self._prev: list[tuple] = []  # one per entry: a decorated function recurses

    def __enter__(self) -> autocast:
        self._prev.append(
            _autocast.enter(
                self._device_type, self._enabled, self.fast_dtype, self._cache_enabled
            )
        )
        return self

    def __exit__(self, *exc: Any) -> bool:
        _autocast.leave(self._device_type, self._prev.pop())
        return False

    def __call__(self, func: Any) -> Any:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}"
                ". Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorated


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """torch.amp's ``_cast``: floating tensors on ``device_type`` (not float64),
    in nested lists, tuples and dicts, cast to ``dtype``."""
    if isinstance(value, Tensor):
        eligible = (
            value.is_floating_point()
            and value.device.type == device_type
            and value.dtype is not _dtype.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, str | bytes | np.ndarray):
        return value
    if isinstance(value, abc.Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype)
            for k, v in value.items()
        }
    if isinstance(value, abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, list | tuple) else iterable
    return value


def custom_fwd(fwd: Any = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """``torch.amp.custom_fwd``: records the autocast state ``forward`` ran in;
    with ``cast_inputs``, inside a region, casts the inputs and runs ``forward``
    with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
        )
    if fwd is None:
        return functools.partial(
            custom_fwd, device_type=device_type, cast_inputs=cast_inputs
        )

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs),
                **_cast(kwargs, device_type, cast_inputs),
            )

    return decorate_fwd


def custom_bwd(bwd: Any = None, *, device_type: str) -> Any:
    """``torch.amp.custom_bwd``: ``backward`` runs in the autocast state that
    ``forward`` ran in."""
    if not isinstance(device_type, str):
        raise ValueError(
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
        )
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(
            device_type=device_type,
            enabled=args[0]._fwd_used_autocast,
            dtype=args[0]._dtype,
        ):
            return bwd(*args, **kwargs)

    return decorate_bwd


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf": None}


def _f32(x: float) -> float:
    """``x`` rounded to float32, as torch's scale tensor holds it."""
    return float(np.float32(x))


class GradScaler:
    """``torch.amp.GradScaler``: PyTorch's dynamic loss scaling, step for step.

    The scale and the growth tracker are kept on the host (torch keeps 0-dim
    tensors; ``scale(loss)`` multiplies by a float32 0-dim tensor as torch does).
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda_available():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                "Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if not self._enabled:
            return
        if _dtype.device(device).type not in ("cpu", "cuda"):
            raise NotImplementedError(
                f"torch.amp.GradScaler({device!r}) is not supported by "
                "jaxblitz.compat: only 'cpu' and 'cuda' (JAX's GPU)"
            )
        if growth_factor <= 1.0:
            raise AssertionError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: float | None = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(
            _fresh_state
        )

    def _check_scale_growth_tracker(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your "
                "script did not use scaler.scale(loss or outputs) earlier in the "
                "iteration."
            )

    def _scale_tensor(self, device: Any) -> Tensor:
        if self._scale is None:
            self._scale = _f32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        return full((), self._scale, dtype=float32, device=device)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a Tensor or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_tensor(outputs.device)

        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                return val * self._scale_tensor(val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, list | tuple) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: float, allow_fp16: bool):
        found = None
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    # torch: _amp_foreach_non_finite_check_and_unscale_, in float
                    inv = full((), inv_scale, dtype=float32, device=grad.device)
                    grad.copy_(grad.float() * inv)
                    bad = (~grad.isfinite()).any()
                    found = bad if found is None else found | bad
        return found

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, noting non-finite ones."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the "
                "last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = _f32(1.0 / self._scale)  # torch: scale.double().reciprocal()
        found = self._unscale_grads_(optimizer, inv_scale, False)
        state["found_inf"] = [] if found is None else [found]  # none: no grads
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` on unscaled gradients, skipped if any is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError(
                "Closure use is not currently supported if GradScaler is enabled."
            )
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError(
                "step() has already been called since the last update()."
            )
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not any(bool(f) for f in state["found_inf"]):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Back the scale off after a skipped step, grow it after
        ``growth_interval`` good ones (torch's ``_amp_update_scale_``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale = _f32(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor"
                    " or torch.FloatTensor with requires_grad=False."
                )
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale = _f32(new_scale.item())
        else:
            found = [
                f
                for state in self._per_optimizer_states.values()
                for f in state["found_inf"] or ()
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(bool(f) for f in found):
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = _f32(self._scale * self._growth_factor)
                    if np.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(np.int32(self._growth_tracker))

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """torch's five entries; ``{}`` when disabled."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _f32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = int(state_dict["_growth_tracker"])
