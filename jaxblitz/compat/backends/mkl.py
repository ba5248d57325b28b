"""``torch.backends.mkl``: compat has no Intel MKL (its kernels are XLA's)."""

from jaxblitz.compat import _not_offered

__all__ = ["is_available"]


def is_available() -> bool:
    return False


__getattr__ = _not_offered.refuser(
    __name__,
    "torch.backends.mkl",
    _not_offered.each("verbose VERBOSE_ON VERBOSE_OFF", "compat has no Intel MKL"),
)
