"""``torch.backends.cudnn``: scripts set these flags; XLA picks its own GPU kernels
(``deterministic`` is XLA's ``--xla_gpu_deterministic_ops``), so they are kept for
the script to read back and change nothing."""

from jaxblitz.compat import cuda as _cuda

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True


def is_available() -> bool:
    return _cuda.is_available()


def version() -> None:
    return None
