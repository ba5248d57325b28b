"""torch.version and torch.__version__: what compat claims (the torch API version
it implements, on a CPU-only build's terms), and TorchVersion's comparisons, rule
for rule against PyTorch's own class."""

import pytest

import jaxblitz.compat as ct
from jaxblitz.compat.torch_version import TorchVersion

pt = pytest.importorskip("torch")
from torch.torch_version import TorchVersion as TorchsVersion  # noqa: E402


def test_torch_version_answers_as_a_cpu_build_of_torch_2_13():
    assert ct.version.cuda is ct.version.hip is ct.version.rocm is None
    assert ct.version.xpu is None and ct.version.debug is False
    assert pt.version.cuda is None and pt.version.debug is False  # a CPU build's
    assert ct.version.git_version == "Unknown"
    assert ct.version.__version__ == "2.13.0+jaxblitz"
    assert sorted(ct.version.__all__) == sorted(pt.version.__all__)


def test_dunder_version_is_a_torch_version_of_the_api_compat_implements():
    version = ct.__version__
    assert isinstance(version, TorchVersion) and isinstance(version, str)
    assert str(version) == ct.version.__version__
    assert version.split("+")[0] == pt.__version__.split("+")[0] == "2.13.0"
    assert ct.torch_version.__version__ is version
    assert version >= "2.0" and version >= (2, 0) and version < (2, 14)
    assert version > "1.13.1" and not version < "2.13"


_OTHERS = [
    "2.13",
    "2.13.0",
    "2.13.0+jaxblitz",
    "2.2",
    "2.10.0",
    "10.0",
    "2.13.1rc1",
    "parrot",
    "",
    (2, 13),
    (2, 13, 0),
    [2, 9],
    (3,),
]


@pytest.mark.parametrize("other", _OTHERS, ids=repr)
@pytest.mark.parametrize("mine", ["2.13.0+jaxblitz", "2.13.0", "1.10.0a", "parrot"])
def test_torch_version_compares_as_torchs_does(mine, other):
    ours, theirs = TorchVersion(mine), TorchsVersion(mine)
    for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__", "__ne__"):
        assert getattr(ours, op)(other) == getattr(theirs, op)(other), op
    assert hash(ours) == hash(theirs) == hash(mine)


@pytest.mark.parametrize("other", [2.13, 3], ids=repr)
def test_torch_version_refuses_a_number_with_torchs_words(other):
    for version in (TorchVersion("2.13.0"), TorchsVersion("2.13.0")):
        with pytest.raises(TypeError) as caught:
            version < other  # noqa: B015 -- the comparison is the test
        name = type(version).__name__
        assert str(caught.value) == (
            f"'<' not supported between instances of '{name}' and "
            f"'{type(other).__name__}'"
        )
        assert (version == other) is False


def test_a_script_imports_torch_version_as_torchs():
    import jaxblitz.compat.version as version
    from jaxblitz.compat.version import cuda, git_version  # noqa: F401

    assert version is ct.version and cuda is None
