"""compat Tensor: constructors, dtypes, printing, the NumPy bridge, indexing."""

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxblitz.compat as torch
from tests.jit_counts import jit_cache_size


def test_default_dtypes_are_torchs():
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([1.0, 2]).dtype is torch.float32
    assert torch.tensor([True]).dtype is torch.bool
    assert torch.arange(5).dtype is torch.int64
    assert torch.rand(2).dtype is torch.float32
    assert torch.from_numpy(np.ones(2)).dtype is torch.float64


def test_int64_and_float64_are_real_64_bit():
    big = torch.tensor([2**40], dtype=torch.long)
    assert (big * 2).item() == 2**41
    x = torch.tensor([1.0 + 1e-12], dtype=torch.float64)
    assert x.item() != 1.0


def test_compat_leaves_the_cores_32_bit_defaults_alone():
    torch.ones(3, dtype=torch.float64)
    assert jnp.arange(3).dtype == jnp.int32
    assert jnp.ones(3).dtype == jnp.float32


def test_promotion_follows_torch():
    assert (torch.arange(3) * 2.5).dtype is torch.float32
    assert (torch.arange(3) / 2).dtype is torch.float32
    one = torch.tensor(1.5, dtype=torch.float64)
    assert (torch.ones(2) + one).dtype is torch.float32
    assert (torch.ones(2, dtype=torch.float64) + torch.ones(2)).dtype is torch.float64


def test_size_is_a_tuple_that_prints_like_torch():
    x = torch.zeros(5, 3)
    assert x.size() == (5, 3) and x.shape[1] == 3
    assert repr(x.size()) == "torch.Size([5, 3])"
    assert x.view(-1, 5).size() == (3, 5)


def test_printing_matches_torchs_format():
    assert repr(torch.ones(2, 2, requires_grad=True)) == (
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"
    )
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.tensor([0.5, 1e-5])) == "tensor([5.0000e-01, 1.0000e-05])"
    assert repr(torch.zeros(2, dtype=torch.float64)) == (
        "tensor([0., 0.], dtype=torch.float64)"
    )
    assert "..." in repr(torch.arange(2000.0))


def test_numpy_view_sees_inplace_changes():
    a = torch.ones(5)
    b = a.numpy()
    a.add_(1)
    np.testing.assert_array_equal(b, np.full(5, 2.0))


def test_from_numpy_sees_numpy_writes():
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    assert t.tolist() == [2.0] * 5


def test_numpy_of_a_tensor_requiring_grad_is_refused_with_torchs_message():
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that"):
        torch.ones(2, requires_grad=True).numpy()


def test_numpy_of_a_tensor_requiring_grad_is_read_in_no_grad_as_torch():
    pt = pytest.importorskip("torch")
    for lib in (torch, pt):
        x = lib.arange(3.0).requires_grad_()
        with lib.no_grad():
            assert x.numpy().tolist() == [0.0, 1.0, 2.0]
        with lib.inference_mode():
            assert x.numpy().tolist() == [0.0, 1.0, 2.0]
        with lib.no_grad(), lib.enable_grad(), pytest.raises(RuntimeError):
            x.numpy()


def test_slice_assignment_and_indexing():
    t = torch.ones(4, 4)
    t[:, 1] = 0
    assert t[0].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert t[..., -1].tolist() == [1.0] * 4
    assert t[t > 0].shape == (12,)
    assert t[torch.tensor([0, 2])].shape == (2, 4)


def test_add_with_out_writes_into_out():
    result = torch.empty(2, 2)
    out = torch.add(torch.ones(2, 2), torch.ones(2, 2), out=result)
    assert out is result and result.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_inplace_ops_and_t_():
    x = torch.arange(6.0).view(2, 3)
    x.mul_(2).sub_(1)
    assert x.tolist() == [[-1.0, 1.0, 3.0], [5.0, 7.0, 9.0]]
    x.t_()
    assert x.shape == (3, 2)
    x.zero_()
    assert x.sum().item() == 0


def test_max_with_dim_returns_values_and_indices():
    values, indices = torch.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]


def test_shape_errors_use_torchs_wording():
    with pytest.raises(RuntimeError, match=r"shape '\[3\]' is invalid for input of"):
        torch.ones(2, 2).view(3)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multi"):
        torch.ones(2, 3) @ torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        torch.ones(2, 3) + torch.ones(2, 4)


def test_cuda_without_a_gpu_fails_clearly():
    assert not torch.cuda.is_available()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        torch.ones(2).cuda()
    assert torch.ones(2).to("cpu").device == torch.device("cpu")


def test_seeded_draws_are_reproducible():
    torch.manual_seed(3)
    a = torch.randn(4)
    torch.manual_seed(3)
    assert torch.equal(a, torch.randn(4))
    assert sorted(torch.randperm(6).tolist()) == list(range(6))


