"""``torch.backends.mps``: Apple's GPU. JAX has no MPS backend, so none here."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
