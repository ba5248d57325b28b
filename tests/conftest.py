"""Shared pytest set-up: CPU only, never the network, one compilation cache.

Every process the tests start (CLI runs, experiment scripts, docs pages, workers,
pytest-xdist's workers) inherits the environment set here, so a program XLA
compiled once in the session is read from disk by every later process instead of
compiled again.

Under pytest-xdist (``-n 2 --dist loadgroup``, the README's command) the tests of a
module that shares work between its tests (subprocess runs declared with
``tests/background.py``, a module- or class-scoped fixture) run on one worker, so
that work is done once; other tests go to whichever worker is free.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests import background, tiers

# Tests run on CPU; set before JAX initialises (tests that need many simulated
# devices start a subprocess with JAX_NUM_CPU_DEVICES set).
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# JAX's persistent compilation cache, one folder for the session, read by JAX itself
# at import in this process and in every subprocess. Even the small programs of
# eager operations are kept: a fresh process spends most of its time compiling them.
# (The folder's path is part of each cache key: every process must see this one.)
# The process that makes the folder (pytest, or pytest-xdist's controller) removes
# it; xdist's workers inherit it through _SESSION.
# The same holds for SHARED, a folder where tests leave results that other xdist
# workers read (tests/compat/programs/test_differential.py's rows).
_SESSION = "JAXBLITZ_TESTS_SESSION"
_OWNS_SESSION = _SESSION not in os.environ
if _OWNS_SESSION:
    os.environ[_SESSION] = tempfile.mkdtemp(prefix="jaxblitz-tests-")
XLA_CACHE = os.path.join(os.environ[_SESSION], "xla")
SHARED = os.path.join(os.environ[_SESSION], "shared")
os.makedirs(XLA_CACHE, exist_ok=True)
os.makedirs(SHARED, exist_ok=True)
os.environ["JAX_COMPILATION_CACHE_DIR"] = XLA_CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
# The CLI's own cache setting stays off, so it never writes to ~/.cache or narrows
# the settings above (tests that check the CLI's cache set their own folder).
os.environ.setdefault("JAXBLITZ_XLA_CACHE", "")
# The suite compiles thousands of one-off lazy graphs by design (each op's lazy
# check): compat's compile-storm warning stays off but in its own tests.
os.environ["JAXBLITZ_COMPAT_LAZY_STORM"] = "0"


@pytest.fixture(scope="session")
def shared_folder() -> Path:
    """A folder every process of the session sees (all xdist workers)."""
    return Path(SHARED)


def _xdist_worker(config) -> bool:
    return hasattr(config, "workerinput")


def _shares_work(module) -> bool:
    """Whether the module declares background runs (see tests/background.py)."""
    return any(
        isinstance(run, background.BackgroundRun)
        for value in vars(module).values()
        for run in (value.values() if isinstance(value, dict) else [value])
    )


_SLOW_MODULE = "\npytestmark = pytest.mark.slow\n"
_SMOKE = "pytest.mark.smoke"
# The tier a run takes (see tests/tiers.py), decided once by the process pytest
# was started in and inherited by pytest-xdist's workers (which see their
# arguments as given, not as pytest's testpaths): "default", "whole" or "chosen"
# (the run's own -m, -k or paths decide).
_TIER = "JAXBLITZ_TESTS_TIER"


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--whole",
        action="store_true",
        help="run the whole suite: the slow tier too (tests/tiers.py)",
    )


def pytest_configure(config) -> None:
    if _xdist_worker(config):
        return
    if config.getoption("whole"):
        tier = "whole"
    elif (
        config.option.markexpr.strip()
        or config.option.keyword.strip()
        or config.args_source != pytest.Config.ArgsSource.TESTPATHS
    ):
        tier = "chosen"
    else:
        tier = "default"
    os.environ[_TIER] = tier


def _tier() -> str:
    return os.environ.get(_TIER, "chosen")


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    """The fast tier (``-m "not slow"``) does not import a module marked slow as
    a whole: none of its tests would run (the differential suite's module alone
    takes seconds to import, in each worker); nor does the default run, but for
    a module with smoke tests."""
    fast = config.option.markexpr.strip() == "not slow"
    if not (fast or _tier() == "default") or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    text = collection_path.read_text()
    if _SLOW_MODULE not in text or (not fast and _SMOKE in text):
        return None
    return True


# Modules of which the run deselected some tests: their background runs start
# only when a test asks for them (tests/background.py), not all at once.
_PARTIAL: set = set()


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """The measured slow tests marked ``slow`` (tests/tiers.py); one xdist group
    per module whose tests share work: background runs, or a fixture set up once
    per module or class."""
    shared: dict = {}
    slow = tiers.slow_ids()  # measured slow: the fast tier leaves them out
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
    if _tier() == "default":  # the fast tier and the smoke tests
        kept, dropped = [], []
        for item in items:
            skip = item.get_closest_marker("slow") and not item.get_closest_marker(
                "smoke"
            )
            (dropped if skip else kept).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
            _PARTIAL.update(getattr(item, "module", None) for item in dropped)
    for item in items:
        module = getattr(item, "module", None)
        if module is None:
            continue
        if module not in shared:
            shared[module] = _shares_work(module)
        defs = getattr(item, "_fixtureinfo", None)
        scoped = defs is not None and any(
            fixturedef.scope in ("module", "class", "package")
            for fixturedefs in defs.name2fixturedefs.values()
            for fixturedef in fixturedefs
        )
        if shared[module] or scoped:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def pytest_collection_finish(session):
    """Start the subprocesses the selected tests read (see tests/background.py);
    an xdist worker starts a module's when its first test there begins."""
    if session.config.option.collectonly or _xdist_worker(session.config):
        return
    modules = {getattr(item, "module", None): None for item in session.items}
    modules.pop(None, None)
    background.start_all(m for m in modules if m not in _PARTIAL)


def pytest_runtest_setup(item):
    module = getattr(item, "module", None)
    if _xdist_worker(item.config) and module is not None and module not in _PARTIAL:
        background.start_all([module])


def pytest_sessionfinish(session):
    background.stop_all()


def pytest_unconfigure(config):
    if _OWNS_SESSION:
        shutil.rmtree(os.environ[_SESSION], ignore_errors=True)
