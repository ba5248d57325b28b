"""compat ``torch.save`` / ``torch.load``: every structure round-trips exactly, or is
refused; the structures match what real PyTorch saves and loads."""

import io

import numpy as np
import pytest

import jaxblitz.compat as torch


def _pt_tensor(t, pt):
    """A real PyTorch tensor equal to the compat tensor ``t`` (bfloat16 included)."""
    if t.dtype is torch.bfloat16:
        bits = np.asarray(t.detach()).view(np.int16)
        return pt.from_numpy(bits.copy()).view(pt.bfloat16)
    out = pt.from_numpy(np.asarray(t.detach()).copy())
    return out.requires_grad_(t.requires_grad) if t.is_leaf else out


def _round_trip(obj, tmp_path):
    path = tmp_path / "obj.pt"
    torch.save(obj, path)
    return torch.load(path)


def _assert_same(saved, loaded):
    """Equal values, equal types all the way down (keys included)."""
    assert type(loaded) is type(saved), (saved, loaded)
    if isinstance(saved, torch.Tensor):
        assert loaded.dtype is saved.dtype and loaded.shape == saved.shape
        assert loaded.requires_grad == saved.requires_grad
        bits = lambda t: np.asarray(t.detach()).reshape(-1).view(np.uint8)  # noqa: E731
        np.testing.assert_array_equal(bits(loaded), bits(saved))
    elif isinstance(saved, dict):
        assert list(loaded) == list(saved)
        assert [type(k) for k in loaded] == [type(k) for k in saved]
        for key in saved:
            _assert_same(saved[key], loaded[key])
    elif isinstance(saved, list | tuple):
        assert len(loaded) == len(saved)
        for a, b in zip(saved, loaded, strict=True):
            _assert_same(a, b)
    elif isinstance(saved, float) and saved != saved:
        assert loaded != loaded  # nan
    else:
        assert loaded == saved and repr(loaded) == repr(saved)  # -0.0 stays -0.0


def _structures():
    from collections import OrderedDict

    a, b = torch.arange(3.0), torch.zeros(2, 2)
    all_dtypes = [
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    ]
    return {
        "int_and_str_key": {1: a, "1": b},
        "empty_key": {"": a},
        "old_single_name": {"__tensor__": a},
        "safetensors_reserved": {"__metadata__": a},
        "empty_containers": {"a": {}, "b": {"c": {}}, "d": [], "e": ()},
        "bfloat16": {"w": torch.randn(3, dtype=torch.bfloat16)},
        "bare_bfloat16": torch.randn(2, 2, dtype=torch.bfloat16),
        "every_dtype": {str(dt): torch.ones(2, dtype=dt) for dt in all_dtypes},
        "key_types": {2: a, 1.5: b, True: a, None: b, (1, "a", (2.5, None)): a},
        "scalars": {
            "epoch": 5,
            "loss": 0.1,
            "nan": float("nan"),
            "inf": -float("inf"),
            "zero": -0.0,
            "big": 2**80,
            "name": "net",
            "none": None,
            "flag": False,
        },
        "nested": [a, (b, [a, {"x": b}]), torch.Size([2, 3])],
        "ordered": OrderedDict([("b", a), ("a", b)]),
        "plain_order": {"b": a, "a": b},
        "slash_keys": {"a/b": a, "a": {"b": b}},
        "zero_dim": torch.tensor(3.5),
        "zero_dim_bf16": torch.tensor(1.5, dtype=torch.bfloat16),
        "empty_tensor": torch.ones(0, 3),
        "parameter": torch.nn.Parameter(torch.ones(2)),
        "requires_grad": torch.ones(2, requires_grad=True),
        "state_dict": torch.nn.Linear(3, 2).state_dict(),
        "number": 5,
        "empty_dict": {},
        "checkpoint": {
            "epoch": 2,
            "model_state_dict": torch.nn.Linear(2, 1).state_dict(),
            "loss": 0.5,
        },
    }


@pytest.mark.parametrize("name", list(_structures()))
def test_save_load_round_trips_each_structure_exactly(name, tmp_path):
    saved = _structures()[name]
    _assert_same(saved, _round_trip(saved, tmp_path))


def test_save_load_keeps_int_and_str_keys_apart(tmp_path):
    a, b = torch.ones(1), torch.zeros(1)
    loaded = _round_trip({1: a, "1": b}, tmp_path)
    assert loaded[1].tolist() == [1.0] and loaded["1"].tolist() == [0.0]


def test_save_load_keeps_the_same_tensor_once_and_shared_storage(tmp_path):
    x = torch.ones(2)
    loaded = _round_trip({"a": x, "b": x, "c": x.detach()}, tmp_path)
    assert loaded["a"] is loaded["b"] and loaded["a"] is not loaded["c"]
    loaded["a"].add_(1)  # shared storage, as torch.load gives it
    assert loaded["c"].tolist() == [2.0, 2.0]


def test_non_leaf_tensor_loads_as_a_leaf_that_requires_grad(tmp_path):
    loaded = _round_trip(torch.ones(2, requires_grad=True) * 2, tmp_path)
    assert loaded.requires_grad and loaded.is_leaf and loaded.tolist() == [2.0, 2.0]