def test_the_generator_seeds_and_splits_as_jax_random_does_on_the_host():
    """compat's generator keeps raw threefry key data and seeds and splits it
    with NumPy (compat._host_random, compiling nothing): the same bits as
    jax.random.key and jax.random.split, at any seed torch takes."""
    import jax

    from jaxblitz.compat.tensor import _host_random
    from jaxblitz.compat.tensor._dtype import x64

    rng = np.random.default_rng(0)
    seeds = [0, 1, -1, 2**63 - 1, -(2**63), 2**32, 67280421310721]
    seeds += [int(s) for s in rng.integers(-(2**63), 2**63 - 1, 50)]
    with x64(True):
        for seed in seeds:
            g = torch.Generator().manual_seed(seed)
            want = jax.random.key(seed)
            assert np.array_equal(g._key, jax.random.key_data(want))
            for _ in range(3):
                want, draw = jax.random.split(want)
                got = g.next_key()
                assert isinstance(got, np.ndarray)  # no device program
                assert np.array_equal(got, jax.random.key_data(draw))
            # the hash itself at more counters, against JAX's
            key = tuple(int(b) for b in jax.random.key_data(want))
            got = [_host_random.threefry2x32(key, 0, i) for i in range(9)]
            wide = jax.random.key_data(jax.random.split(want, 9))
            assert np.array_equal(np.array(got, np.uint32), wide)


def test_manual_seed_takes_torchs_range():
    # torch: any int in [-2**63, 2**64); initial_seed() is the seed mod 2**64
    assert torch.manual_seed(-1).initial_seed() == 2**64 - 1
    top = torch.Generator().manual_seed(2**64 - 1)
    assert np.array_equal(top.next_key(), torch.Generator().manual_seed(-1).next_key())
    assert torch.manual_seed(True).initial_seed() == 1
    for seed in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            torch.manual_seed(seed)


def test_a_generator_has_torchs_device():
    pt = pytest.importorskip("torch")
    for arg in ((), ("cpu",), ("cpu:0",)):
        ours, theirs = torch.Generator(*arg), pt.Generator(*arg)
        assert str(ours.device) == str(theirs.device) == "cpu"
        assert isinstance(ours.device, torch.device)
    assert str(torch.Generator(device=torch.device("cpu")).device) == "cpu"
    for lib in (torch, pt):
        with pytest.raises(RuntimeError, match="^META device type not an accelerator"):
            lib.Generator(device="meta")


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 32, 32), (1,), (70001,), (2, 0, 3)])
def test_draws_are_jax_randoms_own_draws_in_their_shape(shape):
    """Drawn flat at a size class and cut (creation.draw): the values are those
    of jax.random drawing ``shape`` itself from the generator's next key."""
    import jax

    from jaxblitz.compat.tensor._dtype import x64

    g = torch.Generator().manual_seed(7)
    with x64(True):
        k = g.next_key()
        want = {
            "rand": jax.random.uniform(k, shape, jnp.float32),
            "randn": jax.random.normal(k, shape, jnp.float64),
            "randint": jax.random.randint(k, shape, -3, 9, jnp.int64),
            "uniform_": jax.random.uniform(k, shape, jnp.float32, -2.0, 3.0),
            "normal_": 1.5 + 0.5 * jax.random.normal(k, shape, jnp.float32),
        }
    got = {}
    torch.manual_seed(7)
    got["rand"] = torch.rand(*shape)
    torch.manual_seed(7)
    got["randn"] = torch.randn(*shape, dtype=torch.float64)
    torch.manual_seed(7)
    got["randint"] = torch.randint(-3, 9, shape)
    torch.manual_seed(7)
    got["uniform_"] = torch.empty(*shape).uniform_(-2.0, 3.0)
    torch.manual_seed(7)
    got["normal_"] = torch.empty(*shape).normal_(1.5, 0.5)
    for name, t in got.items():
        assert tuple(t.shape) == shape, name
        np.testing.assert_array_equal(t.numpy(), np.asarray(want[name]), err_msg=name)


def test_draws_of_new_shapes_share_one_random_program():
    """A threefry program takes ~0.5 s to compile: shapes of one size class
    (here, up to 256 values) share it, and only a slice is compiled per shape."""
    from jaxblitz.compat.tensor import creation

    torch.rand(3, 7)  # the size class's program exists
    before = jit_cache_size(creation._draw_flat)
    for shape in [(2, 3), (5, 3), (4, 4), (3, 3, 3), (10,), (16, 16)]:
        torch.rand(*shape)
    assert jit_cache_size(creation._draw_flat) == before
    assert creation._size_class(257) == 512
    assert creation._size_class(70001) == 73728  # 1/16 of 2**17 steps


@pytest.mark.parametrize("data", [[1 + 1j, 2], [[1.0], [2j]], (0.5, complex(0, 1))])
def test_complex_data_is_refused_not_cut_to_its_real_part(data):
    # torch makes a complex64 tensor; NumPy's asarray would keep the real parts
    with pytest.raises(NotImplementedError, match="no complex dtypes"):
        torch.tensor(data)


