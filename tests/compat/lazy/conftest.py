"""Fixtures of compat's lazy tests: a test run in one mode, the mode as it was
after."""

import pytest

from jaxblitz.compat import lazy


def _in_mode(on: bool):
    was = lazy.is_lazy()
    lazy.set_lazy(on)
    try:
        yield
    finally:
        lazy.set_lazy(was)


@pytest.fixture
def lazily():
    yield from _in_mode(True)


@pytest.fixture
def eagerly():
    yield from _in_mode(False)