def test_saved_state_dict_is_a_torch_zip_archive(tmp_path):
    import zipfile

    torch.save({"model": torch.nn.Linear(3, 2).state_dict()}, tmp_path / "ck.pt")
    names = zipfile.ZipFile(tmp_path / "ck.pt").namelist()
    assert names[0] == "ck/data.pkl" and "ck/data/0" in names and "ck/version" in names


REFUSED = {
    "function": ({"fn": print}, TypeError, r"obj\['fn'\].*weights_only=True"),
    "ndarray": ({"n": np.ones(2)}, TypeError, "numpy.ndarray"),
    "bytearray": ({"b": bytearray(b"x")}, TypeError, "bytearray"),
    "tensor_in_set": ({"s": {1, torch.ones(1)}}, TypeError, "dict key"),
    "numpy_float": ({"f": np.float64(1.0)}, TypeError, "plain float"),
    "tensor_key": ({torch.ones(1): 1}, TypeError, "dict key"),
    "object_key": ({object(): 1}, TypeError, "dict key"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_save_refuses_what_it_cannot_represent(name, tmp_path):
    obj, kind, pattern = REFUSED[name]
    with pytest.raises(kind, match=pattern):
        torch.save(obj, tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


def test_save_and_load_take_file_objects():
    import io

    buffer = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, buffer)
    buffer.seek(0)
    assert torch.load(buffer)["w"].tolist() == [0.0, 1.0, 2.0]


def test_a_container_that_contains_itself_round_trips_as_in_pytorch(tmp_path):
    loop = [torch.ones(1)]
    loop.append(loop)
    loaded = _round_trip(loop, tmp_path)
    assert loaded[1] is loaded and loaded[0].tolist() == [1.0]
    pt = pytest.importorskip("torch")
    theirs = pt.load(tmp_path / "obj.pt", weights_only=True)
    assert theirs[1] is theirs and theirs[0].tolist() == [1.0]


def test_load_reads_format_1_files(tmp_path):
    import json

    import ml_dtypes

    from jaxblitz.integrity import write_safetensors

    bf16 = np.array([1.5, -2.0], ml_dtypes.bfloat16)
    arrays = {"conv1.weight": np.ones((2, 2), np.float32), "a/b": bf16}
    metadata = {"format": "jaxblitz.compat", "order": json.dumps(list(arrays))}
    write_safetensors(arrays, tmp_path / "v1.pt", metadata)
    loaded = torch.load(tmp_path / "v1.pt")
    assert list(loaded) == ["conv1.weight", "a"]
    assert loaded["a"]["b"].dtype is torch.bfloat16
    assert loaded["a"]["b"].tolist() == [1.5, -2.0]
    write_safetensors(
        {"__tensor__": np.arange(3)}, tmp_path / "t.pt", {"format": "jaxblitz.compat"}
    )
    assert torch.load(tmp_path / "t.pt").tolist() == [0, 1, 2]


def test_load_refuses_a_newer_format_clearly(tmp_path):
    from jaxblitz.integrity import CorruptFileError, write_safetensors

    metadata = {"format": "jaxblitz.compat", "version": "99", "structure": "{}"}
    write_safetensors({"x": np.ones(1)}, tmp_path / "new.pt", metadata)
    with pytest.raises(CorruptFileError, match="newer jaxblitz"):
        torch.load(tmp_path / "new.pt")


def test_save_load_structures_match_pytorchs_round_trip(tmp_path):
    """PyTorch reads each structure compat saves as the same structure."""
    pt = pytest.importorskip("torch")
    for name, saved in _structures().items():
        path = tmp_path / f"{name}.pt"
        torch.save(saved, path)
        theirs = pt.load(path, weights_only=True)
        assert _shape_of(theirs) == _shape_of(saved), name
        buffer = io.BytesIO()
        pt.save(_to_pytorch(saved, pt), buffer)
        buffer.seek(0)
        assert _shape_of(torch.load(buffer)) == _shape_of(saved), name


def _to_pytorch(obj, pt):
    if isinstance(obj, torch.Tensor):
        t = _pt_tensor(obj, pt)
        return pt.nn.Parameter(t) if isinstance(obj, torch.nn.Parameter) else t
    if isinstance(obj, torch.Size):
        return pt.Size(obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_pytorch(v, pt)) for k, v in obj.items())
    if isinstance(obj, list | tuple):
        return type(obj)(_to_pytorch(v, pt) for v in obj)
    return obj


def _shape_of(obj):
    """Structure, keys and scalars, with each tensor as its shape and kind."""
    if hasattr(obj, "shape") and hasattr(obj, "dtype"):
        return ("tensor", tuple(obj.shape), type(obj).__name__ == "Parameter")
    if isinstance(obj, dict):
        items = [((type(k).__name__, k), _shape_of(v)) for k, v in obj.items()]
        return (type(obj).__name__, items)
    if type(obj).__name__ == "Size":
        return ("Size", tuple(obj))
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, [_shape_of(v) for v in obj])
    return (type(obj).__name__, repr(obj))
