"""No load path runs a pickle: a crafted one never runs.

``load_weights`` and checkpoints refuse PyTorch pickles; ``jaxblitz.compat.load``
reads them with its own weights-only opcode interpreter (never Python's pickle),
which refuses every global outside PyTorch's ``weights_only=True`` allowlist.
"""

import ast
import importlib.util
import pickle
import zipfile
from pathlib import Path

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz import integrity, models, train
from jaxblitz.checkpoints import Checkpointer, CorruptFileError, load_weights
from tests.parsing import parse

ROOT = Path(__file__).resolve().parents[1]
HAVE_TORCH = importlib.util.find_spec("torch") is not None


class _WritesMarker:
    """Unpickling this runs ``exec``, which writes a marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        code = f"open({str(self.marker)!r}, 'w').write('pwned')"
        return (exec, (code,))


def crafted_files(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A legacy pickle (``.pth``) and a torch.save-style zip (``.pt``), both armed."""
    marker = tmp_path / "marker.txt"
    payload = pickle.dumps({"conv1.weight": _WritesMarker(marker)}, protocol=2)
    legacy = tmp_path / "model.pth"
    legacy.write_bytes(payload)
    archive = tmp_path / "model.pt"
    with zipfile.ZipFile(archive, "w") as z:  # torch.save's layout
        z.writestr("model/data.pkl", payload)
        z.writestr("model/version", "3\n")
    return marker, [legacy, archive]


def test_the_crafted_pickle_really_writes_its_marker_when_unpickled(tmp_path):
    marker, (legacy, _) = crafted_files(tmp_path)
    pickle.loads(legacy.read_bytes())  # what torch.load(weights_only=False) does
    assert marker.read_text() == "pwned"


@pytest.mark.parametrize("loader", ["compat.load", "load_weights"])
def test_crafted_pickles_are_refused_and_never_run(tmp_path, loader):
    marker, files = crafted_files(tmp_path)
    load = torch.load if loader == "compat.load" else load_weights
    for path in files:
        with pytest.raises(CorruptFileError) as info:
            load(path)
        message = str(info.value)
        if loader == "compat.load":  # PyTorch's weights-only refusal, by name
            assert isinstance(info.value, pickle.UnpicklingError)
            assert "Weights only load failed" in message
            assert (
                "Unsupported global: GLOBAL exec was not an allowed global" in message
            )
            assert "never unpickles arbitrary objects" in message
        else:
            assert f"{path} is a PyTorch pickle" in message
            assert "never unpickles" in message and "load_weights" in message
        assert "arbitrary code" in message
    assert not marker.exists()


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
def test_real_torch_refuses_the_crafted_pickles_too(tmp_path):
    import torch as real_torch

    marker, files = crafted_files(tmp_path)
    for path in files:
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL exec"):
            real_torch.load(path, weights_only=True)
    assert not marker.exists()


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
def test_load_weights_refuses_a_real_torch_file_with_a_conversion(tmp_path):
    import safetensors.torch
    import torch as real_torch

    path = tmp_path / "net.pth"
    real_torch.save({"fc.weight": real_torch.arange(6.0).reshape(2, 3)}, path)
    with pytest.raises(CorruptFileError) as info:
        load_weights(path)
    message = str(info.value)
    assert "a zip archive, torch.save's default format" in message
    assert "PyTorch is installed: convert it once with" in message
    # The suggested conversion is runnable as printed and gives a loadable file.
    snippet = "\n".join(
        line.strip() for line in message.splitlines() if line.startswith("    ")
    )
    assert f"torch.load({str(path)!r}, weights_only=True)" in snippet
    namespace = {"torch": real_torch, "safetensors": safetensors}
    exec(snippet.replace("'net.safetensors'", repr(str(tmp_path / "net.st"))),
         namespace)  # fmt: skip
    loaded = torch.load(tmp_path / "net.st")
    np.testing.assert_array_equal(
        loaded["fc.weight"].numpy(), np.arange(6.0).reshape(2, 3)
    )


def test_without_torch_the_message_says_to_install_it(tmp_path, monkeypatch):
    _, (legacy, _) = crafted_files(tmp_path)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "torch" else real_find_spec(name, *a),
    )
    with pytest.raises(CorruptFileError, match=r"Install PyTorch \(pip install"):
        load_weights(legacy)


