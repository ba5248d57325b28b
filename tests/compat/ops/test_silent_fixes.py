"""compat against PyTorch where the differential suite found silent differences:
norms over nothing and over one element, cov's weighted form, the singular value
decomposition compared as PyTorch's own tests compare it, and the suite's
float64 measure for float32 rounding."""

import itertools
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


# Binary ops given two dtypes: torch promotes, or refuses (``inner``, ``cross``,
# ``lstsq``, products of matrices), or writes into the input's dtype (losses).
MIXED_OPS = {
    "mm": ((2, 3), (3, 4)), "matmul": ((2, 3), (3, 4)), "dot": ((3,), (3,)),
    "vdot": ((3,), (3,)), "mv": ((2, 3), (3,)), "bmm": ((2, 2, 3), (2, 3, 4)),
    "outer": ((3,), (4,)), "kron": ((2, 2), (2, 3)), "tensordot": ((2, 3), (3, 4)),
    "cross": ((4, 3), (4, 3)), "linalg.cross": ((4, 3), (4, 3)),
    "inner": ((2, 3), (4, 3)), "cdist": ((2, 3), (4, 3)), "dist": ((3,), (3,)),
    "atan2": ((3,), (3,)), "hypot": ((3,), (3,)), "copysign": ((3,), (3,)),
    "fmod": ((3,), (3,)), "xlogy": ((3,), (3,)),
    "maximum": ((3,), (3,)), "linalg.solve": ((3, 3), (3, 2)),
    "linalg.lstsq": ((3, 3), (3, 2)), "linalg.vecdot": ((3,), (3,)),
    "nn.functional.linear": ((2, 3), (4, 3)),
    "nn.functional.mse_loss": ((3,), (3,)),
    "nn.functional.soft_margin_loss": ((3,), (3,)),
    "nn.functional.smooth_l1_loss": ((3,), (3,)),
    "nn.functional.cosine_similarity": ((2, 3), (2, 3)),
    "nn.functional.pairwise_distance": ((2, 3), (2, 3)),
}  # fmt: skip
MIXED_DTYPES = [
    ("float32", "float64"), ("float64", "float32"), ("int64", "float32"),
    ("float32", "int64"), ("int32", "int64"), ("bool", "int64"),
    ("float16", "float32"), ("uint8", "int8"),
]  # fmt: skip


def _outcome(lib, name, arrays):
    fn = lib
    for part in name.split("."):
        fn = getattr(fn, part)
    try:
        out = fn(*(lib.tensor(a) for a in arrays))
    except NotImplementedError:
        return None  # torch: no kernel for the dtype; compat: refused by name
    except RuntimeError as e:
        return ("error", str(e))
    out = out[0] if isinstance(out, tuple) else out
    return ("value", str(out.dtype).removeprefix("torch."))


def _mixed_differences(name: str, shapes: tuple, dtype_sets, scale) -> list[str]:
    """Each set of dtypes given to ``name`` in torch and compat: what differs."""
    rng = np.random.default_rng(0)
    differ = []
    for dtypes in dtype_sets:
        arrays = [
            scale(rng.standard_normal(s)).astype(d)
            for s, d in zip(shapes, dtypes, strict=True)
        ]
        want = _outcome(torch, name, arrays)
        got = _outcome(compat, name, arrays)
        if want is None or got is None:
            continue
        if got[0] != want[0] or (want[0] == "value" and got != want):
            differ.append(f"{dtypes}: torch {want}, compat {got}")
    return differ


@pytest.mark.parametrize("name", MIXED_OPS)
def test_a_binary_op_given_two_dtypes_promotes_or_refuses_as_torch(name):
    differ = _mixed_differences(name, MIXED_OPS[name], MIXED_DTYPES, lambda a: a * 3)
    assert not differ, "\n".join(differ)


# Ops of three tensors given mixed dtypes (a bias, a weight, a variance).
MIXED_TERNARY = {
    "addmm": ((2, 4), (2, 3), (3, 4)), "addmv": ((2,), (2, 3), (3,)),
    "addr": ((3, 4), (3,), (4,)), "baddbmm": ((2, 2, 4), (2, 2, 3), (2, 3, 4)),
    "addbmm": ((2, 4), (2, 2, 3), (2, 3, 4)), "addcmul": ((3,), (3,), (3,)),
    "addcdiv": ((3,), (3,), (3,)),
    "lerp": ((3,), (3,), (3,)), "clamp": ((3,), (3,), (3,)),
    "nn.functional.bilinear": ((2, 3), (2, 4), (5, 3, 4)),
    "nn.functional.linear": ((2, 3), (4, 3), (4,)),
    "nn.functional.margin_ranking_loss": ((3,), (3,), (3,)),
    "nn.functional.cosine_embedding_loss": ((2, 3), (2, 3), (2,)),
    "nn.functional.triplet_margin_loss": ((2, 3), (2, 3), (2, 3)),
    "nn.functional.gaussian_nll_loss": ((3,), (3,), (3,)),
}  # fmt: skip


