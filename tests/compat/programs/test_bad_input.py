"""Issue 19 in compat: every bad input gets a clear error, PyTorch's where it has one.

Each table below is a list of ``(id, call, error type, message pattern)``; ``call``
takes the module (``jaxblitz.compat`` or real ``torch``) so the same case runs on
both. The ``..._raises_like_pytorch`` tests check compat alone; the
``..._matches_pytorch`` ones (skipped without PyTorch) check that PyTorch raises
the same type for the very same call.
"""

import re
import warnings

import numpy as np
import pytest

import jaxblitz.compat as torch


def _error(call, module) -> BaseException | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(module)
    except Exception as e:  # noqa: BLE001 -- the error is the result under test
        return e
    return None


def _check_ours(call, kind, pattern) -> None:
    error = _error(call, torch)
    assert error is not None, "compat accepted it"
    assert type(error) is kind or isinstance(error, kind), repr(error)
    assert re.search(pattern, str(error)), str(error)


def _check_pytorch(call, kind) -> None:
    pt = pytest.importorskip("torch")
    error = _error(call, pt)
    assert error is not None, "PyTorch accepted it"
    assert isinstance(error, kind), repr(error)


def _params(cases):
    return [pytest.param(*case, id=case[0]) for case in cases]


# ---------------------------------------------------------------------------
# Finding 1: layer arguments (nn.Linear(-1, 3) failed with "math domain error")
# ---------------------------------------------------------------------------

