"""Process set-up, for every Blitz section: what a program does once, before JAX
compiles anything.

:func:`use_compilation_cache` keeps compiled XLA programs on disk, so that a second
process starts compiled: ``jaxblitz-train`` (:mod:`jaxblitz.cli`) turns it on for
its steps, :mod:`jaxblitz.compat` for every op's small program.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax


def use_compilation_cache(min_compile_secs: float) -> str | None:
    """Keep compiled XLA programs on disk, so a second process starts compiled.

    The folder is ``$JAXBLITZ_XLA_CACHE`` (default ``~/.cache/jaxblitz/xla``);
    ``JAXBLITZ_XLA_CACHE=""`` turns this off and leaves JAX's own setting
    (``JAX_COMPILATION_CACHE_DIR``) alone. Programs that compiled in less than
    ``min_compile_secs`` are kept too when it is 0 (an eager op's program is tiny,
    but a script runs dozens). Returns the folder, or None when off.
    """
    folder = os.environ.get("JAXBLITZ_XLA_CACHE", "~/.cache/jaxblitz/xla")
    if not folder:
        return None
    folder = str(Path(folder).expanduser())
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_secs)
    return folder