def test_no_load_path_calls_pickle(tmp_path, monkeypatch):
    """Round trips through every loader with pickle's entry points booby-trapped."""

    def trap(*args, **kwargs):
        raise AssertionError("a jaxblitz load path tried to unpickle")

    config = train.Config(dataset="digits")
    state = train.init_state(config, 1)
    checkpointer = Checkpointer(tmp_path / "ckpt")
    checkpointer.save(0, state, {"epoch": 0})
    torch.save({"w": torch.ones(2)}, tmp_path / "t.pt")
    from jaxblitz.checkpoints import save_weights

    save_weights(state.params, tmp_path / "w.safetensors")
    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, trap)
    restored, meta = checkpointer.restore(state)
    checkpointer.close()
    assert meta == {"epoch": 0} and int(restored.step) == 0
    assert torch.load(tmp_path / "t.pt")["w"].tolist() == [1.0, 1.0]
    weights = load_weights(tmp_path / "w.safetensors", like=state.params)
    assert models.count_params(weights) == models.count_params(state.params)
    assert jax.tree.structure(weights) == jax.tree.structure(state.params)


def _pickle_uses(path: Path) -> list[str]:
    """Calls of pickle.load(s)/torch.load, Unpickler subclasses and classes, np.load
    that may unpickle (no ``allow_pickle=False``) in one source file."""
    found = []
    for node in ast.walk(parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "Unpickler":
            found.append(f"{path.name}:{node.lineno}: Unpickler")
        if isinstance(node, ast.ClassDef) and "unpickler" in node.name.lower():
            found.append(f"{path.name}:{node.lineno}: class {node.name}")
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = ast.unparse(node.func.value)
        name = node.func.attr
        if (owner, name) in {("pickle", "load"), ("pickle", "loads"),
                             ("torch", "load"), ("marshal", "loads")}:  # fmt: skip
            found.append(f"{path.name}:{node.lineno}: {owner}.{name}")
        if (owner, name) in {("np", "load"), ("numpy", "load"), ("jnp", "load")}:
            safe = any(
                k.arg == "allow_pickle"
                and isinstance(k.value, ast.Constant)
                and k.value.value is False
                for k in node.keywords
            )
            if not safe:
                found.append(f"{path.name}:{node.lineno}: {owner}.load")
    return found


# The only unpicklers, by file: torchvision's CIFAR-10 archive *is* pickles, and
# archives.py's unpickler allows only NumPy arrays and builtins (tests/test_data.py
# shows os.system refused); compat's torch.load reads PyTorch's pickles with its own
# opcode interpreter and PyTorch's weights-only allowlist (the hostile files of
# tests/compat/serialization/test_serialization_hostile.py are refused). compat's
# DataLoader workers pass the user's own dataset and batches between the user's
# process and the worker processes it starts, over pipes only those processes hold
# (as torch's DataLoader does): never bytes read from a file or the network.
ALLOWED_UNPICKLERS = {
    "jaxblitz/data/archives.py": ["class _ArrayUnpickler", "Unpickler"],
    "jaxblitz/compat/serialization/_unpickler.py": ["class Unpickler"],
    "jaxblitz/compat/utils/_pool.py": ["pickle.loads"],
    "jaxblitz/compat/utils/_worker.py": ["pickle.loads", "pickle.loads"],
    "jaxblitz/compat/utils/_zygote.py": ["pickle.loads"],
}


def test_the_only_unpicklers_in_the_package_are_the_restricted_ones():
    found: dict[str, list[str]] = {}
    for p in sorted((ROOT / "jaxblitz").rglob("*.py")):
        for use in _pickle_uses(p):
            found.setdefault(p.relative_to(ROOT).as_posix(), []).append(
                use.split(": ", 1)[1]
            )
    assert found == ALLOWED_UNPICKLERS
    assert integrity.CHECKSUM_KEY == "jaxblitz.sha256"


def test_the_compat_unpickler_never_touches_pythons_unpickling():
    source = (ROOT / "jaxblitz/compat/serialization/_unpickler.py").read_text()
    tree = parse(source)
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not names & {"Unpickler", "load", "loads", "find_class", "__reduce__"}
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not {c for c in calls if c.startswith(("getattr", "__import__", "eval"))}
