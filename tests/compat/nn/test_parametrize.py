"""compat's ``torch.nn.utils`` parametrizations (``parametrize``,
``parametrizations``, the hook-based ``weight_norm`` and ``spectral_norm``) against
real PyTorch: trajectories, state dicts both ways, names, errors."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat
RNG = np.random.default_rng(11)

# -- parametrize ----------------------------------------------------------------------

W = {
    "weight": RNG.standard_normal((4, 3)).astype(np.float32),
    "bias": RNG.standard_normal(4).astype(np.float32),
}
X = RNG.standard_normal((2, 3)).astype(np.float32)
UNIT = {  # fixed power-iteration vectors, as a torch state dict would bring them
    "u": (lambda a: a / np.linalg.norm(a))(RNG.standard_normal(4).astype(np.float32)),
    "v": (lambda a: a / np.linalg.norm(a))(RNG.standard_normal(3).astype(np.float32)),
}


def _linear(m):
    layer = m.nn.Linear(3, 4)
    layer.load_state_dict({k: m.tensor(v) for k, v in W.items()})
    return layer


def _symmetric(m):
    class Symmetric(m.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    return Symmetric()


def _run(m, layer, steps=2):
    """Outputs and gradients of a few SGD steps, and the state dict."""
    opt = m.optim.SGD(layer.parameters(), lr=0.1)
    seen = []
    for _ in range(steps):
        opt.zero_grad()
        y = layer(m.tensor(X))
        (y * y).sum().backward()
        seen.append([y, *[p.grad for p in layer.parameters()]])
        opt.step()
    return seen, dict(layer.state_dict())


def test_register_parametrization_swaps_the_class_and_keys_as_torch():
    def fn(m):
        P = m.nn.utils.parametrize
        layer = _linear(m)
        before = dict(layer.state_dict())
        P.register_parametrization(layer, "weight", _symmetric(m))
        names = [type(layer).__name__, type(layer).__mro__[1].__name__, repr(layer)]
        names += [P.is_parametrized(layer), P.is_parametrized(layer, "bias")]
        names.append(P.type_before_parametrizations(layer).__name__)
        return before, names, layer.weight, _run(m, layer)

    check(fn)


def test_assigning_a_parametrized_tensor_runs_right_inverse():
    def fn(m):
        layer = m.nn.Linear(3, 3)
        layer.load_state_dict({"weight": m.tensor(W["weight"][:3]), "bias": m.zeros(3)})
        m.nn.utils.parametrize.register_parametrization(layer, "weight", _symmetric(m))
        layer.weight = m.tensor(W["weight"][1:] * 2)
        return layer.parametrizations.weight.original, layer.weight

    check(fn)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_restores_the_class_and_a_plain_parameter(leave):
    def fn(m):
        P = m.nn.utils.parametrize
        layer = m.nn.Linear(3, 3)
        layer.load_state_dict({"weight": m.tensor(W["weight"][:3]), "bias": m.zeros(3)})
        P.register_parametrization(layer, "weight", _symmetric(m))
        P.remove_parametrizations(layer, "weight", leave_parametrized=leave)
        return type(layer).__name__, dict(layer.state_dict()), P.is_parametrized(layer)

    check(fn)


def test_cached_computes_each_parametrized_tensor_once():
    P = ct.nn.utils.parametrize
    layer = P.register_parametrization(ct.nn.Linear(3, 3), "weight", _symmetric(ct))
    calls = []
    layer.parametrizations.weight[0].register_forward_hook(lambda *a: calls.append(1))
    with P.cached():
        assert layer.weight is layer.weight
    assert len(calls) == 1
    assert layer.weight is not layer.weight


PARAMETRIZE_ERRORS = {
    "no_such_tensor": lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(2, 2), "nothing", _symmetric(m)
    ),
    "changes_shape": lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(3, 2), "weight", _Transpose(m)()
    ),
    "remove_unparametrized": lambda m: m.nn.utils.parametrize.remove_parametrizations(
        m.nn.Linear(2, 2), "weight"
    ),
    "weight_norm_twice": lambda m: m.nn.utils.weight_norm(
        m.nn.utils.weight_norm(m.nn.Linear(2, 2))
    ),
    "remove_missing_weight_norm": lambda m: m.nn.utils.remove_weight_norm(
        m.nn.Linear(2, 2)
    ),
    "remove_missing_spectral_norm": lambda m: m.nn.utils.remove_spectral_norm(
        m.nn.Linear(2, 2)
    ),
    "spectral_bad_dim": lambda m: m.nn.utils.parametrizations.spectral_norm(
        m.nn.Linear(2, 2), dim=2
    ),
    "spectral_no_iterations": lambda m: m.nn.utils.spectral_norm(
        m.nn.Linear(2, 2), n_power_iterations=0
    ),
}


def _Transpose(m):
    class Transpose(m.nn.Module):
        def forward(self, x):
            return x.t()

    return Transpose


@pytest.mark.parametrize("case", PARAMETRIZE_ERRORS)
def test_parametrize_errors_read_as_torchs(case):
    def fn(m):
        module = PARAMETRIZE_ERRORS[case](m)
        return type(module).__name__

    check(fn)


def test_parametrized_modules_refuse_pickling_and_deepcopy():
    import copy
    import pickle

    layer = ct.nn.utils.parametrizations.weight_norm(_linear(ct))
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(layer)
    twin = copy.deepcopy(layer)
    assert type(twin).__name__ == "ParametrizedLinear"
    np.testing.assert_array_equal(
        twin.weight.detach().numpy(), layer.weight.detach().numpy()
    )


# -- weight_norm and spectral_norm ----------------------------------------------------

NORMS = {
    "weight_norm": lambda m, x: m.nn.utils.parametrizations.weight_norm(x),
    "weight_norm_none": lambda m, x: m.nn.utils.parametrizations.weight_norm(
        x, dim=None
    ),
    "hooked_weight_norm": lambda m, x: m.nn.utils.weight_norm(x),
    "hooked_weight_norm_none": lambda m, x: m.nn.utils.weight_norm(x, dim=None),
    "spectral_norm": lambda m, x: m.nn.utils.parametrizations.spectral_norm(
        x, n_power_iterations=2
    ),
    "spectral_norm_dim1": lambda m, x: m.nn.utils.parametrizations.spectral_norm(
        x, dim=1
    ),
    "spectral_norm_bias": lambda m, x: m.nn.utils.parametrizations.spectral_norm(
        x, "bias"
    ),
    "hooked_spectral_norm": lambda m, x: m.nn.utils.spectral_norm(x),
}


def _fixed_vectors(m, layer, dim):
    """The power iteration's vectors set to UNIT (compat draws its own)."""
    sd = dict(layer.state_dict())
    u, v = (UNIT["v"], UNIT["u"]) if dim == 1 else (UNIT["u"], UNIT["v"])
    for key in sd:
        if key.endswith("_u"):
            sd[key] = m.tensor(u)
        elif key.endswith("_v") and (key != "weight_v" or "weight_orig" in sd):
            sd[key] = m.tensor(v)
    layer.load_state_dict(sd)