_X = lambda m: m.ones(1, 3, 8, 8)  # noqa: E731
NEG = "Trying to create tensor with negative dimension"
LAYER_CASES = [
    (
        "linear_neg_in",
        lambda m: m.nn.Linear(-1, 3),
        RuntimeError,
        NEG + r" -1: \[3, -1\]",
    ),
    ("linear_neg_out", lambda m: m.nn.Linear(3, -1), RuntimeError, NEG + " -1"),
    ("linear_float", lambda m: m.nn.Linear(2.5, 3), TypeError, "but got float"),
    ("linear_str", lambda m: m.nn.Linear("a", 3), TypeError, "but got str"),
    ("linear_none", lambda m: m.nn.Linear(None, 3), TypeError, "NoneType"),
    ("linear_long", lambda m: m.nn.Linear(3, 2, dtype=m.long), RuntimeError, "float"),
    ("conv_neg_kernel", lambda m: m.nn.Conv2d(3, 6, -1), RuntimeError, NEG),
    ("conv_neg_in", lambda m: m.nn.Conv2d(-3, 6, 3), RuntimeError, NEG + " -3"),
    ("conv_neg_out", lambda m: m.nn.Conv2d(3, -6, 3), RuntimeError, NEG + " -6"),
    ("conv_float_kernel", lambda m: m.nn.Conv2d(3, 6, 2.5), TypeError, "float"),
    ("conv_float_in", lambda m: m.nn.Conv2d(3.0, 6, 3), TypeError, "float"),
    ("conv_str_kernel", lambda m: m.nn.Conv2d(3, 6, "a"), TypeError, "str"),
    ("conv_groups_0", lambda m: m.nn.Conv2d(3, 6, 3, groups=0), ValueError, "positive"),
    ("conv_groups_div", lambda m: m.nn.Conv2d(3, 6, 3, groups=2), ValueError, "divis"),
    (
        "conv_pad_str",
        lambda m: m.nn.Conv2d(3, 6, 3, padding="x"),
        ValueError,
        "Invalid",
    ),
    (
        "conv_same_stride",
        lambda m: m.nn.Conv2d(3, 6, 3, stride=2, padding="same"),
        ValueError,
        "strided",
    ),
    (
        "conv_pad_mode",
        lambda m: m.nn.Conv2d(3, 6, 3, padding_mode="x"),
        ValueError,
        "padding_mode must be one of",
    ),
    # torch builds these and refuses them in forward, as compat does.
    ("conv_kernel_0", lambda m: m.nn.Conv2d(3, 6, 0)(_X(m)), RuntimeError, "kernel"),
    ("conv_out_0", lambda m: m.nn.Conv2d(3, 0, 3)(_X(m)), RuntimeError, "at least 1"),
    (
        "conv_stride_0",
        lambda m: m.nn.Conv2d(3, 6, 3, stride=0)(_X(m)),
        RuntimeError,
        "",
    ),
    (
        "conv_stride_neg",
        lambda m: m.nn.Conv2d(3, 6, 3, stride=-1)(_X(m)),
        RuntimeError,
        "",
    ),
    (
        "conv_pad_neg",
        lambda m: m.nn.Conv2d(3, 6, 3, padding=-1)(_X(m)),
        RuntimeError,
        "",
    ),
    (
        "conv_stride_float",
        lambda m: m.nn.Conv2d(3, 6, 3, stride=2.5)(_X(m)),
        TypeError,
        "",
    ),
    (
        "conv_pad_float",
        lambda m: m.nn.Conv2d(3, 6, 3, padding=1.5)(_X(m)),
        TypeError,
        "",
    ),
    (
        "conv_dilation_0",
        lambda m: m.nn.Conv2d(3, 6, 3, dilation=0)(_X(m)),
        RuntimeError,
        "",
    ),
    ("conv_2d_input", lambda m: m.nn.Conv2d(3, 6, 3)(m.ones(8, 8)), RuntimeError, "3D"),
    (
        "conv_channels",
        lambda m: m.nn.Conv2d(3, 6, 3)(m.ones(1, 4, 8, 8)),
        RuntimeError,
        "",
    ),
    (
        "pool_kernel_0",
        lambda m: m.nn.MaxPool2d(0)(_X(m)),
        RuntimeError,
        "stride should",
    ),
    (
        "pool_kernel_neg",
        lambda m: m.nn.MaxPool2d(-1)(_X(m)),
        RuntimeError,
        "kernel size",
    ),
    (
        "pool_stride_0",
        lambda m: m.nn.MaxPool2d(2, 0)(_X(m)),
        RuntimeError,
        "not be zero",
    ),
    (
        "pool_stride_neg",
        lambda m: m.nn.MaxPool2d(2, -1)(_X(m)),
        RuntimeError,
        "greater",
    ),
    ("pool_float", lambda m: m.nn.MaxPool2d(2.5)(_X(m)), TypeError, "kernel_size"),
    ("pool_stride_float", lambda m: m.nn.MaxPool2d(2, 2.5)(_X(m)), TypeError, "stride"),
    (
        "pool_pad_big",
        lambda m: m.nn.MaxPool2d(2, padding=2)(_X(m)),
        RuntimeError,
        "half",
    ),
    (
        "pool_pad_neg",
        lambda m: m.nn.MaxPool2d(2, padding=-1)(_X(m)),
        RuntimeError,
        "pad",
    ),
    ("pool_dilation", lambda m: m.nn.MaxPool2d(2, dilation=0)(_X(m)), RuntimeError, ""),
    (
        "pool_three",
        lambda m: m.nn.MaxPool2d((2, 2, 2))(_X(m)),
        RuntimeError,
        "two ints",
    ),
    ("pool_too_big", lambda m: m.nn.MaxPool2d(9)(_X(m)), RuntimeError, "too small"),
    (
        "pool_2d_input",
        lambda m: m.nn.MaxPool2d(2)(m.ones(4, 4)),
        RuntimeError,
        "3D or 4D",
    ),
    ("dropout_p", lambda m: m.nn.Dropout(1.5), ValueError, "between 0 and 1"),
    (
        "flatten_dims",
        lambda m: m.nn.Flatten(1, 0)(m.ones(2, 3, 4)),
        RuntimeError,
        "after",
    ),
    ("flatten_range", lambda m: m.nn.Flatten(5)(m.ones(2, 3)), IndexError, "range"),
    ("softmax_dim", lambda m: m.nn.Softmax(1.5)(m.ones(2, 3)), TypeError, "int"),
    (
        "sequential_int",
        lambda m: m.nn.Sequential(1),
        TypeError,
        "not a Module subclass",
    ),
    (
        "sequential_index",
        lambda m: m.nn.Sequential(m.nn.ReLU())[5],
        IndexError,
        "range",
    ),
    (
        "module_name",
        lambda m: m.nn.Module().add_module("a.b", m.nn.ReLU()),
        KeyError,
        "",
    ),
    (
        "module_name_type",
        lambda m: m.nn.Module().add_module(1, m.nn.ReLU()),
        TypeError,
        "",
    ),
    (
        "register_tensor",
        lambda m: m.nn.Module().register_parameter("w", m.ones(2)),
        TypeError,
        "torch.nn.Parameter or None required",
    ),
    (
        "linear_input",
        lambda m: m.nn.Linear(3, 2)([1, 2, 3]),
        TypeError,
        "must be Tensor",
    ),
    ("linear_0d", lambda m: m.nn.Linear(3, 2)(m.tensor(1.0)), RuntimeError, "1D"),
    ("relu_input", lambda m: m.nn.ReLU()(5), TypeError, "must be Tensor, not int"),
]


@pytest.mark.parametrize(("name", "call", "kind", "pattern"), _params(LAYER_CASES))
def test_linear_with_negative_size_raises_like_pytorch(name, call, kind, pattern):
    _check_ours(call, kind, pattern)


@pytest.mark.parametrize(("name", "call", "kind", "pattern"), _params(LAYER_CASES))
def test_bad_layer_arguments_match_pytorch(name, call, kind, pattern):
    _check_pytorch(call, kind)


def test_linear_negative_size_message_is_pytorchs():
    with pytest.raises(RuntimeError) as info:
        torch.nn.Linear(-1, 3)
    assert (
        str(info.value) == "Trying to create tensor with negative dimension -1: [3, -1]"
    )


