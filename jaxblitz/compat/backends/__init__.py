"""``torch.backends``: the flags scripts set (``cudnn.benchmark = True``,
``cuda.matmul.allow_tf32``) and the availability checks they make
(``backends.mps.is_available()``). The float32 precision flags decide each matmul's
and convolution's ``jax.lax.Precision`` on a GPU or TPU: :mod:`._precision`."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.backends import (
    cpu,
    cuda,
    cudnn,
    mha,
    mkl,
    mkldnn,
    mps,
    nnpack,
    openmp,
    opt_einsum,
)

__all__ = [
    "cpu",
    "cuda",
    "cudnn",
    "mha",
    "mkl",
    "mkldnn",
    "mps",
    "nnpack",
    "openmp",
    "opt_einsum",
]

# torch.backends's submodules compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.backends")