@pytest.mark.parametrize("case", NORMS)
def test_norms_train_as_torchs_with_torchs_names(case):
    def fn(m):
        layer = NORMS[case](m, _linear(m))
        _fixed_vectors(m, layer, 1 if case.endswith("dim1") else 0)
        trained = _run(m, layer)
        layer.eval()
        return trained, layer(m.tensor(X)), type(layer).__name__

    check(fn)


def test_spectral_norm_of_a_transposed_convolution_uses_dim_1():
    def fn(m):
        layer = m.nn.ConvTranspose1d(2, 3, 2)
        m.nn.utils.spectral_norm(layer)
        return {k: tuple(v.shape) for k, v in layer.state_dict().items()}

    check(fn)


def test_a_torch_state_dict_loads_into_a_parametrized_compat_module():
    t_layer = pt.nn.utils.parametrizations.spectral_norm(pt.nn.Linear(3, 4))
    t_layer = pt.nn.utils.parametrizations.weight_norm(t_layer, "bias", dim=None)
    c_layer = ct.nn.utils.parametrizations.spectral_norm(ct.nn.Linear(3, 4))
    c_layer = ct.nn.utils.parametrizations.weight_norm(c_layer, "bias", dim=None)
    c_layer.load_state_dict(
        {k: ct.tensor(v.numpy()) for k, v in t_layer.state_dict().items()}
    )
    t_layer.eval(), c_layer.eval()
    np.testing.assert_allclose(
        c_layer(ct.tensor(X)).detach().numpy(),
        t_layer(pt.tensor(X)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_hooked_weight_norm_warns_as_torch_and_removes():
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        layer = ct.nn.utils.weight_norm(_linear(ct))
    ct.nn.utils.remove_weight_norm(layer)
    assert list(layer.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(layer.weight.detach().numpy(), W["weight"], rtol=1e-6)
    layer = ct.nn.utils.spectral_norm(_linear(ct))
    ct.nn.utils.remove_spectral_norm(layer)
    assert list(layer.state_dict()) == ["bias", "weight"]


def test_a_parametrized_module_trains_in_lazy_mode_as_in_eager_mode():
    from jaxblitz.compat import lazy

    def train():
        layer = NORMS["spectral_norm"](ct, _linear(ct))
        _fixed_vectors(ct, layer, 0)
        layer = ct.nn.utils.parametrizations.weight_norm(layer, "bias", dim=None)
        seen, sd = _run(ct, layer, steps=2)
        return [t.detach().numpy() for t in seen[-1]], {
            k: v.numpy() for k, v in sd.items()
        }

    eager = train()
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        lazy_out = train()
    finally:
        lazy.set_lazy(was)
    for a, b in zip(eager[0], lazy_out[0], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert eager[1].keys() == lazy_out[1].keys()
    for k in eager[1]:
        np.testing.assert_allclose(lazy_out[1][k], eager[1][k], rtol=1e-5, atol=1e-6)


# -- orthogonal -----------------------------------------------------------------------

ORTHOGONAL = {
    "tall_default": ((4, 3), None),
    "square_cayley": ((3, 3), "cayley"),
    "wide_matrix_exp": ((3, 4), "matrix_exp"),
}


@pytest.mark.parametrize("case", ORTHOGONAL)
def test_orthogonal_trains_as_torchs(case):
    pytest.importorskip("jaxblitz.compat.linalg")
    shape, orthogonal_map = ORTHOGONAL[case]
    w = RNG.standard_normal(shape).astype(np.float32)
    x = RNG.standard_normal((2, shape[1])).astype(np.float32)
    n = max(shape)
    base = np.linalg.qr(RNG.standard_normal((n, n)))[0].astype(np.float32)

    def fn(m):
        layer = m.nn.Linear(shape[1], shape[0], bias=False)
        layer.load_state_dict({"weight": m.tensor(w)})
        m.nn.utils.parametrizations.orthogonal(layer, orthogonal_map=orthogonal_map)
        with m.no_grad():  # the base's extra columns come from a random draw
            layer.parametrizations.weight[0].base.copy_(m.tensor(base))
        first = layer.weight
        y = layer(m.tensor(x))
        (y * y).sum().backward()
        orthogonality = first.mT @ first if shape[0] > shape[1] else first @ first.mT
        return first, y, layer.parametrizations.weight.original.grad, orthogonality

    check(fn)


def test_orthogonal_assignment_and_errors_read_as_torchs():
    pytest.importorskip("jaxblitz.compat.linalg")
    q, r = np.linalg.qr(RNG.standard_normal((3, 3)))
    q = (q * np.sign(np.diag(r))).astype(np.float32)  # kept or remade: the same

    def fn(m):
        orthogonal = m.nn.utils.parametrizations.orthogonal
        layer = orthogonal(m.nn.Linear(3, 3))
        layer.weight = m.tensor(q)  # orthogonal already: kept as it is
        out = [layer.weight, layer.parametrizations.weight.original]
        for bad in (
            lambda: orthogonal(m.nn.Linear(3, 3), "bias"),
            lambda: orthogonal(m.nn.Linear(3, 3), orthogonal_map="qr"),
            lambda: setattr(layer, "weight", m.zeros(2, 3)),
        ):
            try:
                bad()
            except ValueError as error:
                out.append(str(error))
        return out

    check(fn)