def test_zero_sized_layers_build_as_in_pytorch():
    with pytest.warns(UserWarning, match="zero-element"):
        empty_in = torch.nn.Linear(0, 3)
    assert empty_in.bias.tolist() == [0.0, 0.0, 0.0]  # torch: bound 0 with no fan-in
    assert empty_in(torch.ones(2, 0)).tolist() == [[0.0] * 3] * 2
    assert torch.nn.Linear(3, 0)(torch.ones(2, 3)).shape == (2, 0)
    with pytest.warns(UserWarning, match="zero-element"):
        assert torch.nn.Conv2d(3, 6, 0).weight.shape == (6, 3, 0, 0)
    with pytest.warns(UserWarning, match="zero-element"):
        assert torch.nn.Conv2d(0, 6, 3)(torch.ones(1, 0, 8, 8)).shape == (1, 6, 6, 6)


def test_layer_options_are_honoured_or_refused_never_ignored():
    assert torch.nn.Linear(3, 2, dtype=torch.float64).weight.dtype is torch.float64
    assert torch.nn.Conv2d(3, 6, 3, padding="same")(_X(torch)).shape == (1, 6, 8, 8)
    assert torch.nn.Conv2d(3, 6, 3, padding="valid")(_X(torch)).shape == (1, 6, 6, 6)
    assert torch.nn.Conv2d(3, 6, 3)(torch.ones(3, 8, 8)).shape == (6, 6, 6)
    assert torch.nn.Conv2d(3, 6, 3, groups=3)(_X(torch)).shape == (1, 6, 6, 6)
    assert torch.nn.Conv2d(3, 6, 3, dilation=2)(_X(torch)).shape == (1, 6, 4, 4)
    reflect = torch.nn.Conv2d(3, 6, 3, padding=1, padding_mode="reflect")
    assert reflect(_X(torch)).shape == (1, 6, 8, 8)  # values: test_nn_layers
    with pytest.raises(TypeError, match="unexpected keyword"):
        torch.nn.Conv2d(3, 6, 3, bogus=1)


# ---------------------------------------------------------------------------
# Finding 2: optimizer arguments (optim.SGD([1, 2]) was accepted)
# ---------------------------------------------------------------------------

_P = lambda m: m.nn.Parameter(m.ones(2))  # noqa: E731
ONLY_TENSORS = "optimizer can only optimize Tensors, but one of the params is "


def _one_param_in_two_groups(m):
    shared = _P(m)
    return ([{"params": [shared]}, {"params": [shared]}],)


def _optimizer_cases(name):
    def make(args, **kwargs):  # args(m): the positional arguments
        return lambda m: getattr(m.optim, name)(*args(m), **kwargs)

    p = _P
    cases = [
        ("ints", make(lambda m: ([1, 2],), lr=0.1), TypeError, ONLY_TENSORS + "int"),
        (
            "str",
            make(lambda m: ([p(m), "a"],), lr=0.1),
            TypeError,
            ONLY_TENSORS + "str",
        ),
        ("dict_keys", make(lambda m: ({"a": p(m)},), lr=0.1), TypeError, "is str"),
        ("empty", make(lambda m: ([],), lr=0.1), ValueError, "empty parameter list"),
        ("empty_iter", make(lambda m: (iter([]),), lr=0.1), ValueError, "empty"),
        ("tensor", make(lambda m: (p(m),), lr=0.1), TypeError, "iterable of Tensors"),
        ("none", make(lambda m: (None,), lr=0.1), TypeError, "not iterable"),
        ("non_leaf", make(lambda m: ([p(m) * 2],), lr=0.1), ValueError, "non-leaf"),
        (
            "shared",
            make(_one_param_in_two_groups, lr=0.1),
            ValueError,
            "more than one parameter group",
        ),
        (
            "group_not_dict",
            make(lambda m: ([{"params": p(m)}, p(m)],)),
            TypeError,
            "dict",
        ),
        ("group_ints", make(lambda m: ([{"params": [1]}],)), TypeError, "is int"),
        ("group_set", make(lambda m: ([{"params": {p(m)}}],)), TypeError, "sets"),
        (
            "lr",
            make(lambda m: ([p(m)],), lr=-1),
            ValueError,
            "^Invalid learning rate: -1$",
        ),
        ("lr_str", make(lambda m: ([p(m)],), lr="a"), TypeError, ""),
        ("lr_none", make(lambda m: ([p(m)],), lr=None), TypeError, ""),
        (
            "decay",
            make(lambda m: ([p(m)],), weight_decay=-1),
            ValueError,
            "weight_decay",
        ),
        (
            "unknown",
            make(lambda m: ([p(m)],), bogus=3),
            TypeError,
            "unexpected keyword",
        ),
    ]
    if name != "Adam":
        cases.append(
            ("momentum", make(lambda m: ([p(m)],), momentum=-1), ValueError, "momentum")
        )
    if name == "SGD":
        cases.append(
            ("nesterov", make(lambda m: ([p(m)],), nesterov=True), ValueError, "Nest")
        )
    if name != "SGD":
        cases.append(("eps", make(lambda m: ([p(m)],), eps=-1), ValueError, "epsilon"))
    if name == "Adam":
        for i, betas in enumerate([(-0.1, 0.9), (0.9, 1.0)]):
            message = f"Invalid beta parameter at index {i}"
            cases.append(
                (
                    f"beta{i}",
                    make(lambda m: ([p(m)],), betas=betas),
                    ValueError,
                    message,
                )
            )
    if name == "RMSprop":
        cases.append(
            ("alpha", make(lambda m: ([p(m)],), alpha=-1), ValueError, "alpha")
        )
    return [(f"{name}-{case[0]}", *case[1:]) for case in cases]


