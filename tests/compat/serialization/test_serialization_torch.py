"""compat ``torch.save`` / ``torch.load`` against real PyTorch, both directions.

Files real ``torch.save`` writes (zip and legacy) load in compat with the same
values, dtypes, shapes, strides, offsets, sharing and Parameters; files compat
writes load in real ``torch.load(weights_only=True)`` the same way.
"""

import io
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest

import jaxblitz.compat as torch

pt = pytest.importorskip("torch")

FORMATS = {"zip": True, "legacy": False}


def _theirs_to_ours(obj, fmt, tmp_path):
    path = tmp_path / "theirs.pt"
    pt.save(obj, path, _use_new_zipfile_serialization=FORMATS[fmt])
    return torch.load(path)


def _ours_to_theirs(obj, fmt, tmp_path):
    path = tmp_path / "ours.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=FORMATS[fmt])
    return pt.load(path, weights_only=True)


def _bits(t) -> np.ndarray:
    t = t.detach()
    if t.dtype in (pt.bfloat16, torch.bfloat16):
        t = t.view(pt.int16) if isinstance(t, pt.Tensor) else t.view(torch.int16)
    return np.asarray(t.numpy() if isinstance(t, pt.Tensor) else t)


def _assert_same_tensor(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.requires_grad == theirs.requires_grad
    assert isinstance(ours, torch.nn.Parameter) == isinstance(theirs, pt.nn.Parameter)
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))


def _assert_same(ours, theirs):
    if isinstance(theirs, pt.Tensor) or isinstance(ours, torch.Tensor):
        _assert_same_tensor(ours, theirs)
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__
        assert list(ours) == list(theirs)
        for key in theirs:
            _assert_same(ours[key], theirs[key])
    elif isinstance(theirs, list | tuple):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _assert_same(a, b)
    else:
        assert ours == theirs and type(ours) is type(theirs)


class TheirNet(pt.nn.Module):  # the Blitz's CIFAR-10 Net
    def __init__(self):
        super().__init__()
        self.conv1 = pt.nn.Conv2d(3, 6, 5)
        self.bn = pt.nn.BatchNorm2d(6)
        self.conv2 = pt.nn.Conv2d(6, 16, 5)
        self.fc1 = pt.nn.Linear(16 * 5 * 5, 10)


def _their_objects():
    pt.manual_seed(0)
    net = TheirNet()
    base = pt.arange(12.0).reshape(3, 4)
    params = [pt.nn.Parameter(pt.randn(3)), pt.nn.Parameter(pt.randn(2, 2))]
    sgd = pt.optim.SGD(params, lr=0.1, momentum=0.9)
    adam = pt.optim.Adam(params, lr=0.01)
    for opt in (sgd, adam):
        sum(p.sum() for p in params).backward()
        opt.step()
    return {
        "cnn_state_dict": net.state_dict(),
        "sgd_state_dict": sgd.state_dict(),
        "adam_state_dict": adam.state_dict(),
        "parameter": pt.nn.Parameter(pt.randn(2, 3)),
        "frozen_parameter": pt.nn.Parameter(pt.ones(2), requires_grad=False),
        "requires_grad": pt.ones(2, requires_grad=True),
        "views": {"base": base, "t": base.t(), "row": base[1], "cols": base[:, 1::2]},
        "dtypes": {
            str(d): pt.arange(5).to(d)
            for d in (pt.int64, pt.int32, pt.int16, pt.int8, pt.uint8, pt.bool,
                      pt.float16, pt.bfloat16, pt.float64, pt.float32)
        },  # fmt: skip
        "non_contiguous": pt.randn(4, 5)[::2, 1:4].t(),
        "expanded": pt.randn(3, 1).expand(3, 4),
        "zero_dim": pt.tensor(2.5),
        "empty": pt.ones(0, 3),
        "scalars": {"epoch": 3, "loss": 0.25, "big": 2**70, "neg": -(2**40),
                    "name": "net", "none": None, "flag": True, "b": b"\x00\xff"},
        "nested": [pt.ones(1), (pt.zeros(2), [{"k": pt.Size([2, 3])}]), {1: "one"}],
        "dtype_and_device": {"dtype": pt.float16, "device": pt.device("cpu")},
        "a_set": {1, "two", (3, 4)},
    }  # fmt: skip


