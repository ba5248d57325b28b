"""Tests for jaxblitz.tensors (Blitz 1): random constructors, numpy bridge, devices."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxblitz import tensors as T

KEY = jax.random.key(0)


# -- random constructors -------------------------------------------------------------


def test_rand_accepts_varargs_and_tuple_shapes_alike():
    a = T.rand(KEY, 2, 3)
    b = T.rand(KEY, (2, 3))
    assert a.shape == (2, 3) and a.dtype == jnp.float32
    np.testing.assert_array_equal(a, b)


def test_rand_draws_from_zero_to_one():
    x = T.rand(KEY, 10_000)
    assert float(x.min()) >= 0.0 and float(x.max()) < 1.0
    assert abs(float(x.mean()) - 0.5) < 0.02


def test_randn_has_zero_mean_unit_std():
    x = T.randn(KEY, 100, 100)
    assert x.shape == (100, 100)
    assert abs(float(x.mean())) < 0.05 and abs(float(x.std()) - 1.0) < 0.05


def test_rand_with_no_shape_is_a_scalar():
    assert T.rand(KEY).shape == ()


def test_same_key_gives_same_numbers_and_different_keys_differ():
    np.testing.assert_array_equal(T.randn(KEY, 5), T.randn(jax.random.key(0), 5))
    assert not np.array_equal(T.randn(KEY, 5), T.randn(jax.random.key(1), 5))


def test_legacy_prngkey_gives_the_same_numbers_as_new_style_key():
    np.testing.assert_array_equal(T.rand(jax.random.PRNGKey(0), 4), T.rand(KEY, 4))


def test_constructors_give_the_same_values_under_jit():
    def draw(key):
        return (T.rand(key, 3), T.randn(key, 3), T.randint(key, 0, 9, (3,)))

    for eager, jitted in zip(draw(KEY), jax.jit(draw)(KEY), strict=True):
        np.testing.assert_array_equal(eager, jitted)
    np.testing.assert_array_equal(
        T.randperm(KEY, 6), jax.jit(T.randperm, static_argnums=1)(KEY, 6)
    )


def test_normal_under_jit_matches_eager_to_an_ulp():
    # mean + std * z may be fused into one multiply-add under jit.
    jitted = jax.jit(lambda key: T.normal(key, 2.0, 3.0, 4))(KEY)
    np.testing.assert_allclose(T.normal(KEY, 2.0, 3.0, 4), jitted, rtol=1e-6)


def test_rand_honours_dtype_including_torch_names():
    assert T.rand(KEY, 2, dtype=jnp.bfloat16).dtype == jnp.bfloat16
    assert T.randn(KEY, 2, dtype="half").dtype == jnp.float16


def test_randint_stays_in_half_open_range():
    x = T.randint(KEY, -3, 4, (5000,))
    assert x.dtype == jnp.int32 and x.shape == (5000,)
    assert set(np.unique(x).tolist()) == set(range(-3, 4))


def test_randint_accepts_an_int_shape():
    assert T.randint(KEY, 0, 2, 7).shape == (7,)


def test_randperm_is_a_permutation():
    p = T.randperm(KEY, 50)
    assert p.shape == (50,) and p.dtype == jnp.int32
    np.testing.assert_array_equal(np.sort(p), np.arange(50))
    assert not np.array_equal(p, np.arange(50))


def test_randperm_shapes_match_torch():
    torch = pytest.importorskip("torch")
    for n in (0, 1, 7):
        assert T.randperm(KEY, n).shape == tuple(torch.randperm(n).shape)


def test_normal_has_requested_mean_and_std():
    x = T.normal(KEY, 5.0, 2.0, (20_000,))
    assert x.dtype == jnp.float32
    assert abs(float(x.mean()) - 5.0) < 0.05 and abs(float(x.std()) - 2.0) < 0.05


def test_normal_broadcasts_array_means():
    x = T.normal(KEY, jnp.array([0.0, 100.0]), 0.01, (1000, 2))
    np.testing.assert_allclose(x.mean(axis=0), [0.0, 100.0], atol=0.01)


def test_rand_like_and_randn_like_take_shape_and_dtype_from_x():
    x = jnp.zeros((3, 4), jnp.bfloat16)
    assert T.rand_like(KEY, x).shape == (3, 4)
    assert T.rand_like(KEY, x).dtype == jnp.bfloat16
    assert T.randn_like(KEY, x, dtype="float").dtype == jnp.float32


def test_non_key_first_argument_is_rejected_with_a_hint():
    with pytest.raises(TypeError, match=r"rand expects a single PRNG key.*got int 2"):
        T.rand(2, 3)


def test_batch_of_keys_is_rejected():
    with pytest.raises(TypeError, match=r"single PRNG key.*shape \(2,\)"):
        T.randn(jax.random.split(KEY), 3)


def test_negative_dimension_is_rejected():
    with pytest.raises(ValueError, match=r"rand: dimensions must be >= 0.*\(2, -1\)"):
        T.rand(KEY, 2, -1)


def test_non_integer_dimension_is_rejected():
    with pytest.raises(TypeError, match=r"randn: shape must be ints, got \(2.5,\)"):
        T.randn(KEY, 2.5)


def test_randint_rejects_low_not_below_high():
    with pytest.raises(ValueError, match="expected low < high, got low=3, high=3"):
        T.randint(KEY, 3, 3, (2,))


def test_randperm_rejects_negative_n():
    with pytest.raises(ValueError, match="randperm: dimensions must be >= 0"):
        T.randperm(KEY, -1)


def test_normal_rejects_negative_std():
    with pytest.raises(ValueError, match="expected std >= 0, got std=-1.0"):
        T.normal(KEY, 0.0, -1.0, 3)


def test_rand_rejects_integer_dtype():
    with pytest.raises(TypeError, match="rand: dtype must be a floating dtype"):
        T.rand(KEY, 3, dtype=jnp.int32)


def test_randint_rejects_float_dtype():
    with pytest.raises(TypeError, match="randint: dtype must be an integer dtype"):
        T.randint(KEY, 0, 3, 2, dtype="float")


@pytest.mark.parametrize(("low", "high"), [(0.5, 3), (0, 3.0), (True, 3)])
def test_randint_rejects_bounds_that_are_not_ints_as_torch_does(low, high):
    with pytest.raises(TypeError, match="randint: (low|high) must be an int"):
        T.randint(KEY, low, high, (2,))


# -- dtypes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("float", jnp.float32),
        ("float32", jnp.float32),
        ("torch.float", jnp.float32),
        ("half", jnp.float16),
        ("bfloat16", jnp.bfloat16),
        ("int", jnp.int32),
        ("bool", jnp.bool_),
        ("uint8", jnp.uint8),
        (jnp.int16, jnp.int16),
    ],
)
def test_cast_accepts_torch_and_numpy_names(name, expected):
    assert T.cast(jnp.array([1.7, 0.0]), name).dtype == expected


def test_cast_truncates_floats_to_ints_like_torch():
    np.testing.assert_array_equal(T.cast(jnp.array([1.7, -1.7]), "int"), [1, -1])


def test_cast_rejects_unknown_names():
    with pytest.raises(ValueError, match=r"unknown dtype name 'floaty'.*long"):
        T.cast(jnp.ones(2), "floaty")


@pytest.mark.parametrize("name", ["float64", "double", "int64", "long"])
def test_cast_to_64_bit_without_x64_raises_instead_of_downcasting(name):
    assert not jax.config.jax_enable_x64
    with pytest.raises(ValueError, match=r"needs JAX's 64-bit mode.*jax_enable_x64"):
        T.cast(jnp.ones(2), name)


def test_cast_to_64_bit_works_with_x64_enabled():
    with jax.enable_x64(True):
        assert T.cast(jnp.ones(2), "double").dtype == jnp.float64
        assert T.cast(jnp.ones(2), "long").dtype == jnp.int64


def test_numpy_64_bit_dtype_objects_are_not_mistaken_for_python_types():
    with pytest.raises(ValueError, match="needs JAX's 64-bit mode"):
        T.resolve_dtype(np.dtype("float64"))


def test_resolve_dtype_rejects_none():
    with pytest.raises(TypeError, match="expected a dtype.*got None"):
        T.resolve_dtype(None)


def test_python_scalar_types_mean_jax_defaults():
    assert T.resolve_dtype(float) == jnp.float32
    assert T.resolve_dtype(int) == jnp.int32


# -- the NumPy bridge ----------------------------------------------------------------


def test_to_numpy_is_a_read_only_zero_copy_view_on_cpu():
    x = jnp.arange(4.0)
    a = T.to_numpy(x)
    assert isinstance(a, np.ndarray) and not a.flags.writeable
    assert a.__array_interface__["data"][0] == x.unsafe_buffer_pointer()
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 1.0


def test_to_numpy_copy_is_writeable_and_independent():
    x = jnp.arange(4.0)
    a = T.to_numpy(x, copy=True)
    a[0] = 100.0
    assert a.flags.writeable
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0, 3.0])


def test_to_numpy_inside_jit_is_rejected():
    with pytest.raises(TypeError, match="to_numpy got a traced value"):
        jax.jit(T.to_numpy)(jnp.ones(2))


def _aligned(n: int) -> np.ndarray:
    """A float32 array whose buffer is 64-byte aligned (what CPU JAX can alias)."""
    buf = np.zeros(n + 16, np.float32)
    start = (-buf.__array_interface__["data"][0] % 64) // 4
    return buf[start : start + n]


@pytest.mark.parametrize("n", [16, 1 << 20])
def test_from_numpy_does_not_share_memory_unlike_torch(n):
    a = _aligned(n)
    x = T.from_numpy(a)
    a[0] = 5.0  # torch.from_numpy would see this write
    assert float(x[0]) == 0.0 and x.dtype == jnp.float32


def test_from_numpy_of_unaligned_large_array_is_independent_right_away():
    a = np.zeros(1 << 20 + 1, np.float32)[1:]
    x = T.from_numpy(a)
    a[:] = 5.0
    assert float(x.max()) == 0.0


def test_from_numpy_64_bit_array_warns_and_stores_32_bit():
    with pytest.warns(UserWarning, match="float64 array stored as float32"):
        x = T.from_numpy(np.ones(3))
    assert x.dtype == jnp.float32


def test_from_numpy_with_explicit_dtype_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert T.from_numpy(np.ones(3), dtype="float32").dtype == jnp.float32


def test_from_numpy_rejects_lists():
    with pytest.raises(TypeError, match="expects a numpy.ndarray, got list"):
        T.from_numpy([1.0, 2.0])


def test_numpy_round_trip_preserves_values():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(T.to_numpy(T.from_numpy(a)), a)


# -- devices ---------------------------------------------------------------------------


def test_devices_lists_the_cpu():
    cpus = T.devices("cpu")
    assert cpus and all(d.platform == "cpu" for d in cpus)
    assert T.devices() == jax.devices()


def test_absent_device_kind_gives_an_empty_list():
    if jax.default_backend() == "cpu":
        assert T.devices("gpu") == [] and T.devices("tpu") == []
        assert not T.is_available("gpu") and not T.is_available("cuda")
    assert T.is_available("cpu")


def test_unknown_device_kind_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown device kind 'npu'.*'cpu', 'gpu'"):
        T.devices("npu")


def test_default_device_is_where_new_arrays_go():
    assert jnp.ones(2).device == T.default_device()


@pytest.mark.parametrize("spec", ["cpu", "cpu:0"])
def test_device_put_accepts_device_strings(spec):
    x = T.device_put(jnp.arange(3), spec)
    assert x.device == jax.devices("cpu")[0]
    np.testing.assert_array_equal(x, [0, 1, 2])


def test_device_put_accepts_a_device_and_a_pytree():
    tree = {"w": jnp.ones(2), "b": jnp.zeros(1)}
    out = T.device_put(tree, jax.devices("cpu")[0])
    assert all(leaf.device == jax.devices("cpu")[0] for leaf in jax.tree.leaves(out))


def test_device_put_of_numpy_does_not_alias_it():
    a = _aligned(16)
    x = T.device_put(a, "cpu")
    a[0] = 5.0  # plain jax.device_put(a) on CPU aliases this buffer
    assert float(x[0]) == 0.0


def test_device_put_to_absent_platform_names_what_is_available():
    if jax.default_backend() != "cpu":
        pytest.skip("needs a CPU-only process")
    with pytest.raises(ValueError, match=r"no 'cuda' device.*available: cpu:0"):
        T.device_put(jnp.ones(2), "cuda")


def test_device_put_to_missing_index_is_rejected():
    with pytest.raises(ValueError, match=r"device 'cpu:99' does not exist"):
        T.get_device("cpu:99")


def test_malformed_device_string_is_rejected():
    with pytest.raises(ValueError, match=r"bad device 'cpu:x'"):
        T.get_device("cpu:x")
