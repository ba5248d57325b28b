"""compat ``torch.load`` on hostile and broken files: a clear error, nothing run.

Pickles are assembled opcode by opcode here (protocol 2, as ``torch.save``), so
each case is exactly the bytes it names; real PyTorch's ``weights_only=True``
loader refuses the same pickles where it is installed.
"""

import io
import pickle
import struct
import zipfile
from collections import OrderedDict

import pytest

import jaxblitz.compat as torch
from jaxblitz.integrity import CorruptFileError

# -- a tiny pickle assembler ---------------------------------------------------


def s(text: str) -> bytes:
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def i(n: int) -> bytes:
    return b"J" + struct.pack("<i", n)


def g(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def t(*parts: bytes) -> bytes:
    return b"(" + b"".join(parts) + b"t"


def tensor(size=(3,), stride=(1,), offset=0, numel=3, storage="FloatStorage"):
    pid = t(s("storage"), g("torch", storage), s("0"), s("cpu"), i(numel)) + b"Q"
    hooks = g("collections", "OrderedDict") + b")R"
    args = t(pid, i(offset), t(*map(i, size)), t(*map(i, stride)), b"\x89", hooks)
    return g("torch._utils", "_rebuild_tensor_v2") + args + b"R"


def pkl(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


def torch_zip(data: bytes, storages=None, byteorder=b"little") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", data)
        z.writestr("archive/byteorder", byteorder)
        for key, raw in (storages or {}).items():
            z.writestr(f"archive/data/{key}", raw)
        z.writestr("archive/version", b"3\n")
    return out.getvalue()


FLOATS = struct.pack("<3f", 1.0, 2.0, 3.0)


def _load(blob: bytes):
    return torch.load(io.BytesIO(blob))


def test_the_assembled_tensor_file_is_valid_for_both_libraries():
    blob = torch_zip(pkl(tensor()), {"0": FLOATS})
    assert _load(blob).tolist() == [1.0, 2.0, 3.0]
    pt = pytest.importorskip("torch")
    assert pt.load(io.BytesIO(blob), weights_only=True).tolist() == [1.0, 2.0, 3.0]


# -- pickles that would run code ------------------------------------------------

MARKER = "jaxblitz_hostile_marker"
CODE = f"open({MARKER!r}, 'w').write('pwned')"
HOSTILE = {
    "exec": (pkl(g("builtins", "exec") + t(s(CODE)) + b"R"), "GLOBAL exec was not"),
    "eval": (pkl(g("__builtin__", "eval") + t(s(CODE)) + b"R"), "GLOBAL eval was not"),
    "os_system": (
        pkl(g("os", "system") + t(s("touch x")) + b"R"),
        "module os is blocked",
    ),
    "posix_system": (pkl(g("posix", "system") + t(s("x")) + b"R"), "posix is blocked"),
    "getattr": (
        pkl(
            g("builtins", "getattr") + t(g("collections", "OrderedDict"), s("x")) + b"R"
        ),
        "GLOBAL getattr was not",
    ),
    "nested_reduce": (  # call what a call returned
        pkl(g("collections", "OrderedDict") + b")R" + t(s("x")) + b"R"),
        "reduce for unrecognized function",
    ),
    "reduce_a_dtype": (pkl(g("torch", "float32") + b")R"), "unrecognized function"),
    "setstate_on_a_list": (pkl(b"]" + b"}" + b"b"), "Can only build"),
    "setstate_hiding_a_method": (
        pkl(g("collections", "OrderedDict") + b")R}" + s("items") + i(1) + b"sb"),
        "refusing to set the attribute 'items'",
    ),
    "setstate_class": (
        pkl(g("collections", "OrderedDict") + b")R}" + s("__class__") + i(1) + b"sb"),
        "__class__",
    ),
    "newobj_of_a_function": (
        pkl(g("torch._utils", "_rebuild_tensor_v2") + b")\x81"),
        "Can only create new object",
    ),
    "a_standin_as_a_value": (
        pkl(b"}" + s("f") + g("torch._utils", "_rebuild_tensor_v2") + b"s"),
        "not data",
    ),
    "protocol_4_stack_global": (
        b"\x80\x04" + b"\x8c\x08builtins\x8c\x04exec\x93.",
        "Unsupported operand 140",
    ),
    "inst_opcode": (pkl(b"(ibuiltins\nexec\n"), "Unsupported operand 105"),
    "persistent_id_not_a_storage": (pkl(t(s("module")) + b"Q"), "Only persistent_load"),
    "append_to_a_dict": (pkl(b"}" + i(1) + b"a"), "Can only append to lists"),
    "memo_not_stored": (pkl(b"h\x05"), "Memo value not found"),
    "truncated_pickle": (b"\x80\x02X\xff\x00\x00\x00ab", "truncated"),
    "bytearray_allocation": (
        pkl(g("builtins", "bytearray") + t(i(2**31 - 1)) + b"R"),
        "refusing bytearray",
    ),
}


@pytest.mark.parametrize("container", ["zip", "raw_pickle"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_pickles_are_refused_and_run_nothing(name, container, tmp_path,
                                                     monkeypatch):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    data, pattern = HOSTILE[name]
    blob = torch_zip(data) if container == "zip" else data
    if name == "a_standin_as_a_value" and container == "raw_pickle":
        with pytest.raises(CorruptFileError, match="invalid magic number"):
            _load(blob)  # read as a legacy stream's first pickle: data, not magic
        return
    with pytest.raises(pickle.UnpicklingError, match=pattern) as info:
        _load(blob)
    assert isinstance(info.value, CorruptFileError)
    assert "never unpickles arbitrary objects" in str(info.value)
    assert not (tmp_path / MARKER).exists() and not (tmp_path / "x").exists()


# compat is stricter than torch here: torch returns its function as a value, sets
# any attribute on an OrderedDict and allocates bytearray(n) for any n.
STRICTER = ("a_standin_as_a_value", "setstate_hiding_a_method", "setstate_class",
            "bytearray_allocation")  # fmt: skip


@pytest.mark.parametrize("name", [n for n in HOSTILE if n not in STRICTER])
def test_real_torch_refuses_the_same_pickles(name, tmp_path, monkeypatch):
    pt = pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception):  # noqa: B017,PT011 -- any refusal
        pt.load(io.BytesIO(torch_zip(HOSTILE[name][0])), weights_only=True)
    assert not (tmp_path / MARKER).exists()


def test_weights_only_false_still_refuses_and_says_so():
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False does not"):
        torch.load(io.BytesIO(torch_zip(HOSTILE["exec"][0])), weights_only=False)


def test_a_crafted_legacy_stream_is_refused_after_its_headers():
    headers = pkl(b"\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little"))
    headers += pkl(b"M\xe9\x03") + pkl(b"}" + s("little_endian") + b"\x88s")
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL exec"):
        _load(headers + HOSTILE["exec"][0])


# -- broken files ---------------------------------------------------------------

BROKEN = {
    "truncated_zip": (
        lambda: torch_zip(pkl(tensor()), {"0": FLOATS})[:-30],
        CorruptFileError,
        "not a readable zip",
    ),
    "missing_data_pkl": (
        lambda: _renamed(torch_zip(pkl(tensor()), {"0": FLOATS}), "a.pkl", "a.pk_"),
        CorruptFileError,
        "no <archive>/data.pkl",
    ),
    "missing_storage": (lambda: torch_zip(pkl(tensor())), CorruptFileError,
                        "no record archive/data/0"),
    "storage_shorter_than_declared": (
        lambda: torch_zip(pkl(tensor()), {"0": FLOATS[:8]}),
        CorruptFileError,
        "of 8 bytes where its tensors need 12",
    ),
    "stride_out_of_bounds": (
        lambda: torch_zip(pkl(tensor(size=(3,), stride=(5,))), {"0": FLOATS}),
        pickle.UnpicklingError,
        "reaches outside its storage",
    ),
    "negative_offset": (
        lambda: torch_zip(pkl(tensor(offset=-1)), {"0": FLOATS}),
        pickle.UnpicklingError,
        "reaches outside",
    ),
    "huge_declared_size": (
        lambda: torch_zip(pkl(tensor((2**31 - 1,), numel=2**31 - 1)), {"0": FLOATS}),
        pickle.UnpicklingError,
        "more than the file's",
    ),
    "unknown_storage_type": (
        lambda: torch_zip(pkl(tensor(storage="FooStorage")), {"0": FLOATS}),
        pickle.UnpicklingError,
        "GLOBAL torch.FooStorage was not an allowed global",
    ),
    "unknown_byteorder": (
        lambda: torch_zip(pkl(tensor()), {"0": FLOATS}, byteorder=b"middle"),
        CorruptFileError,
        "byte order 'middle'",
    ),
    "not_a_torch_file": (lambda: b"hello world", CorruptFileError,
                         "not a file torch.save writes"),
    "empty_file": (lambda: b"", CorruptFileError, "not a file torch.save writes"),
    "legacy_bad_magic": (lambda: pkl(i(7)), CorruptFileError, "invalid magic number"),
}  # fmt: skip


def _renamed(blob: bytes, old: str, new: str) -> bytes:
    return blob.replace(old.encode(), new.encode())


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_files_raise_clear_errors(name):
    make, kind, pattern = BROKEN[name]
    with pytest.raises(kind, match=pattern):
        _load(make())


def test_a_big_endian_file_is_read_in_its_byte_order():
    big = struct.pack(">3f", 1.0, 2.0, 3.0)
    loaded = _load(torch_zip(pkl(tensor()), {"0": big}, byteorder=b"big"))
    assert loaded.tolist() == [1.0, 2.0, 3.0]


def test_unsupported_but_torch_allowed_names_raise_not_implemented():
    for name in ("ComplexFloatStorage", "QInt8Storage"):
        with pytest.raises(NotImplementedError, match=name):
            _load(torch_zip(pkl(tensor(storage=name)), {"0": FLOATS}))
    with pytest.raises(NotImplementedError, match="_rebuild_sparse_tensor"):
        _load(torch_zip(pkl(g("torch._utils", "_rebuild_sparse_tensor") + b")R")))


def test_an_ordered_dict_state_only_sets_plain_attributes():
    body = g("collections", "OrderedDict") + b")R}" + s("_metadata") + b"}sb"
    loaded = _load(torch_zip(pkl(body)))
    assert loaded == OrderedDict() and loaded._metadata == {}