OPTIMIZER_CASES = [c for n in ("SGD", "Adam", "RMSprop") for c in _optimizer_cases(n)]


@pytest.mark.parametrize(("name", "call", "kind", "pattern"), _params(OPTIMIZER_CASES))
def test_optimizer_with_non_tensor_params_raises_like_pytorch(
    name, call, kind, pattern
):
    _check_ours(call, kind, pattern)


@pytest.mark.parametrize(("name", "call", "kind", "pattern"), _params(OPTIMIZER_CASES))
def test_bad_optimizer_arguments_match_pytorch(name, call, kind, pattern):
    _check_pytorch(call, kind)


def test_sgd_of_ints_message_is_pytorchs():
    with pytest.raises(TypeError) as info:
        torch.optim.SGD([1, 2])
    assert str(info.value) == ONLY_TENSORS + "int"


def test_add_param_group_checks_like_the_constructor():
    p, q = _P(torch), _P(torch)
    opt = torch.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([q])
    with pytest.raises(TypeError, match=ONLY_TENSORS + "int"):
        opt.add_param_group({"params": [1]})
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": q, "lr": 0.5})
    assert opt.param_groups[1]["params"] == [q] and opt.param_groups[1]["lr"] == 0.5


def test_duplicate_params_warn_as_in_pytorch():
    p = _P(torch)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        torch.optim.SGD([p, p], lr=0.1)


def test_optimizer_options_are_honoured_or_refused_never_ignored():
    p = _P(torch)
    net = torch.nn.Linear(2, 1)
    named = torch.optim.SGD(net.named_parameters(), lr=0.1)
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]
    torch.optim.Adam([p], foreach=False, fused=None, capturable=False)
    # Honoured (their trajectories against torch's: tests/compat/optim/test_optim.py).
    torch.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    torch.optim.Adam([p], amsgrad=True, decoupled_weight_decay=True)
    for make in (
        lambda: torch.optim.SGD([p], lr=0.1, differentiable=True),
        lambda: torch.optim.Adam([p], differentiable=True),
        lambda: torch.optim.Adagrad([p], differentiable=True),
    ):
        with pytest.raises(NotImplementedError, match="differentiable"):
            make()


# The same class in torch.utils.data: DataLoader and random_split arguments.

_DS = lambda m: _data(m).TensorDataset(m.arange(10.0))  # noqa: E731


def _data(m):
    return m.utils.data


DATA_CASES = [
    ("batch_float", lambda m: _data(m).DataLoader(_DS(m), batch_size=2.5), ValueError),
    ("batch_zero", lambda m: _data(m).DataLoader(_DS(m), batch_size=0), ValueError),
    ("batch_bool", lambda m: _data(m).DataLoader(_DS(m), batch_size=True), ValueError),
    ("workers", lambda m: _data(m).DataLoader(_DS(m), num_workers=-1), ValueError),
    ("timeout", lambda m: _data(m).DataLoader(_DS(m), timeout=-1), ValueError),
    ("prefetch", lambda m: _data(m).DataLoader(_DS(m), prefetch_factor=2), ValueError),
    ("drop_last", lambda m: _data(m).DataLoader(_DS(m), drop_last=1), ValueError),
    (
        "drop_last_unbatched",
        lambda m: _data(m).DataLoader(_DS(m), batch_size=None, drop_last=True),
        ValueError,
    ),
    ("unknown", lambda m: _data(m).DataLoader(_DS(m), bogus=1), TypeError),
    (
        "sampler_shuffle",
        lambda m: _data(m).DataLoader(_DS(m), shuffle=True, sampler=[0, 1]),
        ValueError,
    ),
    (
        "batch_sampler",
        lambda m: _data(m).DataLoader(_DS(m), batch_size=2, batch_sampler=[[0, 1]]),
        ValueError,
    ),
    ("dataset_index", lambda m: _DS(m)[10], IndexError),
    ("split_sum", lambda m: _data(m).random_split(_DS(m), [5, 6]), ValueError),
    (
        "split_fraction",
        lambda m: _data(m).random_split(_DS(m), [-0.5, 1.5]),
        ValueError,
    ),
    ("split_float", lambda m: _data(m).random_split(_DS(m), [2.5, 7.5]), TypeError),
]


@pytest.mark.parametrize(("name", "call", "kind"), _params(DATA_CASES))
def test_dataloader_with_bad_batch_size_raises_like_pytorch(name, call, kind):
    _check_ours(call, kind, "")


@pytest.mark.parametrize(("name", "call", "kind"), _params(DATA_CASES))
def test_bad_data_arguments_match_pytorch(name, call, kind):
    _check_pytorch(call, kind)


