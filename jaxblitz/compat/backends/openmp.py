"""``torch.backends.openmp``: compat's CPU threads are XLA's, not OpenMP's."""

__all__ = ["is_available"]


def is_available() -> bool:
    return False
