"""Blitz 1 (what is PyTorch?): ``torch.version`` -- the facts of the build a script
prints or checks (``torch.version.cuda``, ``torch.__version__``).

compat is not a build of PyTorch: it implements PyTorch 2.13's API over JAX. Its
answers say so and make scripts' checks take the path they take on a CPU-only
build of torch, since compat has none of torch's CUDA, ROCm or XPU libraries (JAX
brings its own):

- ``__version__`` is ``"2.13.0+jaxblitz"``: the API version compat implements, so
  ``torch.__version__ >= "2.0"`` holds, with a local label in the place of torch's
  ``+cpu`` or ``+cu126`` that names what it is;
- ``cuda``, ``hip``, ``rocm`` and ``xpu`` are ``None``, as on a CPU build
  (``torch.cuda.is_available()`` is the question of whether a GPU runs the work);
- ``debug`` is ``False``; ``git_version`` is ``"Unknown"``, torch's answer for a
  build made outside its git repository.
"""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "2.13.0+jaxblitz"
debug = False
cuda: str | None = None
git_version = "Unknown"
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
