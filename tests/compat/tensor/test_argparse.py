"""compat's argument checks against torch's parser: the same error type and the
same message, word for word, for each bad call in the table (run both ways:
eagerly and with ``JAXBLITZ_COMPAT_LAZY=1``)."""

import warnings

import pytest

import jaxblitz.compat as torch


def _a(m):
    return m.arange(6.0).reshape(2, 3)


def _set_requires_grad(m, value):
    t = m.zeros(2)
    t.requires_grad = value


# (id, call of the module: jaxblitz.compat or torch)
CASES = [
    # factories: sizes, dtype, requires_grad, generator
    ("zeros_dtype_str", lambda m: m.zeros(2, dtype="float32")),
    ("zeros_dtype_type", lambda m: m.zeros(2, dtype=object)),
    ("zeros_requires_grad_int", lambda m: m.zeros(2, requires_grad=1)),
    ("ones_requires_grad_str", lambda m: m.ones(2, requires_grad="yes")),
    ("empty_requires_grad_float", lambda m: m.empty(2, requires_grad=1.0)),
    ("full_requires_grad_int", lambda m: m.full((2,), 1.0, requires_grad=1)),
    ("full_bare_int_size", lambda m: m.full(2, 1.0)),
    ("zeros_negative", lambda m: m.zeros(-1)),
    ("ones_negative", lambda m: m.ones(2, -1)),
    ("ones_tuple_float", lambda m: m.ones((2, 2.5))),
    ("zeros_third_float", lambda m: m.zeros(2, 3, 2.5)),
    ("zeros_first_float_tuple", lambda m: m.zeros((2.5, 3))),
    ("zeros_str_then_int", lambda m: m.zeros("x", 3)),
    ("zeros_bool", lambda m: m.zeros(True)),
    ("zeros_tensor_float_element", lambda m: m.zeros(2, m.tensor(3.0))),
    ("rand_requires_grad_int", lambda m: m.rand(2, requires_grad=1)),
    ("rand_dtype_str", lambda m: m.rand(2, dtype="x")),
    ("rand_size_str", lambda m: m.rand("x")),
    ("randn_generator_str", lambda m: m.randn(2, generator="x")),
    ("eye_float", lambda m: m.eye(2.5)),
    ("eye_dtype_str", lambda m: m.eye(2, dtype="x")),
    ("arange_step_none", lambda m: m.arange(0, 5, None)),
    ("arange_list", lambda m: m.arange([1])),
    ("linspace_steps_float", lambda m: m.linspace(0, 1, 2.5)),
    ("linspace_start_none", lambda m: m.linspace(None, 1, 5)),
    ("normal_negative_std", lambda m: m.normal(0.0, -1.0, (2,))),
    ("set_default_dtype_int", lambda m: m.set_default_dtype(m.int32)),
    # torch.tensor's data
    ("tensor_none", lambda m: m.tensor(None)),
    ("tensor_str", lambda m: m.tensor("abc")),
    ("tensor_bytes", lambda m: m.tensor(b"ab")),
    ("tensor_list_of_str", lambda m: m.tensor(["a"])),
    ("tensor_number_then_str", lambda m: m.tensor([1, "a"])),
    ("tensor_object", lambda m: m.tensor([object()])),
    ("tensor_number_then_none", lambda m: m.tensor([1, None])),
    ("tensor_dict", lambda m: m.tensor({1: 2})),
    ("tensor_none_as_float", lambda m: m.tensor(None, dtype=m.float32)),
    ("tensor_none_as_long", lambda m: m.tensor([None], dtype=m.int64)),
    ("tensor_requires_grad_int", lambda m: m.tensor([1.0], requires_grad=1)),
    ("tensor_dtype_str", lambda m: m.tensor([1.0], dtype="float32")),
    ("tensor_requires_grad_none", lambda m: m.tensor([1.0], requires_grad=None)),
    ("legacy_float_size", lambda m: m.Tensor(2.5, 3)),
    ("legacy_dtype_keyword", lambda m: m.Tensor(2, dtype=m.float32)),
    # Tensor methods
    ("sum_float_dim", lambda m: _a(m).sum(1.0)),
    ("sum_str_dim", lambda m: _a(m).sum("x")),
    ("sum_float_dim_keepdim", lambda m: _a(m).sum(1.0, keepdim=True)),
    ("sum_list_later_float", lambda m: _a(m).sum([0, 1.5])),
    ("sum_list_first_float", lambda m: _a(m).sum([1.5])),
    ("sum_keepdim_int", lambda m: _a(m).sum(1, keepdim=1)),
    ("mean_float_dim", lambda m: _a(m).mean(1.0)),
    ("mean_keepdim_none", lambda m: _a(m).mean(1, keepdim=None)),
    ("min_float_dim", lambda m: _a(m).min(2.5)),
    ("max_str_dim", lambda m: _a(m).max("x")),
    ("max_float_dim_keepdim", lambda m: _a(m).max(2.5, keepdim=True)),
    ("max_keepdim_int", lambda m: _a(m).max(1, keepdim=1)),
    ("view_float", lambda m: _a(m).view(2.0)),
    ("view_float_int", lambda m: _a(m).view(2.0, 3)),
    ("view_tuple_float", lambda m: _a(m).view((2.0, 3))),
    ("view_later_float", lambda m: _a(m).view(2, 2.5)),
    ("reshape_float_int", lambda m: _a(m).reshape(2.0, 3)),
    ("softmax_missing_dim", lambda m: m.softmax(_a(m))),
    ("method_softmax_none", lambda m: _a(m).softmax(None)),
    ("method_log_softmax_float", lambda m: _a(m).log_softmax(1.5)),
    ("to_list", lambda m: _a(m).to([1])),
    ("to_negative_index", lambda m: _a(m).to(-1)),
    ("type_float", lambda m: _a(m).type(2.5)),
    ("index_select_list_index", lambda m: _a(m).index_select(0, [0])),
    ("gather_none_index", lambda m: _a(m).gather(1, None)),
    ("requires_grad__int", lambda m: m.zeros(2).requires_grad_(1)),
    ("requires_grad__none", lambda m: m.zeros(2).requires_grad_(None)),
    ("requires_grad__long", lambda m: m.zeros(2, dtype=m.long).requires_grad_()),
    ("requires_grad_setter_int", lambda m: _set_requires_grad(m, 1)),
    # devices, utilities
    ("device_none", lambda m: m.device(None)),
    ("device_float", lambda m: m.device(2.5)),
    ("device_list", lambda m: m.device([1])),
    ("device_negative_index", lambda m: m.device("cuda", -2)),
    ("device_float_index", lambda m: m.device("cuda", 2.5)),
    ("clip_max_norm_str", lambda m: m.nn.utils.clip_grad_norm_([m.zeros(2)], "x")),
    ("clip_max_norm_none", lambda m: m.nn.utils.clip_grad_norm_([m.zeros(2)], None)),
]