@pytest.mark.parametrize("data", [np.array([1 + 1j]), np.complex64(1j)])
def test_complex_numpy_data_names_the_missing_complex_dtypes(data):
    with pytest.raises(TypeError, match="as a torch dtype: .*no complex dtypes"):
        torch.tensor(data)


@pytest.mark.parametrize("op", ["add", "sub"])
def test_a_new_alpha_does_not_compile_a_new_program(op, caplog):
    """``alpha`` other than 1 is an operand of the op's program: an optimizer
    that scales by a value changing every step (LBFGS) compiles once."""
    x, y = torch.ones(3), torch.tensor([1.0, 2.0, 3.0])
    getattr(x, op)(y, alpha=0.5).tolist()  # compiled here, once (in lazy mode too)
    with jax.log_compiles(True), caplog.at_level(logging.WARNING):
        outs = [getattr(x, op)(y, alpha=a).tolist() for a in (0.25, 2.5, -3.0)]
    compiles = [r for r in caplog.records if "Compiling" in r.getMessage()]
    assert compiles == []
    sign = 1 if op == "add" else -1
    assert outs[1] == [1 + sign * 2.5 * v for v in (1.0, 2.0, 3.0)]


@pytest.mark.parametrize(
    "relu", [torch.relu, torch.nn.functional.relu, lambda t: t.clone().relu_()]
)
def test_relu_passes_the_gradient_through_a_nan_as_torch(relu):
    """torch's relu backward is threshold_backward on the result: the gradient
    is dropped where the result is <= 0, so a NaN lets it through."""
    x = torch.tensor([-0.0, float("nan"), 0.0, 1.5, -1.0], requires_grad=True)
    y = relu(x)
    y.backward(torch.ones(5))
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert np.isnan(y.tolist()[1])


def test_torch_namespace_twins_of_functional_ops_match_torch():
    """``torch.conv2d``, ``torch.selu``, ``torch.relu_``, ...: the functional op
    where torch's takes the same arguments; ``adaptive_max_pool1d`` returns the
    indices too, as torch's does."""
    real = pytest.importorskip("torch")
    for name in torch._SAME_AS_F:
        assert getattr(torch, name) is getattr(torch.nn.functional, name), name
        assert hasattr(real, name), name
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((3, 4, 3)).astype(np.float32)
    for name, args in (("conv1d", (x, w)), ("selu", (x,)), ("pdist", (x[0],))):
        ours = getattr(torch, name)(*map(torch.tensor, args))
        theirs = getattr(real, name)(*map(real.tensor, args))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    values, indices = torch.adaptive_max_pool1d(torch.tensor(x), 3)
    ref = real.adaptive_max_pool1d(real.tensor(x), 3)
    np.testing.assert_array_equal(values.numpy(), ref[0].numpy())
    assert indices.tolist() == ref[1].tolist()


def test_randint_with_new_bounds_compiles_no_new_program(caplog):
    """``randint``'s bounds are arguments of its program: a loop drawing below a
    changing bound (a random crop's offsets) compiles once."""
    torch.randint(0, 5, (3,))
    with jax.log_compiles(True), caplog.at_level(logging.WARNING):
        values = [torch.randint(-2, high, (3,)).tolist() for high in (7, 11, 1000)]
    assert [r for r in caplog.records if "Compiling" in r.getMessage()] == []
    assert all(
        -2 <= v < high
        for vs, high in zip(values, (7, 11, 1000), strict=True)
        for v in vs
    )


def test_the_flip_method_takes_its_dims_as_ints_too():
    x = torch.arange(6).reshape(1, 2, 3)
    assert x.flip(-2).tolist() == [[[3, 4, 5], [0, 1, 2]]]
    assert x.flip(0, 1).tolist() == x.flip((0, 1)).tolist() == [[[3, 4, 5], [0, 1, 2]]]
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        torch.flip(x, -2)  # torch.flip itself wants a sequence, as torch's


def test_torch_flip_refuses_dim_0_as_an_int_instead_of_flipping_nothing():
    x = torch.arange(6).reshape(2, 3)
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        torch.flip(x, 0)
    assert x.flip(0).tolist() == [[3, 4, 5], [0, 1, 2]]


def test_factories_take_torch_strided_as_layout_and_refuse_others_by_name():
    for make in (torch.zeros, torch.ones, torch.rand, torch.empty):
        assert make(2, layout=torch.strided).shape == (2,)
    assert torch.ones_like(torch.ones(2), layout=torch.strided).shape == (2,)
    assert torch.normal(1.0, 2.0, (3,), layout=torch.strided).shape == (3,)
    with pytest.raises(NotImplementedError, match="layout=sparse is not supported"):
        torch.zeros(2, layout="sparse")
