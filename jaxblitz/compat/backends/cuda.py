"""``torch.backends.cuda``: ``matmul.allow_tf32`` and friends, kept for scripts to
set and read (JAX's own switch is ``jax.default_matmul_precision``)."""

from types import SimpleNamespace

from jaxblitz.compat import cuda as _cuda

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)


def is_built() -> bool:
    return _cuda.is_available()
