"""Shared pytest set-up: CPU only, never the network, one compilation cache.

Every process the tests start (CLI runs, experiment scripts, docs pages, workers)
inherits the environment set here, so a program XLA compiled once in the session
is read from disk by every later process instead of compiled again.
"""

import os
import shutil
import tempfile

from tests import background

# Tests run on CPU; set before JAX initialises (tests that need many simulated
# devices start a subprocess with JAX_NUM_CPU_DEVICES set).
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# JAX's persistent compilation cache, one folder for the session, read by JAX itself
# at import in this process and in every subprocess. Even the small programs of
# eager operations are kept: a fresh process spends most of its time compiling them.
# (The folder's path is part of each cache key: every process must see this one.)
XLA_CACHE = tempfile.mkdtemp(prefix="jaxblitz-tests-xla-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = XLA_CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
# The CLI's own cache setting stays off, so it never writes to ~/.cache or narrows
# the settings above (tests that check the CLI's cache set their own folder).
os.environ.setdefault("JAXBLITZ_XLA_CACHE", "")


def pytest_collection_finish(session):
    """Start the subprocesses the selected tests read (see tests/background.py)."""
    if not session.config.option.collectonly:
        modules = {getattr(item, "module", None): None for item in session.items}
        modules.pop(None, None)
        background.start_all(modules)


def pytest_sessionfinish(session):
    background.stop_all()


def pytest_unconfigure(config):
    shutil.rmtree(XLA_CACHE, ignore_errors=True)
