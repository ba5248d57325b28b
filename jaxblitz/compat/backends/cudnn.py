"""``torch.backends.cudnn``: scripts set these flags. ``allow_tf32`` (True, as in
torch) lets a float32 convolution on a GPU use TF32: every compat convolution reads
it for its program (:mod:`._precision`). XLA picks its own GPU kernels, so the
others (``benchmark``; ``deterministic`` is XLA's ``--xla_gpu_deterministic_ops``)
are kept for the script to read back and change nothing."""

from jaxblitz.compat.tensor import _dtype

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True


def is_available() -> bool:
    return bool(_dtype.gpus())


def version() -> None:
    return None
