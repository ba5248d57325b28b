"""Blitz 3, "Neural Networks" (a trained Net leaving Python): ``torch.onnx``.

compat's models are JAX programs, which ONNX export does not trace: ``export`` and
``dynamo_export`` are refused by name, pointing at JAX's own ways out.
``is_in_onnx_export()`` is false, as in PyTorch outside an export, so code that
asks runs its ordinary path.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OnnxExporterError", "dynamo_export", "export", "is_in_onnx_export"]

_INSTEAD = (
    "compat's modules run as JAX programs: export the computation with jax.export "
    "(StableHLO; jaxblitz.compat.functional(model) gives (params, apply)), or save "
    "the weights with torch.save(model.state_dict()) and export from PyTorch"
)


class OnnxExporterError(RuntimeError):
    """torch.onnx's error for a failed export."""


def _refuse(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.onnx.{name} is not supported by jaxblitz.compat: {_INSTEAD}"
    )


def export(model: Any, args: Any = (), f: Any = None, **kwargs: Any) -> Any:
    """Refused: see the module's docstring."""
    raise _refuse("export")


def dynamo_export(model: Any, *args: Any, **kwargs: Any) -> Any:
    """Refused: see the module's docstring."""
    raise _refuse("dynamo_export")


def is_in_onnx_export() -> bool:
    return False


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # the import system's and tools' probes
        raise AttributeError(name)
    raise _refuse(name)
