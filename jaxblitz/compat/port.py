"""Porting a PyTorch script: its imports rewritten to jaxblitz.compat, nothing else.

    python -m jaxblitz.compat.port main.py > main_jax.py    # print the port
    python -m jaxblitz.compat.port main.py --run -- --epochs 1   # or run it

The rule (docs/07_porting.md) is mechanical: ``torch`` becomes ``jaxblitz.compat``
and ``torchvision`` becomes ``jaxblitz.compat.vision``, keeping the names the
script uses (``import torch.nn as nn`` -> ``import jaxblitz.compat.nn as nn``;
``import torch`` -> ``import jaxblitz.compat as torch``). Only import statements
change; every other line stays as written, so line numbers in tracebacks match.
"""

from __future__ import annotations

import argparse
import ast
import runpy
import sys
import tempfile
import tokenize
from pathlib import Path
from typing import Any

# The package each torch-side top-level name maps to.
_PACKAGES = {"torch": "jaxblitz.compat", "torchvision": "jaxblitz.compat.vision"}


def _target(module: str) -> str | None:
    top, _, rest = module.partition(".")
    if top not in _PACKAGES:
        return None
    return _PACKAGES[top] + (f".{rest}" if rest else "")


def _alias(name: ast.alias) -> str:
    return name.name if name.asname is None else f"{name.name} as {name.asname}"


def _rewrite(node: ast.Import | ast.ImportFrom) -> str | None:
    """The statement's replacement, or None when it imports nothing of torch."""
    if isinstance(node, ast.ImportFrom):
        target = None if node.level else _target(node.module or "")
        if target is None:
            return None
        return f"from {target} import {', '.join(map(_alias, node.names))}"
    parts, touched = [], False
    for name in node.names:
        target = _target(name.name)
        if target is None:
            parts.append(f"import {_alias(name)}")
            continue
        touched = True
        top = name.name.partition(".")[0]
        if name.asname is not None:
            parts.append(f"import {target} as {name.asname}")
        else:
            # `import torch.nn` binds `torch`, with the submodule loaded.
            parts.append(f"import {_PACKAGES[top]} as {top}")
            if target != _PACKAGES[top]:
                parts.append(f"import {target}")
    return "; ".join(parts) if touched else None


def port_source(source: str) -> str:
    """``source`` with its torch/torchvision imports pointed at jaxblitz.compat."""
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            new = _rewrite(node)
            if new is not None:
                edits.append((node, new))
    # Bottom up, so earlier line numbers stay valid; a multi-line import keeps its
    # line count (blank continuation lines), so tracebacks still line up.
    for node, new in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        first, last = node.lineno - 1, node.end_lineno - 1
        head = lines[first][: node.col_offset]
        tail = lines[last][node.end_col_offset :]
        blank = ["\n"] * (last - first)
        lines[first : last + 1] = [head + new + tail.rstrip("\n") + "\n", *blank]
    return "".join(lines)


# torch.nn.functional's helpers for its own dispatch, not part of its API.
_INTERNAL = {
    "assert_int_or_pair",
    "boolean_dispatch",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
}


def not_offered(real: Any, ours: Any, base: type | None = None) -> list[str]:
    """Public names of a PyTorch namespace (``torch.nn``, ``torch.optim``...) that
    its compat counterpart lacks: classes deriving from ``base`` when given, else
    its functions (its ``__all__`` where it has one). The porting page's "not
    offered" lists are this."""
    names = getattr(real, "__all__", None) or dir(real)
    missing = []
    for name in names:
        value = getattr(real, name, None)
        if name.startswith("_") or name in _INTERNAL or hasattr(ours, name):
            continue
        if base is not None:
            wanted = isinstance(value, type) and issubclass(value, base)
            wanted = wanted and value is not base
        else:
            wanted = callable(value) and not isinstance(value, type)
            wanted = wanted and getattr(value, "__module__", None) != "typing"
        if wanted:
            missing.append(name)
    return sorted(missing)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m jaxblitz.compat.port",
        description="Rewrite a PyTorch script's imports to jaxblitz.compat.",
    )
    parser.add_argument("script", type=Path, help="the PyTorch script")
    parser.add_argument(
        "--run",
        action="store_true",
        help="run the ported script instead of printing it; the script's own "
        "arguments follow `--`",
    )
    argv = sys.argv[1:] if argv is None else argv
    # Everything after `--` is the script's: argparse must not read its flags.
    split = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:split])
    options.args = argv[split + 1 :]
    if not options.script.is_file():
        parser.error(f"no such script: {options.script}")
    try:  # in the encoding Python reads it in: UTF-8 or its coding cookie's
        with tokenize.open(options.script) as f:
            source, encoding = f.read(), f.encoding
    except (SyntaxError, UnicodeDecodeError, OSError) as e:
        parser.error(f"cannot read {options.script} as Python source: {e}")
    ported = port_source(source)
    if not options.run:
        sys.stdout.write(ported)
        return
    # Run it as __main__ from its own folder's view (relative data paths work).
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / options.script.name
        path.write_text(ported, encoding=encoding)  # its cookie still says so
        sys.argv = [str(options.script), *options.args]
        sys.path.insert(0, str(options.script.resolve().parent))
        runpy.run_path(str(path), run_name="__main__")


if __name__ == "__main__":
    main()
