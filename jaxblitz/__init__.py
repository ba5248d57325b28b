"""jaxblitz: PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz" in JAX.

The functional core lives in ``tensors`` (Blitz 1), ``grad`` (Blitz 2), ``models``
(Blitz 3), ``data`` and ``train`` (Blitz 4) and ``parallel`` (Blitz 5); the
torch-style facade is ``jaxblitz.compat``.
"""

__version__ = "0.1.0"