OBJECTS = list(_their_objects())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", OBJECTS)
def test_real_torch_files_load_the_same_in_compat(name, fmt, tmp_path):
    theirs = _their_objects()[name]
    ours = _theirs_to_ours(theirs, fmt, tmp_path)
    if name == "dtype_and_device":
        assert ours == {"dtype": torch.float16, "device": torch.device("cpu")}
    elif name == "a_set":
        assert ours == theirs
    else:
        _assert_same(ours, theirs)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", OBJECTS)
def test_compat_files_load_the_same_in_real_torch(name, fmt, tmp_path):
    ours = _theirs_to_ours(_their_objects()[name], fmt, tmp_path)
    theirs = _ours_to_theirs(ours, fmt, tmp_path)
    if name == "dtype_and_device":
        assert theirs == {"dtype": pt.float16, "device": pt.device("cpu")}
    elif name == "a_set":
        assert theirs == ours
    else:
        _assert_same(ours, theirs)


@pytest.mark.parametrize("fmt", FORMATS)
def test_tensors_sharing_a_storage_share_it_after_loading(fmt, tmp_path):
    base = pt.arange(6.0)
    ours = _theirs_to_ours({"a": base, "v": base.view(2, 3)[:, 1], "same": base}, fmt,
                           tmp_path)  # fmt: skip
    assert ours["a"] is ours["same"]
    ours["a"].add_(10)
    assert ours["v"].tolist() == [11.0, 14.0]
    theirs = _ours_to_theirs(ours, fmt, tmp_path)
    assert theirs["a"] is theirs["same"]
    assert theirs["a"].untyped_storage().data_ptr() == (
        theirs["v"].untyped_storage().data_ptr()
    )
    theirs["a"].add_(1)
    assert theirs["v"].tolist() == [12.0, 15.0]


def test_a_state_dict_keeps_its_metadata_both_ways(tmp_path):
    state = pt.nn.Linear(2, 1).state_dict()
    ours = _theirs_to_ours(state, "zip", tmp_path)
    assert type(ours) is OrderedDict and ours._metadata == state._metadata
    theirs = _ours_to_theirs(ours, "zip", tmp_path)
    assert theirs._metadata == state._metadata


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_counter_is_saved_as_torch_saves_it_and_loads_both_ways(fmt, tmp_path):
    # a MultiStepLR's state_dict holds its milestones as a Counter
    milestones = Counter({2: 1, 4: 2})
    obj = {"milestones": milestones, "again": milestones, "lr": torch.tensor([0.1])}
    theirs = _ours_to_theirs(obj, fmt, tmp_path)
    assert type(theirs["milestones"]) is Counter
    assert (
        theirs["milestones"] == milestones and theirs["again"] is theirs["milestones"]
    )
    ours = _theirs_to_ours(theirs, fmt, tmp_path)
    assert type(ours["milestones"]) is Counter and ours["milestones"] == milestones
    assert ours["again"] is ours["milestones"]


