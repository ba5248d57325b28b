"""Fixtures of every compat test: each starts with no pending work (in lazy
mode a test may end with recorded work whose error, an index out of range or a
singular matrix, surfaces only at the next sync point, which would otherwise be
the next test's), and ``lazily`` / ``eagerly`` run a test in one mode, the mode
as it was after."""

import contextlib

import pytest

from jaxblitz.compat import lazy


@pytest.fixture(autouse=True)
def _no_pending_work_left():
    yield
    with contextlib.suppress(Exception):  # the ending test's own, left unread
        lazy.sync()


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
