"""Blitz notes: small scripts run against compat beside real PyTorch.

Each topic module has ``run(torch) -> dict[str, object]``: it takes the torch module
(real ``torch`` or ``jaxblitz.compat``), runs examples as a user copies them from
PyTorch's documentation and the Blitz, and returns plain keyed results
(:mod:`.record`). ``tests/compat/programs/test_notes.py`` compares the two key for key.
"""

TOPICS = ("views", "broadcasting", "autograd", "extending", "nn", "tensors")
