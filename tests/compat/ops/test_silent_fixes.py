"""compat against PyTorch where the differential suite found silent differences:
norms over nothing and over one element, cov's weighted form, the singular value
decomposition compared as PyTorch's own tests compare it, and the suite's
float64 measure for float32 rounding."""

import math

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy())


@pytest.mark.parametrize("ord", ["nuc", 1, 2, math.inf, -1, -2, -math.inf])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3)])
def test_matrix_norm_of_an_empty_matrix_is_torchs(shape, ord):
    x = np.zeros(shape)
    try:
        want = torch.linalg.matrix_norm(torch.tensor(x), ord, keepdim=True)
    except IndexError as e:
        with pytest.raises(IndexError, match=str(e).split(":")[0]):
            compat.linalg.matrix_norm(compat.tensor(x), ord, keepdim=True)
        return
    got = compat.linalg.matrix_norm(compat.tensor(x), ord, keepdim=True)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(_np(got), want.numpy())


@pytest.mark.parametrize("p", [0.5, 3.0, -1.0])
def test_a_norm_over_one_element_is_its_absolute_value(p):
    x = np.array([[0.0, -1.5, 0.0129321813, 3.0]], np.float32)
    t = torch.tensor(x, requires_grad=True)
    c = compat.tensor(x).requires_grad_()
    want = torch.linalg.vector_norm(t, p, dim=0)
    got = compat.linalg.vector_norm(c, p, dim=0)
    np.testing.assert_array_equal(_np(got), want.detach().numpy())
    got.backward(compat.ones_like(got))
    np.testing.assert_array_equal(_np(c.grad), [[0.0, -1.0, 1.0, 1.0]])


def test_normalize_along_a_single_element_matches_torchs_gradient():
    # the gradient is 0 in exact arithmetic: what is left is each one's rounding
    x = np.array([[0.0129321813, -2.0, 0.5]], np.float32)
    cot = np.array([[0.7, -1.3, 2.1]], np.float32)
    t = torch.tensor(x, requires_grad=True)
    c = compat.tensor(x).requires_grad_()
    want = torch.nn.functional.normalize(t, p=0.5, dim=0)
    got = compat.nn.functional.normalize(c, p=0.5, dim=0)
    np.testing.assert_array_equal(_np(got), want.detach().numpy())
    want.backward(torch.tensor(cot))
    got.backward(compat.tensor(cot))
    np.testing.assert_allclose(_np(c.grad), t.grad.numpy(), rtol=0, atol=1e-5)


def test_weighted_cov_and_its_gradients_match_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5))
    fw = np.array([1, 2, 1, 3, 1])
    aw = rng.random(5)
    cot = rng.standard_normal((3, 3))
    t, ta = torch.tensor(x, requires_grad=True), torch.tensor(aw, requires_grad=True)
    c, ca = compat.tensor(x).requires_grad_(), compat.tensor(aw).requires_grad_()
    want = torch.cov(t, correction=2, fweights=torch.tensor(fw), aweights=ta)
    got = compat.cov(c, correction=2, fweights=compat.tensor(fw), aweights=ca)
    np.testing.assert_allclose(_np(got), want.detach().numpy(), rtol=1e-12)
    want.backward(torch.tensor(cot))
    got.backward(compat.tensor(cot))
    np.testing.assert_allclose(_np(c.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(ca.grad), ta.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_agrees_with_torch_up_to_the_signs_of_its_vectors(shape, full):
    a = np.random.default_rng(1).standard_normal(shape)
    U, S, Vh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    u, s, vh = compat.linalg.svd(compat.tensor(a), full_matrices=full)
    k = min(shape)
    assert tuple(u.shape) == tuple(U.shape) and tuple(vh.shape) == tuple(Vh.shape)
    np.testing.assert_allclose(_np(s), S.numpy(), rtol=1e-12)
    u_k, U_k = _np(u)[:, :k], U[:, :k].numpy()
    np.testing.assert_allclose(np.abs(u_k), np.abs(U_k), atol=1e-12)
    np.testing.assert_allclose(u_k @ _np(vh)[:k], U_k @ Vh[:k].numpy(), atol=1e-12)


def test_the_suite_passes_compat_where_it_is_nearer_the_float64_result():
    from tests.compat import differential

    exact = torch.tensor([1.0, 0.0], dtype=torch.float64)
    theirs = torch.tensor([1.0, 3e-5])
    assert differential.compare(theirs, compat.tensor([1.0, 1e-6])) is not None
    near = differential.compare(theirs, compat.tensor([1.0, 1e-6]), precise=exact)
    assert near is None
    far = differential.compare(theirs, compat.tensor([1.0, -4e-5]), precise=exact)
    assert "from the float64 result" in far


@pytest.mark.parametrize(
    "shapes, dtypes",
    [
        (((3,), (3,)), ("float64", "float32")),
        (((2, 3), (4, 3)), ("float32", "float64")),
        (((2, 3), (4, 5)), ("float32", "float64")),  # the sizes are checked first
        (((), (3,)), ("float64", "float32")),  # a 0-d input: a product, promoted
        (((3,), ()), ("int64", "float32")),
        (((2, 3, 4), (5, 4)), ("float32", "float32")),
    ],
)
def test_inner_takes_one_dtype_as_torch_and_records_its_nodes(shapes, dtypes):
    """torch.inner refuses two dtypes (but multiplies by a 0-d input, promoting),
    and records tensordot's nodes: a view of a product of matrices."""
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes, strict=True)
    ]
    outcomes = []
    for lib in (torch, compat):
        try:
            out = lib.inner(*(lib.tensor(a) for a in arrays))
        except RuntimeError as e:
            outcomes.append(("error", str(e)))
            continue
        outcomes.append(("value", str(out.dtype), _np(out).tolist()))
    want, got = outcomes
    assert got[:2] == want[:2]
    if want[0] == "value":
        np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_corrcoef_and_inner_save_what_torch_saves():
    """An in-place change to an input after corrcoef (whose nodes save only
    intermediates) leaves backward working; after inner (whose product saves its
    inputs) backward refuses, as in torch."""
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    for lib in (torch, compat):
        a = lib.tensor(x, requires_grad=True)
        out = lib.corrcoef(a)
        with lib.no_grad():
            a.add_(0)
        out.sum().backward()
        b = lib.tensor(x, requires_grad=True)
        out = lib.inner(b, b)
        with lib.no_grad():
            b.add_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
    got = compat.inner(compat.tensor(x), compat.tensor(x)).grad_fn
    assert got is None
    node = compat.inner(compat.tensor(x, requires_grad=True), compat.tensor(x)).grad_fn
    assert [type(node).__name__, type(node.next_functions[0][0]).__name__] == [
        "ViewBackward0",
        "MmBackward0",
    ]
