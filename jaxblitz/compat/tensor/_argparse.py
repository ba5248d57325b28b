"""Tensors (Blitz 1): the errors of torch's argument parser, word for word.

torch checks each argument of a Python binding against the binding's signatures
(its PythonArgParser) and, when none matches, names the function, the argument
and the types it got. compat's entry points test an argument with one
``type(x) is ...`` and call these functions only once that test has failed: a
correct call pays for no message.
"""

from __future__ import annotations

from typing import Any

# compat's classes by the type names torch's messages give them (their C names)
_TORCH_NAMES = {
    "dtype": "torch.dtype",
    "device": "torch.device",
    "Generator": "torch._C.Generator",
    "layout": "torch.layout",
    "memory_format": "torch.memory_format",
}


def type_name(value: Any) -> str:
    """The name torch's messages give ``value``'s type (its ``tp_name``): a
    Python class's bare name, a NumPy scalar's ``numpy.float64``."""
    kind = type(value)
    module = kind.__module__
    if module.startswith("jaxblitz.compat"):
        return _TORCH_NAMES.get(kind.__name__, kind.__name__)
    if module == "numpy":
        return f"numpy.{kind.__name__}"
    return kind.__name__


def must_be(
    fn: str, arg: str, expected: str, value: Any, position: int | None = None
) -> TypeError:
    """``fn(): argument 'arg' (position k) must be expected, not got``."""
    at = "" if position is None else f" (position {position})"
    return TypeError(
        f"{fn}(): argument '{arg}'{at} must be {expected}, not {type_name(value)}"
    )


def unpack_failed(fn: str, arg: str, position: int, value: Any) -> TypeError:
    """torch's error for an int list whose first element was an int and whose
    element at ``position`` (counted from 1) is not."""
    return TypeError(
        f"{fn}(): argument '{arg}' failed to unpack the object at pos {position} "
        f'with error "type must be tuple of ints,but got {type_name(value)}"'
    )


def too_many(fn: str, takes: int, given: int) -> TypeError:
    """More positional arguments than any of ``fn``'s signatures takes."""
    noun = "argument" if takes == 1 else "arguments"
    return TypeError(f"{fn}() takes {takes} positional {noun} but {given} were given")


def _got(args: tuple, kwargs: dict) -> str:
    # torch lists keywords from a hash map: for the few keywords of one call,
    # the last given comes first. Its trailing ", " stays when only keywords
    # were given.
    parts = [type_name(v) + ", " for v in args]
    parts += [f"{k}={type_name(v)}, " for k, v in reversed(kwargs.items())]
    text = "".join(parts)
    return f"({text[:-2] if args else text})"


_MATCHES = {
    "int": (int,),
    "float": (float, int),
    "bool": (bool,),
    "str": (str,),
}


def _matching(kind: str, value: Any) -> bool:
    accepted = _MATCHES.get(kind)
    if accepted is not None:
        return isinstance(value, accepted)
    if kind == "Number":
        return isinstance(value, int | float | complex)
    if kind == "Tensor":
        return type_name(value) in ("Tensor", "Parameter")
    return type_name(value) == kind


def _described(value: Any) -> str:
    """A value's type as torch's "didn't match" line shows it: a sequence with
    its elements' (``tuple of (float, int)``)."""
    if not isinstance(value, tuple | list):
        return type_name(value)
    inner = ", ".join(type_name(v) for v in value)
    if isinstance(value, list):
        return f"list of [{inner}]"
    return f"tuple of ({inner}{',' if len(value) == 1 else ''})"


def _annotated(option: str, args: tuple, kwargs: dict) -> str:
    """torch's "didn't match" line for an option with as many parts as
    arguments were given (its printed parts: "()" counts one, "*" one)."""
    parts = option[1:-1].split(", ")
    given = (*args, *reversed(kwargs.values()))
    if len(parts) != len(given):
        return ""
    # torch reads a part's name after its last space: "dtype = None" is "None"
    names = [part.rpartition(" ")[2] for part in parts[len(parts) - len(kwargs) :]]
    unmatched = [k for k in reversed(kwargs) if k not in names]
    if unmatched:
        return (
            "      didn't match because some of the keywords were incorrect: "
            f"{', '.join(unmatched)}\n"
        )
    marked = []
    for part, value in zip(parts, given, strict=True):
        name = _described(value)
        kind = part.partition(" = ")[0].rpartition(" ")[0]
        marked.append(name if _matching(kind, value) else f"!{name}!")
    return (
        "      didn't match because some of the arguments have invalid types: "
        f"({', '.join(marked)})\n"
    )


def _plausible(option: str, count: int) -> bool:
    """Whether ``option`` takes ``count`` arguments (a part without a default
    is required)."""
    parts = [p for p in option[1:-1].split(", ") if p not in ("", "*")]
    required = sum(" = " not in p for p in parts)
    return required <= count <= len(parts)


