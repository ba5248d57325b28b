"""Every public function of torch.linalg, torch.special, torch.fft and
torch.nn.functional is offered by compat's namesake or refused by name: a
script that calls one compat lacks stops with a NotImplementedError naming it
and why (complex results, TorchScript's or __torch_function__'s helpers...),
never a bare AttributeError; a new torch release's function fails here until
it is decided."""

import importlib
import inspect

import pytest

from jaxblitz.compat._not_offered import REASONS, NotOffered

pt = pytest.importorskip("torch")

NAMESPACES = ("linalg", "special", "fft", "nn.functional")


def _functions(module) -> list[str]:
    """The public functions: no classes, nor the typing names it imports."""
    found = []
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or not callable(value) or inspect.isclass(value):
            continue
        if getattr(value, "__module__", None) != "typing":
            found.append(name)
    return sorted(found)


def _both(namespace: str):
    ours = importlib.import_module(f"jaxblitz.compat.{namespace}")
    return ours, importlib.import_module(f"torch.{namespace}")


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_function_is_offered_or_refused_by_name(namespace):
    ours, theirs = _both(namespace)
    unexplained = []
    for name in _functions(theirs):
        try:
            getattr(ours, name)
        except NotOffered as e:
            what = f"torch.{namespace}.{name} is not supported by jaxblitz.compat: "
            assert what in str(e)
        except AttributeError:
            unexplained.append(name)
    assert not unexplained, f"absent with no reason given: {unexplained}"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_a_refused_name_is_one_torch_has_and_compat_does_not_offer(namespace):
    ours, theirs = _both(namespace)
    refused = REASONS.get(f"torch.{namespace}", {})
    assert not [name for name in refused if name in vars(ours)]
    assert not [name for name in refused if not hasattr(theirs, name)]
    assert not [name for name in refused if hasattr(ours, name)]  # hasattr: False


def test_linalg_refuses_the_complex_results_and_ldl_saying_why():
    from jaxblitz.compat import linalg

    with pytest.raises(NotImplementedError, match="compat has no complex dtypes"):
        linalg.eig  # noqa: B018 -- reading the name is the test
    with pytest.raises(NotImplementedError, match="torch.linalg.eigvalsh"):
        linalg.eigvals  # noqa: B018
    with pytest.raises(NotImplementedError, match="LDL"):
        linalg.ldl_factor_ex  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        linalg.no_such_name  # noqa: B018 -- a name torch lacks too: the plain error


def test_assert_int_or_pair_checks_as_torchs_does():
    from jaxblitz.compat.nn import functional as F

    for arg in (3, (1, 2), [4, 5]):
        assert F.assert_int_or_pair(arg, "kernel_size", "{} bad") is None
        assert pt.nn.functional.assert_int_or_pair(arg, "kernel_size", "{} bad") is None
    for module in (F, pt.nn.functional):
        with pytest.raises(AssertionError, match="^kernel_size must be a pair$"):
            module.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be a pair")


@pytest.mark.parametrize(
    "name", ["torch.random", "torch.optim.optimizer", "torch.backends"]
)
def test_every_name_torch_exports_from_these_modules_is_offered_or_refused(name):
    import sys

    ours = importlib.import_module("jaxblitz.compat" + name.removeprefix("torch"))
    importlib.import_module(name)
    theirs = sys.modules[name]
    names = getattr(theirs, "__all__", None) or [
        n for n in dir(theirs) if not n.startswith("_") and n not in ("torch", "m")
    ]
    unexplained = []
    for attr in names:
        if inspect.ismodule(getattr(theirs, attr)) and name != "torch.backends":
            continue  # the modules it imports (warnings...), not its names
        try:
            getattr(ours, attr)
        except NotOffered:
            pass
        except AttributeError:
            unexplained.append(attr)
    assert not unexplained


def test_required_is_torchs_marker_for_a_hyperparameter_without_default():
    from torch.optim.optimizer import required as theirs

    from jaxblitz.compat.optim.optimizer import required

    assert repr(required) == repr(theirs)
    from jaxblitz.compat.optim.optimizer import register_optimizer_step_pre_hook

    with pytest.raises(NotImplementedError, match="global optimizer hooks"):
        register_optimizer_step_pre_hook(lambda *args: None)


def test_torch_random_holds_the_default_generator():
    import jaxblitz.compat as torch

    assert torch.random.default_generator is torch.default_generator
    assert isinstance(torch.random.default_generator, torch.random.Generator)
    torch.random.default_generator.manual_seed(3)
    first = torch.rand(2).tolist()
    torch.manual_seed(3)
    assert torch.rand(2).tolist() == first


def test_every_public_name_of_torch_distributions_is_offered_or_refused():
    """Classes, functions and submodules alike (``torch.distributions.weibull``):
    a script's ``from torch.distributions.x import Y`` finds compat's."""
    ours = importlib.import_module("jaxblitz.compat.distributions")
    theirs = importlib.import_module("torch.distributions")
    refused = REASONS.get("torch.distributions", {})
    unexplained = []
    for name in sorted(n for n in dir(theirs) if not n.startswith("_")):
        try:
            getattr(ours, name)
        except NotOffered as e:
            assert name in refused
            assert f"torch.distributions.{name} is not supported" in str(e)
        except AttributeError:
            unexplained.append(name)
    assert not unexplained, f"absent with no reason given: {unexplained}"


def test_every_public_tensor_method_is_offered_or_refused_by_name():
    import jaxblitz.compat as ct

    unexplained = []
    for name in dir(pt.Tensor):
        if name.startswith("_"):
            continue
        try:
            getattr(ct.Tensor, name)
        except NotOffered:
            pass
        except AttributeError:
            unexplained.append(name)
    assert not unexplained, f"absent with no reason given: {unexplained}"


@pytest.mark.parametrize(
    ("module", "name", "why"),
    [
        ("jaxblitz.compat.nn", "LinearCrossEntropyLoss", "fused linear"),
        ("jaxblitz.compat", "sparse_coo_tensor", "sparse tensors"),
        ("jaxblitz.compat.cuda", "CUDAGraph", "no CUDA graphs"),
    ],
)
def test_a_refused_name_imported_with_from_says_why(module, name, why):
    namespace: dict = {}
    with pytest.raises(ImportError, match=f"{name} is not supported.*{why}") as e:
        exec(f"from {module} import {name}", namespace)  # noqa: S102 -- the statement
    assert isinstance(e.value, NotImplementedError)
    ours = importlib.import_module(module)
    assert not hasattr(ours, name)
    with pytest.raises(NotOffered, match=why):
        getattr(ours, name)
    # a script's fallback still runs
    exec(  # noqa: S102
        f"try:\n    from {module} import {name}\nexcept ImportError:\n    {name} = 1",
        namespace,
    )
    assert namespace[name] == 1
    with pytest.raises(ImportError, match="cannot import name 'no_such_name'"):
        exec(f"from {module} import no_such_name", namespace)  # noqa: S102
