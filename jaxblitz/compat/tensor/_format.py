"""Blitz 1, "Tensors": ``print(x)`` exactly as torch prints it.

A port of the rules in torch's ``_tensor_str.py`` (by default precision 4,
threshold 1000, edgeitems 3, linewidth 80; :func:`set_printoptions` changes
them): integer-valued floats print as ``1.``, a wide range switches to
scientific notation, long tensors are summarised with ``...``, and suffixes
(``dtype=``, ``grad_fn=<MulBackward0>``, ``requires_grad=True``) follow.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from jaxblitz.compat.tensor import _dtype


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """``torch.set_printoptions``: a ``profile`` ("default", "short", "full")
    first, then each option given; ``sci_mode`` None decides per tensor."""
    if profile in _PROFILES:
        values = _PROFILES[profile]
        for name, value in zip(
            ("precision", "threshold", "edgeitems", "linewidth"), values, strict=True
        ):
            setattr(PRINT_OPTS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The options, as ``set_printoptions`` takes them."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """The options changed for the ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        absolute = np.abs(finite).astype(np.float64)
        lo, hi = absolute.min(), absolute.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        forced = PRINT_OPTS.sci_mode
        auto = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.sci_mode = auto if forced is None else forced
        precision = PRINT_OPTS.precision
        if self.int_mode:
            fmt = f"{{:.{precision}e}}" if self.sci_mode else "{:.0f}"
            extra = 0 if self.sci_mode else 1
        else:
            fmt = f"{{:.{precision}e}}" if self.sci_mode else f"{{:.{precision}f}}"
            extra = 0
        for v in finite.tolist():
            self.max_width = max(self.max_width, len(fmt.format(v)) + extra)

    def format(self, value) -> str:
        if self.floating:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


def _summarized(values: np.ndarray) -> np.ndarray:
    if values.ndim == 0:
        return values
    edge = PRINT_OPTS.edgeitems
    if values.shape[0] > 2 * edge:
        values = np.concatenate([values[:edge], values[-edge:]])
    return np.stack([_summarized(v) for v in values]) if values.ndim > 1 else values


def _vector(values: np.ndarray, indent: int, summarize: bool, f: _Formatter) -> str:
    width = PRINT_OPTS.linewidth - indent
    per_line = max(1, int(math.floor(width / (f.max_width + 2))))
    edge = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * edge:
        data = [f.format(v) for v in values[:edge].tolist()] + [" ..."]
        data += [f.format(v) for v in values[-edge:].tolist()]
    else:
        data = [f.format(v) for v in values.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _body(values: np.ndarray, indent: int, summarize: bool, f: _Formatter) -> str:
    if values.ndim == 0:
        return f.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, f)
    n, edge = values.shape[0], PRINT_OPTS.edgeitems
    if summarize and n > 2 * edge:
        rows = [_body(values[i], indent + 1, summarize, f) for i in range(edge)]
        rows += ["..."]
        rows += [_body(values[i], indent + 1, summarize, f) for i in range(n - edge, n)]
    else:
        rows = [_body(values[i], indent + 1, summarize, f) for i in range(n)]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_str(values: np.ndarray, floating: bool, indent: int) -> str:
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    if values.dtype == np.float16 or str(values.dtype) == "bfloat16":
        values = values.astype(np.float32)
    shown = _summarized(values) if summarize else values
    return _body(values, indent, summarize, _Formatter(shown, floating))


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, prefix: str = "tensor(") -> str:
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool)
    if t.is_meta:  # torch: no values to print, the size instead
        suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
        return _add_suffixes(prefix + "...", suffixes + _grad_suffix(t), indent)
    values = np.asarray(t._data)
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if t.dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if t.dtype not in default:
            suffixes.append(f"dtype={t.dtype}")
        body = tensor_str(values, t.dtype.is_floating_point, indent)
    # torch measures the first line with its prefix: a one-line body wraps
    # its suffix at 80 columns counting "tensor("
    return _add_suffixes(prefix + body, suffixes + _grad_suffix(t), indent)


def _grad_suffix(t) -> list[str]:
    try:
        node = t.grad_fn
    except RuntimeError:  # a view made under no_grad whose base changed since
        return ["grad_fn=<Invalid>"]
    if node is not None:
        return [f"grad_fn=<{type(node).__name__}>"]
    return ["requires_grad=True"] if t.requires_grad else []
