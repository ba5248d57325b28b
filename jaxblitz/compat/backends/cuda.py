"""``torch.backends.cuda``: ``matmul.allow_tf32`` (False: float32 products are
computed in float32 on a GPU, as PyTorch's) and friends. The flag is the float32
matmul precision of :mod:`._precision` ("highest" or not), which every compat
matmul reads for its program (``jax.lax.Precision``)."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.backends import _precision


class _Matmul:
    """``torch.backends.cuda.matmul``: unknown attributes are refused, as torch's."""

    __slots__ = (
        "allow_fp16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction",
    )

    def __init__(self) -> None:
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _precision.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, flag: bool) -> None:
        _precision._set_allow_tf32(flag)

    @property
    def fp32_precision(self) -> str:
        return _precision._state["fp32"]

    @fp32_precision.setter
    def fp32_precision(self, value: str) -> None:
        _precision._set_fp32_precision(value)

    def __setattr__(self, name: str, value: Any) -> None:
        if not hasattr(type(self), name):
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)


matmul = _Matmul()


def is_built() -> bool:
    from jaxblitz.compat import cuda  # noqa: PLC0415 -- compat.cuda imports creation

    return cuda.is_available()
