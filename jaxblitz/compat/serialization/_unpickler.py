"""Blitz 4 (saving the model): the restricted unpickler behind ``torch.load``.

An interpreter of the pickle opcodes that ``torch.save`` writes (protocol 2), with
PyTorch's own ``weights_only=True`` rules (torch: ``torch/_weights_only_unpickler.py``):
the same opcodes; ``GLOBAL`` only looks names up in a table of stand-ins that the
caller gives (nothing is imported, no attribute of any module is read); ``REDUCE``
and ``NEWOBJ`` only call those stand-ins; ``BUILD`` only sets data attributes on an
``OrderedDict``; ``APPEND`` only on lists, ``SETITEM`` only on dicts; persistent
ids only name storages. So a file can make numbers, strings, containers and what
the stand-ins build, and nothing else runs -- except what the user trusted by name
(``torch.serialization.add_safe_globals``): those objects themselves are pushed,
called, instantiated (``cls.__new__``) and built (``__setstate__`` or their
``__dict__``) as PyTorch's unpickler does. Errors are :class:`UnpicklingError`
in PyTorch's wording (a ``pickle.UnpicklingError`` and a ``CorruptFileError``).
"""

from __future__ import annotations

import pickle
import struct
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from jaxblitz.integrity import CorruptFileError

# torch: the modules never allowed, whatever else a file names.
_BLOCKED = ("sys", "os", "posix", "nt")
_DICTS = (dict, OrderedDict, Counter)
# Python 2 pickles name builtins by their old module (torch: IMPORT_MAPPING).
_OLD_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


class UnpicklingError(CorruptFileError, pickle.UnpicklingError):
    """A pickle the weights-only rules refuse, or a broken one (torch's class)."""


class Global:
    """What ``GLOBAL module name`` pushes: a stand-in the file may call.

    ``call`` is run by ``REDUCE`` with the file's arguments; ``new`` (if any) by
    ``NEWOBJ``. Neither is the real PyTorch object: each builds compat data only.
    """

    __slots__ = ("name", "call", "new")

    def __init__(self, name: str, call: Callable, new: Callable | None = None):
        self.name, self.call, self.new = name, call, new

    def __repr__(self) -> str:
        return self.name


