"""``torch.backends``: the flags scripts set (``cudnn.benchmark = True``) and the
availability checks they make (``backends.mps.is_available()``)."""

from jaxblitz.compat.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