def _raised(call, module) -> tuple[str, str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(module)
    except Exception as e:  # noqa: BLE001 -- the error is the result under test
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize(("case", "call"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_raises_torchs_error_type_and_message(case, call):
    pt = pytest.importorskip("torch")
    expected = _raised(call, pt)
    assert expected is not None, f"{case}: torch accepted it"
    assert _raised(call, torch) == expected


@pytest.mark.parametrize("path", ["", "/"])
def test_saving_onto_a_directory_raises_torchs_error(tmp_path, path):
    pt = pytest.importorskip("torch")
    target = str(tmp_path) + path
    expected = _raised(lambda m: m.save({}, target), pt)
    assert expected is not None
    assert _raised(lambda m: m.save({}, target), torch) == expected


def test_arguments_torch_takes_are_still_taken():
    assert torch.zeros(2, requires_grad=None).requires_grad is False
    assert torch.zeros(2, dtype=torch.float64).dtype is torch.float64
    assert torch.zeros([2, True]).shape == (2, 1)  # a later bool counts as an int
    assert torch.ones(2, 3).view((3, 2)).shape == (3, 2)
    assert str(torch.device("cuda", 0)) == "cuda:0"
    assert torch.arange(6.0).reshape(2, 3).sum([0, 1]).item() == 15.0
