"""The execution mode the compat tests run in: eager (the default) or lazy
(``JAXBLITZ_COMPAT_LAZY=1``, :mod:`jaxblitz.compat.lazy`). The suite passes in
both; a test of eager mode's own machinery is marked with :func:`eager_only`."""

from __future__ import annotations

import pytest

from jaxblitz.compat import lazy


def eager_only(machinery: str) -> pytest.MarkDecorator:
    """Skip the test when the suite runs lazily: it inspects ``machinery``, which
    only eager mode uses (lazy execution records the same calls and runs them as
    one program per sync point instead)."""
    return pytest.mark.skipif(
        lazy.is_lazy(), reason=f"{machinery}: eager mode's, not used while lazy"
    )