@pytest.mark.parametrize("name", MIXED_TERNARY)
def test_an_op_of_three_tensors_given_mixed_dtypes_acts_as_torch(name):
    kinds = ("float32", "float64", "int64")
    mixed = [d for d in itertools.product(kinds, repeat=3) if len(set(d)) > 1]
    differ = _mixed_differences(
        name, MIXED_TERNARY[name], mixed, lambda a: np.abs(a) * 2
    )
    assert not differ, "\n".join(differ)


# Ops reading an index tensor (or a mask), given each dtype a script might hand
# them (int32 from NumPy, bytes, floats): torch takes some and refuses the rest.
X34 = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
INDEXED = {
    "gather": lambda t, i: t.gather(t.tensor(X34), 1, i([[0, 1], [2, 3], [1, 1]])),
    "index_select": lambda t, i: t.index_select(t.tensor(X34), 0, i([0, 2])),
    "take": lambda t, i: t.take(t.tensor(X34), i([0, 5])),
    "take_along_dim": lambda t, i: t.take_along_dim(
        t.tensor(X34), i([[0], [1], [2]]), dim=1
    ),
    "getitem": lambda t, i: t.tensor(X34)[i([0, 1])],
    "scatter": lambda t, i: t.zeros(3, 4).scatter(1, i([[0], [1], [2]]), 1.0),
    "scatter_add": lambda t, i: t.zeros(3, 4).scatter_add(
        1, i([[0], [1], [2]]), t.ones(3, 1)
    ),
    "scatter_reduce": lambda t, i: t.zeros(3, 4).scatter_reduce(
        1, i([[0], [1], [2]]), t.ones(3, 1), "sum"
    ),
    "index_add": lambda t, i: t.zeros(3, 4).index_add(0, i([0, 2]), t.ones(2, 4)),
    "index_copy": lambda t, i: t.zeros(3, 4).index_copy(0, i([0, 2]), t.ones(2, 4)),
    "index_fill": lambda t, i: t.zeros(3, 4).index_fill(0, i([0, 2]), 2.0),
    "index_reduce": lambda t, i: t.zeros(3, 4).index_reduce(
        0, i([0, 2]), t.ones(2, 4), "prod"
    ),
    "index_put": lambda t, i: t.zeros(3, 4).index_put((i([0, 2]),), t.ones(4)),
    "embedding": lambda t, i: t.nn.functional.embedding(i([0, 2]), t.tensor(X34)),
    "embedding_bag": lambda t, i: t.nn.functional.embedding_bag(
        i([0, 2, 1]), t.tensor(X34), i([0, 1])
    ),
    "one_hot": lambda t, i: t.nn.functional.one_hot(i([0, 2]), 4),
    "cross_entropy": lambda t, i: t.nn.functional.cross_entropy(
        t.tensor(X34), i([0, 2, 1])
    ),
    "nll_loss": lambda t, i: t.nn.functional.nll_loss(t.tensor(X34), i([0, 2, 1])),
    "masked_fill": lambda t, i: t.tensor(X34).masked_fill(
        i([True, False, True, False]), 0.0
    ),
    "where": lambda t, i: t.where(i([True, False, True, False]), t.tensor(X34), 0.0),
    "bincount": lambda t, i: t.bincount(i([0, 2, 2])),
    "repeat_interleave": lambda t, i: t.repeat_interleave(
        t.tensor(X34), i([1, 2, 1]), dim=0
    ),
}


def _indexed(lib, make, dtype):
    try:
        out = make(lib, lambda a: lib.tensor(np.array(a)).to(getattr(lib, dtype)))
    except NotImplementedError:
        return None  # no kernel in torch; refused by name in compat
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return ("error", type(e).__name__)
    return ("value", str(out.dtype), np.asarray(out.numpy(), float).tolist())


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8")
@pytest.mark.parametrize("name", INDEXED)
def test_an_index_of_each_dtype_is_taken_or_refused_as_torch(name):
    differ = []
    for dtype in ("int64", "int32", "int16", "uint8", "float32", "bool"):
        want = _indexed(torch, INDEXED[name], dtype)
        got = _indexed(compat, INDEXED[name], dtype)
        if want is not None and got is not None and got != want:
            differ.append(f"{dtype}: torch {want}, compat {got}")
    assert not differ, "\n".join(differ)
