"""``torch.serialization``'s safe globals in compat: files written by real
``torch.save`` that name the user's own classes load once the user trusts them
(``add_safe_globals``, ``safe_globals``), as with PyTorch's
``torch.load(weights_only=True)``, and are refused in PyTorch's words before."""

from __future__ import annotations

import collections
import dataclasses
import enum
import pickle

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


@dataclasses.dataclass
class Config:
    lr: float
    layers: list


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


Point = collections.namedtuple("Point", "x y")


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


class Stateful:
    def __init__(self, n):
        self.n = n

    def __getstate__(self):
        return {"twice": 2 * self.n}

    def __setstate__(self, state):
        self.n = state["twice"] // 2


@pytest.fixture(autouse=True)
def no_safe_globals():
    """Each test starts and ends with no safe globals, in compat and in torch."""
    for torch in (ct, pt):
        torch.serialization.clear_safe_globals()
    yield
    for torch in (ct, pt):
        torch.serialization.clear_safe_globals()


def saved(tmp_path, obj, name="ckpt.pt", **options):
    path = tmp_path / name
    pt.save(obj, path, **options)
    return path


def checkpoint():
    return {
        "cfg": Config(lr=0.1, layers=[3, 4]),
        "weight": pt.arange(6, dtype=pt.float32).reshape(2, 3),
    }


def load_error(torch, path):
    with pytest.raises(pickle.UnpicklingError) as info:
        torch.load(path, weights_only=True)
    return str(info.value)


@pytest.mark.parametrize("legacy", [False, True])
def test_a_users_class_is_refused_in_pytorchs_words_until_trusted(tmp_path, legacy):
    path = saved(tmp_path, checkpoint(), _use_new_zipfile_serialization=not legacy)
    unsupported = (
        f"Unsupported global: GLOBAL {__name__}.Config was not an allowed global by "
        f"default. Please use `torch.serialization.add_safe_globals([{__name__}."
        "Config])`"
    )
    for torch in (ct, pt):
        assert unsupported in load_error(torch, path)
        torch.serialization.add_safe_globals([Config])
        assert torch.serialization.get_safe_globals() == [Config]
        loaded = torch.load(path, weights_only=True)
        assert loaded["cfg"] == Config(lr=0.1, layers=[3, 4])
        np.testing.assert_array_equal(
            np.asarray(loaded["weight"]), np.arange(6.0).reshape(2, 3)
        )
    assert type(loaded["weight"]) is pt.Tensor


def test_the_safe_globals_context_manager_trusts_only_inside(tmp_path):
    path = saved(tmp_path, checkpoint())
    for torch in (ct, pt):
        torch.serialization.add_safe_globals([Mode])
        with torch.serialization.safe_globals([Config]):
            assert set(torch.serialization.get_safe_globals()) == {Mode, Config}
            assert torch.load(path)["cfg"].layers == [3, 4]
        assert torch.serialization.get_safe_globals() == [Mode]
        assert "GLOBAL" in load_error(torch, path)
        torch.serialization.clear_safe_globals()
        assert torch.serialization.get_safe_globals() == []


def test_enums_namedtuples_slots_and_setstate_load_as_in_pytorch(tmp_path):
    obj = {
        "mode": Mode.EVAL,
        "point": Point(1, pt.ones(2)),
        "slotted": Slotted(3, "b"),
        "stateful": Stateful(21),
        "kind": Config,  # a class as a value
    }
    path = saved(tmp_path, obj)
    trusted = [Mode, Point, Slotted, Stateful, Config]
    for torch in (ct, pt):
        with torch.serialization.safe_globals(trusted):
            loaded = torch.load(path, weights_only=True)
        assert loaded["mode"] is Mode.EVAL
        assert type(loaded["point"]) is Point and loaded["point"].x == 1
        assert loaded["point"].y.tolist() == [1.0, 1.0]
        assert (loaded["slotted"].a, loaded["slotted"].b) == (3, "b")
        assert loaded["stateful"].n == 21
        assert loaded["kind"] is Config


def test_a_safe_global_under_another_name_and_malformed_entries(tmp_path):
    path = saved(tmp_path, checkpoint())
    for torch in (ct, pt):
        with torch.serialization.safe_globals([(Config, f"{__name__}.Config")]):
            assert torch.load(path)["cfg"].lr == 0.1
        with torch.serialization.safe_globals([(Config, "elsewhere.Config")]):
            assert "GLOBAL" in load_error(torch, path)
        with (
            torch.serialization.safe_globals([(Config, "a", "b")]),
            pytest.raises(ValueError, match="Expected tuple of length 2"),
        ):
            torch.load(path)
        with (
            torch.serialization.safe_globals([(Config, 3)]),
            pytest.raises(TypeError, match="to be str of callable full path"),
        ):
            torch.load(path)


def test_trusting_one_class_lets_nothing_else_through(tmp_path):
    path = saved(tmp_path, {"cfg": Config(0.5, [Mode.TRAIN])})
    for torch in (ct, pt):
        with torch.serialization.safe_globals([Config]):
            assert f"GLOBAL {__name__}.Mode was not" in load_error(torch, path)
    # the blocked modules stay blocked, trusted or not
    payload = b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03."
    (tmp_path / "os.pt").write_bytes(payload)
    import os

    with ct.serialization.safe_globals([os.system]):
        assert "whose module os is blocked" in load_error(ct, tmp_path / "os.pt")
