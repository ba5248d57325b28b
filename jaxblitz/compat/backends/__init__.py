"""``torch.backends``: the flags scripts set (``cudnn.benchmark = True``,
``cuda.matmul.allow_tf32``) and the availability checks they make
(``backends.mps.is_available()``). The float32 precision flags decide each matmul's
and convolution's ``jax.lax.Precision`` on a GPU or TPU: :mod:`._precision`."""

from jaxblitz.compat.backends import cuda, cudnn, mha, mps

__all__ = ["cuda", "cudnn", "mha", "mps"]
