"""``ast.parse`` for the tests that read the project's own source."""

from __future__ import annotations

import ast


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, again if CPython 3.11 raises its spurious SystemError ("AST
    constructor recursion depth mismatch"): its AST conversion keeps a recursion
    counter shared by the process's threads, so a conversion in another thread
    of the test worker (an import's, a library's) can trip it."""
    for attempt in range(3):
        try:
            return ast.parse(source, filename)
        except SystemError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")