def test_dataloader_takes_pytorchs_other_options():
    data = torch.utils.data
    ds = _DS(torch)
    loader = data.DataLoader(ds, batch_sampler=[[0, 1], [5]])
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [5.0]] and len(loader) == 2
    data.DataLoader(ds, pin_memory=True, worker_init_fn=print, in_order=True)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = data.random_split(ds, [1.0, 0.0])
    assert [len(p) for p in parts] == [10, 0]
    assert [len(p) for p in data.random_split(ds, [0.25, 0.75])] == [3, 7]


# ---------------------------------------------------------------------------
# Finding 3: sizes and dims must be ints (t.view(3.7, 2) was accepted)
# ---------------------------------------------------------------------------

_T = lambda m: m.ones(3, 2)  # noqa: E731
FLOAT = "must be tuple of ints, but found element of type float at pos"
UNPACK = "failed to unpack the object at pos"
SIZE_CASES = [
    ("view_float", lambda m: _T(m).view(3.7, 2), TypeError, r"view.*\(float, int\)"),
    ("view_whole_float", lambda m: _T(m).view(3.0, 2), TypeError, "got .float"),
    ("view_tuple", lambda m: _T(m).view((3.7, 2)), TypeError, "tuple of .float"),
    ("view_list", lambda m: _T(m).view([3, 2.0]), TypeError, UNPACK + " 2"),
    ("view_str", lambda m: _T(m).view("a", 2), TypeError, r"got \(str"),
    ("view_none", lambda m: _T(m).view(None), TypeError, "!NoneType!"),
    ("view_bool", lambda m: _T(m).view(True, 6), TypeError, r"got \(bool"),
    ("reshape_float", lambda m: _T(m).reshape(3.7, 2), TypeError, "reshape"),
    ("reshape_tuple", lambda m: _T(m).reshape((3.5, 2)), TypeError, FLOAT),
    ("expand_float", lambda m: _T(m).expand(3.0, 2), TypeError, "expand"),
    ("expand_last", lambda m: _T(m).expand(2, 3, 2.5), TypeError, UNPACK + " 3"),
    ("permute_float", lambda m: _T(m).permute(1.0, 0), TypeError, "permute"),
    ("repeat_float", lambda m: _T(m).repeat(2.0, 1), TypeError, "repeat"),
    ("repeat_tuple", lambda m: _T(m).repeat((2, 1.5)), TypeError, "repeat"),
    ("zeros", lambda m: m.zeros(2.5), TypeError, r"zeros.*tuple of ints, not float"),
    ("zeros_args", lambda m: m.zeros(2.0, 3), TypeError, "zeros"),
    ("zeros_tuple", lambda m: m.zeros((2.5, 3)), TypeError, FLOAT + " 0"),
    ("zeros_str", lambda m: m.zeros("a"), TypeError, "not str"),
    ("zeros_float_tensor", lambda m: m.zeros(m.tensor(2.0)), TypeError, "Tensor"),
    ("ones", lambda m: m.ones(2.5), TypeError, "ones"),
    ("empty", lambda m: m.empty(2.5), TypeError, "empty"),
    ("rand", lambda m: m.rand(2.5), TypeError, "rand"),
    ("randn", lambda m: m.randn(2, 2.5), TypeError, "randn.*" + UNPACK + " 2"),
    ("full", lambda m: m.full((2.5,), 1), TypeError, "full"),
    ("full_fill_none", lambda m: m.full((2,), None), TypeError, "Number"),
    ("tensor_ctor", lambda m: m.Tensor(2.5, 3), TypeError, "float"),
    ("tensor_ctor_number", lambda m: m.Tensor(2.5), TypeError, "sequence"),
    ("new_zeros", lambda m: _T(m).new_zeros(2.5), TypeError, "new_zeros"),
    ("new_ones", lambda m: _T(m).new_ones((2, 2.5)), TypeError, "new_ones"),
    ("eye", lambda m: m.eye(2.5), TypeError, r"eye\(\): argument 'n'"),
    ("eye_m", lambda m: m.eye(2, 2.5), TypeError, r"eye.*got \(int, float\)"),
    ("randperm", lambda m: m.randperm(2.5), TypeError, "randperm"),
    ("randint_size", lambda m: m.randint(0, 5, (2.5,)), TypeError, "randint"),
    ("randint_int_size", lambda m: m.randint(0, 5, 3), TypeError, "tuple of ints"),
    ("linspace", lambda m: m.linspace(0, 1, 2.5), TypeError, "steps"),
    ("normal", lambda m: m.normal(0, 1, (2.5,)), TypeError, "normal"),
    ("transpose_dim", lambda m: _T(m).transpose(0.0, 1), TypeError, "must be int"),
    ("unsqueeze_dim", lambda m: _T(m).unsqueeze(1.0), TypeError, "must be int"),
    ("squeeze_dim", lambda m: _T(m).squeeze(1.0), TypeError, "must be int"),
    ("flatten_dim", lambda m: _T(m).flatten(0.0), TypeError, "must be int"),
    ("size_dim", lambda m: _T(m).size(1.0), TypeError, "must be int"),
    ("sum_dim", lambda m: _T(m).sum(dim=1.0), TypeError, "sum.*invalid combination"),
    ("cat_dim", lambda m: m.cat([_T(m), _T(m)], dim=1.0), TypeError, "must be int"),
    ("stack_dim", lambda m: m.stack([_T(m)], dim=1.0), TypeError, "must be int"),
    ("cat_element", lambda m: m.cat([_T(m), 5]), TypeError, "element 1"),
    ("cat_tensor", lambda m: m.cat(_T(m)), TypeError, "tuple of Tensors"),
    # Negative, inconsistent and out-of-range sizes and dims.
    ("view_minus2", lambda m: _T(m).view(-2, 3), RuntimeError, "dimension -2"),
    ("view_two_infer", lambda m: _T(m).view(-1, -1), RuntimeError, "only one"),
    ("view_numel", lambda m: _T(m).view(4, 2), RuntimeError, r"\[4, 2\]' is invalid"),
    ("view_empty_infer", lambda m: m.ones(0, 3).view(-1, 0), RuntimeError, "ambig"),
    ("expand_mismatch", lambda m: _T(m).expand(4, 2), RuntimeError, "must match"),
    ("expand_short", lambda m: _T(m).expand(3), RuntimeError, "number of sizes"),
    ("expand_lead", lambda m: _T(m).expand(-1, 3, 2), RuntimeError, "leading"),
    ("repeat_short", lambda m: _T(m).repeat(2), RuntimeError, "can not be smaller"),
    ("repeat_negative", lambda m: _T(m).repeat(-1, 1), RuntimeError, "negative"),
    ("zeros_negative", lambda m: m.zeros(-1), RuntimeError, ""),
    ("randn_negative", lambda m: m.randn(-1), RuntimeError, "negative dimension -1"),
    ("eye_negative", lambda m: m.eye(-1), RuntimeError, "n must be greater"),
    ("arange_step0", lambda m: m.arange(0, 5, 0), RuntimeError, "step must be"),
    ("arange_sign", lambda m: m.arange(5, 0), RuntimeError, "inconsistent"),
    ("arange_inf", lambda m: m.arange(0, float("inf")), RuntimeError, "unsupported"),
    ("randint_empty", lambda m: m.randint(5, 0, (2,)), RuntimeError, "from=5 >= to=0"),
    ("linspace_neg", lambda m: m.linspace(0, 1, -1), RuntimeError, "non-negative"),
    ("randperm_neg", lambda m: m.randperm(-1), RuntimeError, "negative dimension"),
    ("normal_std", lambda m: m.normal(0, -1, (2,)), RuntimeError, "std >= 0.0"),
    ("flatten_order", lambda m: _T(m).flatten(1, 0), RuntimeError, "start_dim"),
    ("squeeze_twice", lambda m: _T(m).squeeze((0, 0)), RuntimeError, "multiple"),
    ("flatten_range", lambda m: _T(m).flatten(5), IndexError, "Dimension out of"),
    ("squeeze_range", lambda m: _T(m).squeeze(5), IndexError, "Dimension out of"),
    ("size_range", lambda m: _T(m).size(5), IndexError, "Dimension out of"),
    ("size_0d", lambda m: m.tensor(1.0).size(0), IndexError, "no dimensions"),
    ("permute_range", lambda m: _T(m).permute(0, 5), IndexError, "Dimension out"),
    ("stack_range", lambda m: m.stack([_T(m)], dim=5), IndexError, "Dimension out"),
    ("cat_empty", lambda m: m.cat([]), ValueError, "non-empty list"),
    ("stack_empty", lambda m: m.stack([]), RuntimeError, "non-empty TensorList"),
    ("device_index", lambda m: m.device("cuda:x"), RuntimeError, "Invalid device"),
    ("sum_twice", lambda m: _T(m).sum(dim=(0, 0)), RuntimeError, "multiple times"),
    ("mean_dims", lambda m: _T(m).mean(dim=(0, 1.5)), TypeError, UNPACK + " 2"),
    ("matmul_vec", lambda m: _T(m) @ m.ones(3), RuntimeError, "size mismatch"),
    ("matmul_mat", lambda m: _T(m) @ m.ones(3, 4), RuntimeError, "3x2 and 3x4"),
    ("matmul_dot", lambda m: m.ones(3) @ m.ones(4), RuntimeError, "inconsistent"),
    ("matmul_row", lambda m: m.ones(2) @ _T(m), RuntimeError, "1x2 and 3x2"),
    ("matmul_0d", lambda m: m.tensor(1.0) @ _T(m), RuntimeError, "at least 1D"),
    ("bmm", lambda m: m.ones(2, 3, 4) @ m.ones(2, 5, 3), RuntimeError, "4 and 5"),
]