def invalid_combination(
    fn: str,
    args: tuple,
    kwargs: dict,
    options: tuple[str, ...],
    specific: Exception | None = None,
) -> Exception:
    """torch's error when no signature of an overloaded ``fn`` takes the call:
    the types got, then each signature; or ``specific``, the error of the one
    signature taking as many arguments as were given, where only one does."""
    count = len(args) + len(kwargs)
    plausible = sum(_plausible(o, count) for o in options)
    if specific is not None and (not options or plausible == 1):
        return specific
    listing = "".join(
        f" * {option}\n" + _annotated(option, args, kwargs) for option in options
    )
    return TypeError(
        f"{fn}() received an invalid combination of arguments - got "
        f"{_got(args, kwargs)}, but expected one of:\n{listing}"
    )


def refuse_dim(fn: str, dim: Any, kwargs: dict, options: tuple[str, ...]) -> Exception:
    """torch's error for a reduction's ``dim`` that is no int nor sequence
    of ints."""
    if isinstance(dim, list | tuple) and dim and type(dim[0]) is int:
        bad = next(v for v in dim if type(v) is not int)
        return unpack_failed(fn, "dim", dim.index(bad) + 1, bad)
    if isinstance(dim, list | tuple):
        bad = next(v for v in dim if type(v) is not int)
        specific = TypeError(
            f"{fn}(): argument 'dim' (position 1) must be tuple of ints, but found "
            f"element of type {type_name(bad)} at pos {dim.index(bad)}"
        )
    else:
        specific = must_be(fn, "dim", "tuple of ints", dim, 1)
    return invalid_combination(fn, (dim,), kwargs, options, specific)


_PY_DTYPES = (float, int, bool, complex)  # torch takes Python's types as dtypes
_EXPECTED = {
    "generator": "torch.Generator",
    "dtype": "torch.dtype",
    "requires_grad": "bool",
}


def _numbers(data: Any) -> list:
    """The leaves of nested lists and tuples."""
    if isinstance(data, list | tuple):
        return [leaf for item in data for leaf in _numbers(item)]
    return [data]


def refuse_data(data: Any, dtype: Any) -> None:
    """Raise torch's error for ``torch.tensor(data)`` whose elements are not
    numbers (a string, None, an object), as its parse of ``data`` words it;
    returns if all are numbers."""
    if isinstance(data, str | bytes):
        raise TypeError(f"new(): invalid data type '{type_name(data)}'")
    first = data
    while isinstance(first, list | tuple) and first:
        first = first[0]
    if isinstance(first, str):  # torch reads a string as a sequence
        raise ValueError(f"too many dimensions '{type_name(first)}'")
    for leaf in _numbers(data):
        if isinstance(leaf, str | bytes):
            raise TypeError(f"new(): invalid data type '{type_name(leaf)}'")
        if isinstance(leaf, int | float | complex) or hasattr(leaf, "dtype"):
            continue
        if dtype is None:
            raise RuntimeError(f"Could not infer dtype of {type_name(leaf)}")
        if getattr(dtype, "is_floating_point", dtype is float):
            raise TypeError(f"must be real number, not {type_name(leaf)}")
        raise TypeError(
            f"'{type_name(leaf)}' object cannot be interpreted as an integer"
        )


def _taken(kind: str, value: Any, types: dict) -> bool:
    """Whether torch's parser takes ``value`` as a ``kind`` (None: a keyword's
    default)."""
    if kind == "int":
        return type(value) is not bool and hasattr(value, "__index__")
    if kind == "Number":  # a number, or a one-element tensor (its value)
        return isinstance(value, int | float | complex) or hasattr(value, "item")
    if kind == "torch.dtype":
        return value is None or isinstance(value, types[kind]) or value in _PY_DTYPES
    if kind == "torch.Generator":
        return value is None or isinstance(value, types[kind])
    return value is None or type(value) is bool


def refuse_call(
    fn: str,
    args: tuple,
    params: tuple[str, ...],
    keywords: dict,
    options: tuple[str, ...] = (),
    **types: type,
) -> None:
    """Raise torch's error for a call of ``fn`` whose positional ``args``
    (``params``: each one's name and torch type, "n: int") or ``keywords``
    (``generator``, ``dtype``, ``requires_grad``, those not at their
    defaults) hold a type it does not take: the argument named, or, for an
    overloaded ``fn`` (its ``options``), the signatures listed. Returns if
    all are taken. ``types``: compat's ``torch.dtype`` and ``torch.Generator``
    classes, by those names with "_" for "." (torch_dtype=...)."""
    classes = {k.replace("_", "."): v for k, v in types.items()}
    bad: Exception | None = None
    for position, (value, param) in enumerate(zip(args, params, strict=False), 1):
        name, kind = param.split(": ")
        if not _taken(kind, value, classes):
            bad = must_be(fn, name, kind, value, position)
            break
    for arg, value in keywords.items():
        kind = _EXPECTED[arg]
        if bad is None and not _taken(kind, value, classes):
            bad = must_be(fn, arg, kind, value)
    if bad is not None:
        raise invalid_combination(fn, args, keywords, options, bad)
