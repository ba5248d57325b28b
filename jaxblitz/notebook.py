"""The Blitz as notebooks: cell magics that run a cell in a namespace of its own.

The docs pages show each step in columns (functional, Flax NNX, compat), each run
in a namespace of its own: the functional and the compat code both define ``net``
and ``x``. The pages' notebooks (``docs/notebooks/``) run the functional code in
the notebook's own namespace and the other columns under a cell magic::

    %load_ext jaxblitz.notebook

    %%compat
    import jaxblitz.compat as torch
    net = Net()  # the compat column's net: the notebook's own net is untouched

Each magic's namespace lasts from cell to cell, as the notebook's does. The magics
are ``%%compat``, ``%%nnx`` and ``%%torch`` (real PyTorch: ``docs/build.py --torch``
runs the PyTorch code beside the rest). IPython is not a dependency of jaxblitz: it
is there whenever this extension is loaded, since only IPython loads it.
"""

from __future__ import annotations

import builtins
import contextlib
from typing import Any

COLUMNS = ("compat", "nnx", "torch")


class Columns:
    """One namespace per column, created on a column's first cell."""

    def __init__(self, shell: Any):
        self.shell = shell
        self.namespaces: dict[str, dict[str, Any]] = {}

    def namespace(self, column: str) -> dict[str, Any]:
        return self.namespaces.setdefault(
            column, {"__name__": "__main__", "__builtins__": builtins}
        )

    def run(self, column: str, cell: str, name: str = "") -> None:
        """Run ``cell`` (IPython syntax allowed) in ``column``'s namespace, under the
        file name ``name`` if one is given (see ``load_ipython_extension``)."""
        __tracebackhide__ = True  # a failing cell's traceback starts at its code
        code = self.shell.transform_cell(cell)
        if not name:  # cached under a name of its own: tracebacks show its lines
            name = self.shell.compile.cache(code, self.shell.execution_count, cell)
        try:
            exec(self.shell.compile(code, name, "exec"), self.namespace(column))
        except Exception as e:
            self._trim_traceback(e, name)
            raise

    def _trim_traceback(self, error: Exception, name: str) -> None:
        """Show ``error``'s traceback from the cell's own code, as for a plain cell,
        not from the ``run_cell_magic`` call that IPython makes of a magic cell."""
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != name:
            tb = tb.tb_next
        if tb is None:  # raised before the cell ran (a SyntaxError): as it is
            return
        lines = self.shell.InteractiveTB.structured_traceback(
            type(error), error, tb, tb_offset=0
        )
        # IPython shows what this returns; an exception may take new attributes,
        # which its type does not declare.
        with contextlib.suppress(AttributeError):
            error._render_traceback_ = lambda: lines  # type: ignore[attr-defined]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jaxblitz.notebook``: the cell magics ``%%compat``, ``%%nnx``...

    ``%%compat NAME`` runs the cell as code of a file named ``NAME``, with no source
    lines behind it, as ``docs/build.py`` runs the pages' blocks: a message that says
    where it was raised (``<07_porting: compat block 7>:6``) then reads as the page
    records it.
    """
    columns = Columns(ipython)
    for column in COLUMNS:

        def magic(line: str, cell: str, column: str = column) -> None:
            __tracebackhide__ = True
            columns.run(column, cell, line.strip())

        magic.__doc__ = f"Run this cell in the {column} column's own namespace."
        ipython.register_magic_function(magic, magic_kind="cell", magic_name=column)