@pytest.mark.parametrize(("name", "call", "kind", "pattern"), _params(SIZE_CASES))
def test_view_with_float_size_raises_like_pytorch(name, call, kind, pattern):
    _check_ours(call, kind, pattern)


@pytest.mark.parametrize(("name", "call", "kind", "pattern"), _params(SIZE_CASES))
def test_bad_sizes_and_dims_match_pytorch(name, call, kind, pattern):
    _check_pytorch(call, kind)


def test_view_float_message_names_the_function_type_and_position():
    with pytest.raises(TypeError) as info:
        torch.ones(3, 2).view(3.7, 2)
    assert str(info.value) == (
        "view() received an invalid combination of arguments - got (float, int), "
        "but expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n"
    )


def test_integer_like_sizes_are_still_accepted():
    t = torch.ones(3, 2)
    assert t.view(np.int64(6)).shape == (6,)
    assert t.view(torch.tensor(3), 2).shape == (3, 2)
    assert t.view(torch.Size([2, 3])).shape == (2, 3)
    assert t.reshape([-1]).shape == (6,)
    assert t.expand(2, -1, -1).shape == (2, 3, 2)
    assert torch.zeros(np.int64(2), 3).shape == (2, 3)
    assert torch.zeros(torch.tensor(2)).shape == (2,)
    assert torch.zeros([]).shape == ()
    assert torch.randint(5, (3,)).shape == (3,)
    assert torch.ones(0, 3).view(3, -1).shape == (3, 0)
    assert torch.Tensor([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert t.sum(dim=[]).item() == 6.0  # torch: an empty dim list reduces all


def test_repeat_matches_pytorch_values_and_gradient():
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    y = x.repeat(2, 1, 3)
    assert y.shape == (2, 1, 6)
    y.sum().backward()
    assert x.grad.tolist() == [[6.0, 6.0]]
    pt = pytest.importorskip("torch")
    expected = pt.tensor([[1.0, 2.0]]).repeat(2, 1, 3)
    np.testing.assert_array_equal(y.detach().numpy(), expected.numpy())


# ---------------------------------------------------------------------------
# Finding 4: out-of-range indices raise instead of being clamped or dropped
# ---------------------------------------------------------------------------

_V = lambda m: m.ones(3)  # noqa: E731
_M = lambda m: m.ones(3, 4)  # noqa: E731
BOUNDS = r"index {} is out of bounds for dimension {} with size {}"
INDEX_CASES = [
    ("int", lambda m: (_V(m), 5), IndexError, BOUNDS.format(5, 0, 3)),
    ("int_size", lambda m: (_V(m), 3), IndexError, BOUNDS.format(3, 0, 3)),
    ("negative", lambda m: (_V(m), -4), IndexError, BOUNDS.format(-4, 0, 3)),
    ("second_dim", lambda m: (_M(m), (0, 4)), IndexError, BOUNDS.format(4, 1, 4)),
    ("neg_second", lambda m: (_M(m), (0, -5)), IndexError, BOUNDS.format(-5, 1, 4)),
    ("after_slice", lambda m: (_M(m), (slice(None), 4)), IndexError, "size 4"),
    ("after_dots", lambda m: (_M(m), (..., -5)), IndexError, "index -5"),
    ("after_none", lambda m: (_M(m), (None, 3)), IndexError, "index 3"),
    ("numpy_int", lambda m: (_V(m), np.int64(5)), IndexError, "index 5"),
    ("tensor_0d", lambda m: (_V(m), m.tensor(5)), IndexError, "index 5"),
    ("tensor", lambda m: (_V(m), m.tensor([0, 5])), IndexError, "index 5"),
    ("tensor_neg", lambda m: (_V(m), m.tensor([0, -4])), IndexError, "index -4"),
    ("int32_tensor", lambda m: (_V(m), m.tensor([7], dtype=m.int32)), IndexError, "7"),
    ("list", lambda m: (_V(m), [0, 5]), IndexError, "index 5"),
    ("numpy_array", lambda m: (_V(m), np.array([0, 5])), IndexError, "index 5"),
    ("pair", lambda m: (_M(m), ([0, 1], [1, 4])), IndexError, "index 4"),
    ("column", lambda m: (_M(m), (slice(None), m.tensor([[0], [4]]))), IndexError, "4"),
    ("empty_dim", lambda m: (m.ones(0), 0), IndexError, BOUNDS.format(0, 0, 0)),
    ("zero_dim", lambda m: (m.tensor(5.0), 0), IndexError, "invalid index of a 0-dim"),
    ("too_many", lambda m: (_M(m), (1, 2, 3)), IndexError, "too many indices"),
    ("too_many_1d", lambda m: (_V(m), (0, 0)), IndexError, "dimension 1"),
    ("float", lambda m: (_V(m), 1.5), IndexError, r"only integers.*\(got float\)"),
    ("float_tensor", lambda m: (_V(m), m.tensor([1.0])), IndexError, "must be long"),
    ("float_0d", lambda m: (_V(m), m.tensor(1.0)), IndexError, "must be long"),
    ("mask_shape", lambda m: (_V(m), m.tensor([True, False])), IndexError, "mask"),
    ("mask_2d", lambda m: (_M(m), m.tensor([[True] * 3] * 3)), IndexError, "mask"),
    ("mask_col", lambda m: (_M(m), (..., m.tensor([True] * 3))), IndexError, ""),
    ("broadcast", lambda m: (_M(m), ([0, 1], [0, 1, 2])), IndexError, "broadcast"),
    ("negative_step", lambda m: (_V(m), slice(None, None, -1)), ValueError, "step"),
    ("string", lambda m: (_V(m), "a"), TypeError, ""),
]


@pytest.mark.parametrize(("name", "make", "kind", "pattern"), _params(INDEX_CASES))
def test_out_of_range_index_read_raises_like_pytorch(name, make, kind, pattern):
    _check_ours(lambda m: _get(make(m)), kind, pattern)


@pytest.mark.parametrize(("name", "make", "kind", "pattern"), _params(INDEX_CASES))
def test_out_of_range_index_write_raises_like_pytorch(name, make, kind, pattern):
    t, index = make(torch)
    before = t.tolist()
    _check_ours(lambda m: _set((t, index)), kind, pattern)
    assert t.tolist() == before  # nothing written


@pytest.mark.parametrize(("name", "make", "kind", "pattern"), _params(INDEX_CASES))
def test_bad_index_read_and_write_match_pytorch(name, make, kind, pattern):
    _check_pytorch(lambda m: _get(make(m)), kind)
    _check_pytorch(lambda m: _set(make(m)), kind)


def _get(pair):
    t, index = pair
    return t[index]


def _set(pair):
    t, index = pair
    t[index] = 7


def test_index_write_out_of_range_is_the_issue_example():
    t = torch.ones(3)
    with pytest.raises(IndexError, match="^index 5 is out of bounds for dimension 0"):
        t[5] = 7
    assert t.tolist() == [1.0, 1.0, 1.0]


VALUE_CASES = [
    ("rows", lambda m: _M(m), slice(0, 2), lambda m: m.ones(3)),
    ("row", lambda m: _M(m), 0, lambda m: m.ones(5)),
    ("extra_dim", lambda m: _M(m), 0, lambda m: m.ones(2, 4)),
    ("column", lambda m: _M(m), (slice(None), 0), lambda m: m.ones(3, 1)),
    ("advanced", lambda m: _M(m), [0, 1], lambda m: m.ones(3, 4)),
]


@pytest.mark.parametrize(("name", "make", "index", "value"), _params(VALUE_CASES))
def test_index_write_with_mismatched_value_raises_like_pytorch(
    name, make, index, value
):
    def call(m):
        make_t = make(m)
        make_t[index] = value(m)

    _check_ours(call, RuntimeError, "cannot be broadcast to indexing result")
    _check_pytorch(call, RuntimeError)


def test_index_write_of_a_non_number_raises_type_error():
    t = torch.ones(3)
    with pytest.raises(TypeError, match="can't assign a str to a torch.FloatTensor"):
        t[1] = "a"
    with pytest.raises(TypeError, match="NoneType"):
        t[1] = None


def test_in_range_indices_still_read_and_write():
    t, m = torch.arange(3.0), torch.zeros(3, 4)
    assert t[-3].item() == 0.0 and t[2].item() == 2.0
    assert t[torch.tensor([-1, 0])].tolist() == [2.0, 0.0]
    m[-3, -4] = 1
    m[0] = torch.ones(1, 4) * 2  # a leading 1 is dropped, as in torch
    m[torch.tensor([1, 2]), torch.tensor([3, 3])] = 5
    assert m.tolist() == [[2.0] * 4, [0, 0, 0, 5.0], [0, 0, 0, 5.0]]
    assert t[True].shape == (1, 3) and t[False].shape == (0, 3)
    assert torch.ones(2, 0)[:, torch.tensor([], dtype=torch.long)].shape == (2, 0)


def test_byte_index_is_a_mask_with_pytorchs_warning():
    t = torch.arange(3.0)
    with pytest.warns(UserWarning, match="torch.uint8 is now deprecated"):
        picked = t[torch.tensor([1, 0, 1], dtype=torch.uint8)]
    assert picked.tolist() == [0.0, 2.0]


def test_index_checks_leave_compiled_indexing_working():
    def pick(x, i):
        return x[i] * 2

    compiled = torch.compile(pick)
    x, i = torch.arange(4.0), torch.tensor([3, 0])
    assert compiled(x, i).tolist() == [6.0, 0.0]


FILL_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "bool")
FILL_DTYPES += ("float16", "bfloat16", "float32", "float64")
FILLS = (300, -1, -200, -300, float("nan"), float("inf"), 1e10, 2**63, 70000.0, 1e39)
FILLS += (3.7, -3.7, -0.5, True, 0)


@pytest.mark.parametrize("shape", [(2, 3), (1,), ()])
@pytest.mark.parametrize("name", FILL_DTYPES)
def test_a_fill_value_is_converted_or_refused_as_pytorch_does(name, shape):
    """torch.full's checked conversion: the same values, or the same error."""
    real = pytest.importorskip("torch")
    for fill in FILLS:
        outs = []
        for lib in (real, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no NumPy cast warning leaks
                try:
                    outs.append(repr(lib.full(shape, fill, dtype=getattr(lib, name))))
                except RuntimeError as e:
                    outs.append(f"RuntimeError: {e}")
        assert outs[1].replace("jaxblitz.compat", "torch") == outs[0], fill