def _unsupported_global(full: str) -> str:
    if full.startswith("builtins."):
        full = full[len("builtins.") :]
    return (
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full}])` or the "
        f"`torch.serialization.safe_globals([{full}])` context manager to allowlist "
        "this global if you trust this class/function."
    )


class Unpickler:
    """Reads one pickle from ``data[start:]`` (see the module doc).

    ``lookup(full_name)`` gives the table's entry for a global or None;
    ``persistent_load(pid)`` turns a storage's persistent id into a storage;
    ``trusted`` are the user's safe globals that ``lookup`` may give.
    """

    def __init__(
        self,
        data: bytes | memoryview,
        lookup: Callable[[str], Any],
        persistent_load: Callable[[tuple], Any] | None = None,
        *,
        start: int = 0,
        encoding: str = "utf-8",
        trusted: Iterable[Any] = (),
    ):
        self.data, self.pos = memoryview(data), start
        self.lookup, self.encoding = lookup, encoding
        self.persistent_load = persistent_load
        self.trusted = {id(obj): obj for obj in trusted}

    def _trusts(self, obj: Any) -> bool:
        return id(obj) in self.trusted

    # -- reading the stream ---------------------------------------------------------
    def _read(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise UnpicklingError("pickle data was truncated")
        out = bytes(self.data[self.pos : end])
        self.pos = end
        return out

    def _line(self) -> str:
        end = bytes(self.data[self.pos : self.pos + 1024]).find(b"\n")
        if end < 0:
            raise UnpicklingError("pickle data was truncated (a GLOBAL's name)")
        line = self._read(end + 1)[:-1]
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UnpicklingError(f"a GLOBAL's name is not UTF-8: {line!r}") from e

    def _pop_mark(self) -> list:
        if not self.metastack:
            raise UnpicklingError("could not find MARK")
        items, self.stack = self.stack, self.metastack.pop()
        return items

    # -- the interpreter --------------------------------------------------------------
    def load(self) -> Any:
        """The pickled object; afterwards ``self.pos`` is just past its STOP."""
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}
        try:
            while True:
                op = self._read(1)
                handler = _HANDLERS.get(op)
                if handler is None:
                    raise UnpicklingError(f"Unsupported operand {op[0]}")
                if handler is _stop:
                    return self.stack.pop()
                handler(self)
        except IndexError as e:  # an opcode that needs more on the stack
            raise UnpicklingError(f"pickle data is malformed ({e})") from e
        except (TypeError, ValueError, OverflowError, RecursionError) as e:
            if isinstance(e, CorruptFileError):
                raise
            raise UnpicklingError(f"pickle data is malformed ({e})") from e


def _stop(u: Unpickler) -> None:  # handled in Unpickler.load
    pass


def _global(u: Unpickler) -> None:
    module, name = u._line(), u._line()
    module = _OLD_MODULES.get(module, module)
    full = f"{module}.{name}"
    if module in _BLOCKED:
        raise UnpicklingError(
            f"Trying to load unsupported GLOBAL {full} whose module {module} is "
            "blocked."
        )
    found = u.lookup(full)
    if found is None:
        raise UnpicklingError(_unsupported_global(full))
    u.stack.append(found)


def _reduce(u: Unpickler) -> None:
    args = u.stack.pop()
    func = u.stack[-1]
    if not isinstance(func, Global) and not u._trusts(func):
        raise UnpicklingError(
            f"Trying to call reduce for unrecognized function {func!r}"
        )
    if not isinstance(args, tuple):
        raise UnpicklingError(f"REDUCE's arguments are a {type(args).__name__}")
    u.stack[-1] = func.call(*args) if isinstance(func, Global) else func(*args)


def _newobj(u: Unpickler) -> None:
    args = u.stack.pop()
    cls = u.stack.pop()
    if isinstance(cls, type) and u._trusts(cls) and isinstance(args, tuple):
        u.stack.append(cls.__new__(cls, *args))  # torch: a safe global's class
        return
    if not isinstance(cls, Global) or cls.new is None or not isinstance(args, tuple):
        raise UnpicklingError(
            "Can only create new object for nn.Parameter or classes allowlisted via "
            f"`add_safe_globals` but got {cls!r}"
        )
    u.stack.append(cls.new(*args))


def _build(u: Unpickler) -> None:
    state = u.stack.pop()
    inst = u.stack[-1]
    if u._trusts(type(inst)):
        _build_trusted(inst, state)
        return
    if type(inst) not in (OrderedDict, Counter):
        # torch also builds Tensors (set_) and Parameters (__setstate__), which
        # its own torch.save never writes.
        raise UnpicklingError(
            "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
            f"`add_safe_globals`, but got {type(inst)} (jaxblitz.compat builds "
            "OrderedDict and Counter only)"
        )
    if not isinstance(state, dict) or not all(type(k) is str for k in state):
        raise UnpicklingError("an OrderedDict's state must be a dict of attributes")
    for key in state:
        if hasattr(type(inst), key):  # would hide a method such as .items
            raise UnpicklingError(f"refusing to set the attribute {key!r}")
    inst.__dict__.update(state)


def _build_trusted(inst: Any, state: Any) -> None:
    """torch: an instance of a safe global's class, built as pickle's load_build."""
    if hasattr(inst, "__setstate__"):
        inst.__setstate__(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state:
        inst.__dict__.update(state)
    if slotstate:
        for key, value in slotstate.items():
            setattr(inst, key, value)


def _append(u: Unpickler) -> None:
    item = u.stack.pop()
    if type(u.stack[-1]) is not list:
        raise UnpicklingError(f"Can only append to lists, but got {type(u.stack[-1])}")
    u.stack[-1].append(item)


def _appends(u: Unpickler) -> None:
    items = u._pop_mark()
    if type(u.stack[-1]) is not list:
        raise UnpicklingError(f"Can only extend lists, but got {type(u.stack[-1])}")
    u.stack[-1].extend(items)


def _set_target(u: Unpickler, opcode: str) -> dict:
    target = u.stack[-1]
    if type(target) not in _DICTS:
        raise UnpicklingError(
            f"Can only {opcode} for dict, collections.OrderedDict, "
            f"collections.Counter, but got {type(target)}"
        )
    return target


def _setitem(u: Unpickler) -> None:
    value, key = u.stack.pop(), u.stack.pop()
    _set_target(u, "SETITEM")[key] = value


def _setitems(u: Unpickler) -> None:
    items = u._pop_mark()
    target = _set_target(u, "SETITEMS")
    if len(items) % 2:
        raise UnpicklingError("SETITEMS with an odd number of items")
    for i in range(0, len(items), 2):
        target[items[i]] = items[i + 1]


def _mark(u: Unpickler) -> None:
    u.metastack.append(u.stack)
    u.stack = []


def _tuple(u: Unpickler) -> None:
    items = tuple(u._pop_mark())  # before reading u.stack: it changes
    u.stack.append(items)


def _tuple_n(n: int) -> Callable[[Unpickler], None]:
    def handler(u: Unpickler) -> None:
        if len(u.stack) < n:
            raise UnpicklingError(f"TUPLE{n} with {len(u.stack)} items on the stack")
        u.stack[len(u.stack) - n :] = [tuple(u.stack[len(u.stack) - n :])]

    return handler


def _push(value: Any) -> Callable[[Unpickler], None]:
    return lambda u: u.stack.append(value)


def _push_new(kind: type) -> Callable[[Unpickler], None]:
    return lambda u: u.stack.append(kind())


def _unpack(fmt: str) -> Callable[[Unpickler], None]:
    size = struct.calcsize(fmt)
    return lambda u: u.stack.append(struct.unpack(fmt, u._read(size))[0])


def _binunicode(u: Unpickler) -> None:
    (n,) = struct.unpack("<I", u._read(4))
    u.stack.append(str(u._read(n), "utf-8", "surrogatepass"))


def _short_binstring(u: Unpickler) -> None:
    raw = u._read(u._read(1)[0])
    u.stack.append(raw if u.encoding == "bytes" else raw.decode(u.encoding, "strict"))


def _long1(u: Unpickler) -> None:
    u.stack.append(int.from_bytes(u._read(u._read(1)[0]), "little", signed=True))


def _binpersid(u: Unpickler) -> None:
    pid = u.stack.pop()
    if type(pid) is not tuple and type(pid) is not int:
        raise UnpicklingError(
            f"persistent_load id must be tuple or int, but got {type(pid)}"
        )
    if type(pid) is tuple and pid:
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind != "storage":
            raise UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {type(pid[0])}"
            )
    if u.persistent_load is None or type(pid) is not tuple:
        raise UnpicklingError("unsupported persistent id encountered")
    u.stack.append(u.persistent_load(pid))


def _get(fmt: str) -> Callable[[Unpickler], None]:
    size = struct.calcsize(fmt)

    def handler(u: Unpickler) -> None:
        (i,) = struct.unpack(fmt, u._read(size))
        if i not in u.memo:
            raise UnpicklingError(f"Memo value not found at index {i}")
        u.stack.append(u.memo[i])

    return handler


def _put(fmt: str) -> Callable[[Unpickler], None]:
    size = struct.calcsize(fmt)

    def handler(u: Unpickler) -> None:
        (i,) = struct.unpack(fmt, u._read(size))
        u.memo[i] = u.stack[-1]

    return handler


def _proto(u: Unpickler) -> None:
    proto = u._read(1)[0]
    if proto != 2:
        warnings.warn(
            f"Detected pickle protocol {proto} in the checkpoint, which was not the "
            "default pickle protocol used by `torch.load` (2). The weights_only "
            "Unpickler might not support all instructions implemented by this "
            "protocol, please file an issue for adding support if you encounter this.",
            stacklevel=4,
        )


_HANDLERS: dict[bytes, Callable[[Unpickler], None]] = {
    pickle.PROTO: _proto,
    pickle.STOP: _stop,
    pickle.GLOBAL: _global,
    pickle.NEWOBJ: _newobj,
    pickle.REDUCE: _reduce,
    pickle.BUILD: _build,
    pickle.APPEND: _append,
    pickle.APPENDS: _appends,
    pickle.SETITEM: _setitem,
    pickle.SETITEMS: _setitems,
    pickle.MARK: _mark,
    pickle.TUPLE: _tuple,
    pickle.TUPLE1: _tuple_n(1),
    pickle.TUPLE2: _tuple_n(2),
    pickle.TUPLE3: _tuple_n(3),
    pickle.NONE: _push(None),
    pickle.NEWFALSE: _push(False),
    pickle.NEWTRUE: _push(True),
    pickle.EMPTY_TUPLE: _push(()),
    pickle.EMPTY_LIST: _push_new(list),
    pickle.EMPTY_DICT: _push_new(dict),
    pickle.EMPTY_SET: _push_new(set),
    pickle.BININT: _unpack("<i"),
    pickle.BININT1: _unpack("<B"),
    pickle.BININT2: _unpack("<H"),
    pickle.BINFLOAT: _unpack(">d"),
    pickle.BINUNICODE: _binunicode,
    pickle.SHORT_BINSTRING: _short_binstring,
    pickle.LONG1: _long1,
    pickle.BINPERSID: _binpersid,
    pickle.BINGET: _get("<B"),
    pickle.LONG_BINGET: _get("<I"),
    pickle.BINPUT: _put("<B"),
    pickle.LONG_BINPUT: _put("<I"),
}