def test_a_real_torch_state_dict_loads_into_the_compat_blitz_net(tmp_path):
    from benchmarks.bench_compat import blitz_net
    from tests.compat.blitz_net import Net

    theirs = blitz_net(pt, pt.nn, pt.nn.functional)
    pt.save(theirs.state_dict(), tmp_path / "cifar_net.pth")
    net = Net()
    net.load_state_dict(torch.load(tmp_path / "cifar_net.pth", weights_only=True))
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32), np.float32)
    with pt.no_grad():
        expected = theirs(pt.from_numpy(x)).numpy()
    got = net(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    torch.save(net.state_dict(), tmp_path / "back.pth")
    theirs.load_state_dict(pt.load(tmp_path / "back.pth", weights_only=True))


def test_file_objects_work_both_ways():
    buffer = io.BytesIO()
    pt.save({"w": pt.arange(3.0)}, buffer)
    buffer.seek(0)
    ours = torch.load(buffer)
    assert ours["w"].tolist() == [0.0, 1.0, 2.0]
    out = io.BytesIO()
    torch.save(ours, out)
    out.seek(0)
    assert pt.load(out, weights_only=True)["w"].tolist() == [0.0, 1.0, 2.0]
    assert zipfile.ZipFile(out).namelist()[0] == "archive/data.pkl"


def test_saved_storages_are_aligned_as_torch_writes_them(tmp_path):
    torch.save({"a": torch.ones(3), "b": torch.zeros(5)}, tmp_path / "x.pt")
    archive = zipfile.ZipFile(tmp_path / "x.pt")
    for info in archive.infolist():
        if "/data/" in info.filename:
            start = info.header_offset + 30 + len(info.filename) + len(info.extra)
            assert start % 64 == 0, info.filename
    loaded = pt.load(tmp_path / "x.pt", weights_only=True, mmap=True)
    assert loaded["b"].tolist() == [0.0] * 5


def _with_location(path, location: str):
    """The zip at ``path`` with every storage's location tag set to ``location``."""
    archive = zipfile.ZipFile(path)
    out = path.with_name("moved.pt")
    with zipfile.ZipFile(out, "w") as moved:
        for info in archive.infolist():
            raw = archive.read(info)
            if info.filename.endswith("data.pkl"):
                tag = location.encode()
                raw = raw.replace(
                    b"X\x03\x00\x00\x00cpu", b"X" + bytes([len(tag), 0, 0, 0]) + tag
                )
            moved.writestr(info.filename, raw)
    return out


def test_map_location_maps_saved_devices_as_torch(tmp_path):
    pt.save({"w": pt.ones(2)}, tmp_path / "w.pt")
    cuda = _with_location(tmp_path / "w.pt", "cuda:0")
    for where in ("cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s):
        assert torch.load(cuda, map_location=where)["w"].tolist() == [1.0, 1.0]
        theirs_where = pt.device("cpu") if isinstance(where, torch.device) else where
        assert pt.load(cuda, map_location=theirs_where)["w"].tolist() == [1.0, 1.0]
    if torch.cuda.is_available():
        return
    with pytest.raises(RuntimeError) as ours:
        torch.load(cuda)
    with pytest.raises(RuntimeError) as theirs:
        pt.load(cuda)
    assert str(ours.value) == str(theirs.value)


def test_a_map_location_that_moves_storages_is_refused_by_name(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "w.pt")
    with pytest.raises(NotImplementedError, match="map_location callable"):
        torch.load(tmp_path / "w.pt", map_location=lambda s, loc: object())


def test_mmap_takes_paths_of_zip_files_as_torch(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "zip.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pt",
               _use_new_zipfile_serialization=False)  # fmt: skip
    assert torch.load(tmp_path / "zip.pt", mmap=True)["w"].tolist() == [1.0, 1.0]
    for module in (torch, pt):
        with pytest.raises(ValueError, match="f must be a file path"):
            module.load(io.BytesIO((tmp_path / "zip.pt").read_bytes()), mmap=True)
        with pytest.raises(
            RuntimeError, match="mmap can only be used with files saved"
        ):
            module.load(tmp_path / "old.pt", mmap=True)


def test_weights_only_false_reads_weights_the_same_safe_way(tmp_path):
    pt.save({"w": pt.arange(3)}, tmp_path / "w.pt")
    assert torch.load(tmp_path / "w.pt", weights_only=False)["w"].tolist() == [0, 1, 2]


def test_save_writes_atomically_and_needs_the_parent_folder(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        torch.save({"w": torch.ones(1), "bad": print}, path)
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]
    for module in (torch, pt):
        with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
            module.save({}, tmp_path / "missing" / "w.pt")


def test_unsupported_save_options_are_refused_by_name(tmp_path):
    with pytest.raises(NotImplementedError, match="pickle_protocol=4"):
        torch.save({}, tmp_path / "x.pt", pickle_protocol=4)
    with pytest.raises(NotImplementedError, match="view\\(dtype\\)"):
        torch.save(torch.ones(2).view(torch.int32), tmp_path / "x.pt")


def test_complex_tensors_are_refused_by_name(tmp_path):
    pt.save({"z": pt.ones(2, dtype=pt.complex64)}, tmp_path / "z.pt")
    with pytest.raises(NotImplementedError, match="ComplexFloat"):
        torch.load(tmp_path / "z.pt")
