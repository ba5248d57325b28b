"""Process set-up, for every Blitz section: what a program does once, before JAX
compiles anything.

:func:`use_compilation_cache` keeps compiled XLA programs on disk, so that a second
process starts compiled: ``jaxblitz-train`` (:mod:`jaxblitz.cli`) turns it on for
its steps, :mod:`jaxblitz.compat` for every op's small program.
:func:`set_cpu_threads` sizes XLA:CPU's thread pool as JAX starts:
``jaxblitz-train`` picks one thread at the Blitz's batch of 4, and compat's
``torch.set_num_threads`` sizes it when called before the first tensor.
"""

from __future__ import annotations

import contextlib
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


def set_cpu_threads(threads: int) -> bool:
    """Size XLA:CPU's thread pool to ``threads``; call it before JAX starts.

    JAX sizes the CPU backend's thread pool from the process's CPU affinity when
    the backend starts (on the first ``jax.devices()``, array or computation) and
    offers no other knob (jax-ml/jax#1539). This narrows the affinity to
    ``threads`` cores, starts the backends, then gives every thread of the
    process its full affinity back: the pool keeps its size, and no thread stays
    pinned. Returns False where it cannot act (no ``sched_setaffinity``: macOS,
    Windows) or ``threads`` is not below the cores available.

    Every backend starts inside the narrow mask, and XLA's GPU compiler sizes its
    own pool then too: on an H100 machine with 16 cores, one thread made the
    Blitz's training program compile in 28-30 s instead of 2.9 s (BENCHMARKS.md).
    So ``jaxblitz-train`` and compat's ``torch.set_num_threads`` call it only
    where no accelerator can start (:func:`accelerator_installed`), or where
    ``--cpu-threads`` asks.

    Raises:
      RuntimeError: JAX's backends have already started.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}.")
    if not hasattr(os, "sched_setaffinity"):
        return False
    cores = os.sched_getaffinity(0)
    if threads >= len(cores):
        return False
    before = _thread_count()
    os.sched_setaffinity(0, set(sorted(cores)[:threads]))
    try:
        jax.devices()  # the CPU client reads the affinity as it starts
    finally:
        # Threads the backends started inherited the narrow mask; one may have
        # exited since (OSError).
        for tid in os.listdir("/proc/self/task") if os.path.isdir("/proc") else ():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(tid), cores)
        os.sched_setaffinity(0, cores)
    if _thread_count() <= before:  # no pool started: it was running already
        raise RuntimeError(
            "set_cpu_threads must run before JAX starts its backends (before the "
            "first jax.devices(), array or computation in this process)."
        )
    return True


def start_backends() -> None:
    """Start JAX's backends, or a ValueError naming ``JAX_PLATFORMS`` when the
    platforms it names cannot start here."""
    try:
        jax.devices()
    except (RuntimeError, AssertionError) as e:
        # JAX asserts, with no message, when JAX_PLATFORMS names only cuda and no
        # NVIDIA GPU is visible; other absent platforms are a RuntimeError.
        platforms = jax.config.jax_platforms  # type: ignore[attr-defined]
        why = str(e) or "none of the platforms it names has a device here"
        raise ValueError(
            f"JAX_PLATFORMS={platforms!r}: JAX could not start a backend: {why}"
        ) from None


def accelerator_installed() -> bool:
    """Whether JAX may start a GPU or TPU backend here, told without starting any
    backend (:func:`set_cpu_threads` must run before they start).

    Where ``JAX_PLATFORMS`` (``jax_platforms``) is set, whether it names a
    platform other than the CPU; else whether an accelerator plugin is installed,
    found as JAX finds them: a ``jax_plugins`` module or entry point (``jax[cuda]``,
    ``jax[rocm]``) or ``libtpu``. An installed plugin with no card for it counts
    too: that CPU run keeps every thread, a little slower at batch 4.
    """
    # JAX adds its config options to jax.config at import; its types omit them.
    platforms = jax.config.jax_platforms  # type: ignore[attr-defined]
    if platforms:
        return any(p.strip() not in ("", "cpu") for p in platforms.split(","))
    import importlib.metadata
    import importlib.util
    import pkgutil

    with contextlib.suppress(ImportError):
        import jax_plugins  # the namespace package accelerator plugins install into

        if any(pkgutil.iter_modules(jax_plugins.__path__)):
            return True
    if importlib.metadata.entry_points(group="jax_plugins"):
        return True
    return importlib.util.find_spec("libtpu") is not None


def _thread_count() -> int:
    """Threads of this process (XLA:CPU starts its pool's when its client starts)."""
    return len(os.listdir("/proc/self/task"))  # Linux: where sched_setaffinity is
