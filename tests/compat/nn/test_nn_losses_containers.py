"""compat's remaining losses, distances, parameter containers, ``Bilinear`` and the
lazy modules against PyTorch: options the OpInfo/ModuleInfo samples leave out,
parameter names, printing, errors and a training step."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def both(array):
    """(torch, compat) leaf tensors holding ``array``, both requiring grad."""
    t = pt.tensor(array, requires_grad=True)
    c = ct.tensor(array, requires_grad=True)
    return t, c


def close(c, t, atol=1e-6):
    np.testing.assert_allclose(
        np.asarray(c.detach().numpy()), t.detach().numpy(), rtol=1e-5, atol=atol
    )


def same_loss_and_grads(torch_loss, compat_loss, *arrays, **kwargs):
    """Both losses' values and every input's gradient agree."""
    pairs = [both(a) for a in arrays]
    t_out = torch_loss(*[t for t, _ in pairs], **kwargs)
    c_out = compat_loss(*[c for _, c in pairs], **kwargs)
    close(c_out, t_out)
    t_out.sum().backward()
    c_out.sum().backward()
    for t, c in pairs:
        close(c.grad, t.grad)


rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5))
Y = rng.standard_normal((4, 5))
Z = rng.standard_normal((4, 5))


# -- losses ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_module_matches_torch(reduction, log_target):
    target = np.log(rng.dirichlet(np.ones(5), 4)) if log_target else rng.random((4, 5))
    same_loss_and_grads(
        pt.nn.KLDivLoss(reduction=reduction, log_target=log_target),
        ct.nn.KLDivLoss(reduction=reduction, log_target=log_target),
        np.log(rng.dirichlet(np.ones(5), 4)),
        target,
    )


def test_kl_div_mean_warns_as_torch():
    t, c = both(X)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch"):
        ct.nn.functional.kl_div(c, c.detach())


@pytest.mark.parametrize("log_input, full", [(False, True), (True, True)])
def test_poisson_nll_options_match_torch(log_input, full):
    inputs = rng.random((4, 5)) + 0.1
    target = rng.integers(0, 5, (4, 5)).astype(np.float64)
    same_loss_and_grads(
        pt.nn.PoissonNLLLoss(log_input=log_input, full=full, eps=1e-4),
        ct.nn.PoissonNLLLoss(log_input=log_input, full=full, eps=1e-4),
        inputs,
        target,
    )


def test_gaussian_nll_homoscedastic_and_clamped_variance_match_torch():
    var = rng.random(4) * 1e-3  # one variance a sample, some below eps
    same_loss_and_grads(
        pt.nn.GaussianNLLLoss(full=True, eps=5e-4),
        ct.nn.GaussianNLLLoss(full=True, eps=5e-4),
        X,
        Y,
        var,
    )


def test_gaussian_nll_errors_are_torch_s():
    c = ct.tensor(X)
    with pytest.raises(ValueError, match="var has negative entry"):
        # (lazily, a computed var's values are checked when the loss is read)
        ct.nn.functional.gaussian_nll_loss(c, c, -ct.ones(4, 5)).item()
    with pytest.raises(ValueError, match="var is of incorrect size"):
        ct.nn.functional.gaussian_nll_loss(c, c, ct.ones(3))


@pytest.mark.parametrize("p, margin", [(1, 0.5), (2, 2.0)])
def test_multi_margin_loss_with_weight_matches_torch(p, margin):
    target = rng.integers(0, 5, 4)
    weight = rng.random(5)
    t_loss = pt.nn.MultiMarginLoss(p=p, margin=margin, weight=pt.tensor(weight))
    c_loss = ct.nn.MultiMarginLoss(p=p, margin=margin, weight=ct.tensor(weight))
    t, c = both(X)
    close(c_loss(c, ct.tensor(target)), t_loss(t, pt.tensor(target)))
    t_loss(t, pt.tensor(target)).backward()
    c_loss(c, ct.tensor(target)).backward()
    close(c.grad, t.grad)
    assert [k for k, _ in c_loss.named_buffers()] == ["weight"]


def test_multi_margin_and_multilabel_errors_are_torch_s():
    c = ct.tensor(X)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        ct.nn.MultiMarginLoss(p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        ct.nn.functional.multi_margin_loss(c, ct.tensor([0, 1, 2, 7]))
    with pytest.raises(RuntimeError, match="'target' is out of range"):
        ct.nn.functional.multilabel_margin_loss(c, ct.full((4, 5), -3))


def test_multilabel_margin_stops_at_the_first_minus_one():
    target = np.array(
        [[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [2, 2, -1, 0, 0]]
    )
    t, c = both(X)
    for reduction in ("none", "sum"):
        t_out = pt.nn.functional.multilabel_margin_loss(
            t, pt.tensor(target), reduction=reduction
        )
        c_out = ct.nn.functional.multilabel_margin_loss(
            c, ct.tensor(target), reduction=reduction
        )
        close(c_out, t_out)


@pytest.mark.parametrize("swap, p", [(True, 1.0), (False, 3.0)])
def test_triplet_margin_loss_swap_and_p_match_torch(swap, p):
    same_loss_and_grads(
        pt.nn.TripletMarginLoss(margin=0.5, p=p, swap=swap),
        ct.nn.TripletMarginLoss(margin=0.5, p=p, swap=swap),
        X,
        Y,
        Z,
    )


def test_triplet_margin_with_a_distance_function_matches_torch():
    def t_dist(a, b):
        return 1 - pt.nn.functional.cosine_similarity(a, b)

    def c_dist(a, b):
        return 1 - ct.nn.functional.cosine_similarity(a, b)

    pairs = [both(a) for a in (X, Y, Z)]
    t_loss = pt.nn.TripletMarginWithDistanceLoss(distance_function=t_dist, swap=True)
    c_loss = ct.nn.TripletMarginWithDistanceLoss(distance_function=c_dist, swap=True)
    t_out, c_out = t_loss(*[t for t, _ in pairs]), c_loss(*[c for _, c in pairs])
    close(c_out, t_out)
    t_out.backward()
    c_out.backward()
    for t, c in pairs:
        close(c.grad, t.grad)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        ct.nn.TripletMarginWithDistanceLoss(margin=0)


def test_legacy_size_average_warns_and_sums():
    t, c = both(X)
    target = np.sign(Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = pt.nn.SoftMarginLoss(size_average=False)(t, pt.tensor(target))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        c_loss = ct.nn.SoftMarginLoss(size_average=False)
    close(c_loss(c, ct.tensor(target)), t_out)


def test_soft_margin_target_is_not_differentiable_as_in_torch():
    c = ct.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to"):
        ct.nn.functional.soft_margin_loss(c, c)


def test_nll_loss_2d_is_nll_loss_with_torch_s_deprecation():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = ct.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(loss, ct.nn.NLLLoss) and loss.ignore_index == 1


def test_the_new_losses_print_as_torch_s():
    for name in ("MarginRankingLoss", "HingeEmbeddingLoss", "KLDivLoss", "CTCLoss"):
        if hasattr(ct.nn, name):
            assert repr(getattr(ct.nn, name)()) == repr(getattr(pt.nn, name)())


# -- distances ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]
)
def test_cdist_both_compute_modes_match_torch(mode):
    a, b = rng.standard_normal((2, 30, 3)), rng.standard_normal((1, 7, 3))
    (ta, ca), (tb, cb) = both(a), both(b)
    t_out = pt.cdist(ta, tb, compute_mode=mode)
    c_out = ct.cdist(ca, cb, compute_mode=mode)
    close(c_out, t_out)
    t_out.sum().backward()
    c_out.sum().backward()
    close(ca.grad, ta.grad, atol=1e-5)
    close(cb.grad, tb.grad, atol=1e-5)
    with pytest.raises(ValueError, match="is not a valid value for compute_mode"):
        ct.cdist(ca, cb, compute_mode="fast")


def test_distance_modules_match_torch():
    same_loss_and_grads(
        pt.nn.PairwiseDistance(p=1.5, keepdim=True),
        ct.nn.PairwiseDistance(p=1.5, keepdim=True),
        X,
        Y,
    )
    same_loss_and_grads(
        pt.nn.CosineSimilarity(dim=0, eps=1e-3),
        ct.nn.CosineSimilarity(dim=0, eps=1e-3),
        X,
        Y,
    )
    zeros = np.zeros((2, 5))  # a zero vector: torch's clamped norm, a zero gradient
    same_loss_and_grads(
        pt.nn.CosineSimilarity(), ct.nn.CosineSimilarity(), zeros, Y[:2]
    )
    assert repr(ct.nn.PairwiseDistance()) == "PairwiseDistance()"


# -- parameter containers -------------------------------------------------------------


def test_parameter_list_indexes_appends_and_names_as_torch():
    shapes = [(2, 3), (4,)]
    t_list = pt.nn.ParameterList([pt.nn.Parameter(pt.zeros(s)) for s in shapes])
    c_list = ct.nn.ParameterList([ct.nn.Parameter(ct.zeros(s)) for s in shapes])
    t_list.append(pt.ones(5, dtype=pt.float64))
    c_list.append(ct.ones(5, dtype=ct.float64))  # a plain tensor becomes a Parameter
    t_list.extend([pt.ones(1)])
    c_list += [ct.ones(1)]
    assert isinstance(c_list[2], ct.nn.Parameter) and c_list[-1] is c_list[3]
    assert repr(c_list) == repr(t_list)
    assert (
        list(c_list.state_dict()) == list(t_list.state_dict()) == ["0", "1", "2", "3"]
    )
    assert [tuple(p.shape) for p in c_list[1:3]] == [(4,), (5,)]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        c_list[4]
    with pytest.raises(TypeError, match="should be called with an iterable"):
        c_list.extend(ct.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        c_list(1)


def test_parameter_dict_sorts_a_dict_and_prints_as_torch():
    t_dict = pt.nn.ParameterDict(
        {"b": pt.ones(2), "a": pt.nn.Parameter(pt.zeros(1, 2))}
    )
    c_dict = ct.nn.ParameterDict(
        {"b": ct.ones(2), "a": ct.nn.Parameter(ct.zeros(1, 2))}
    )
    assert repr(c_dict) == repr(t_dict)
    assert list(c_dict.state_dict()) == list(t_dict.state_dict()) == ["a", "b"]
    c_dict.update([("z", ct.ones(3))])
    c_dict["y"] = "not a tensor"
    assert list(c_dict) == ["a", "b", "z", "y"]
    assert "Object of type: str" in repr(c_dict)
    assert c_dict.pop("y") == "not a tensor" and "y" not in c_dict
    assert c_dict.popitem()[0] == "z" and len(c_dict) == 2
    merged = c_dict | ct.nn.ParameterDict({"c": ct.ones(1)})
    assert list(merged.keys()) == ["a", "b", "c"] and len(c_dict) == 2
    with pytest.raises(TypeError, match="cannot be used as a key"):
        c_dict[1]
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        c_dict.update([("a", 1, 2)])


def test_a_parameter_list_trains_as_torch():
    w = rng.standard_normal((3, 2))
    t_list = pt.nn.ParameterList([pt.tensor(w)])
    c_list = ct.nn.ParameterList([ct.tensor(w)])
    for lib, params in ((pt, t_list), (ct, c_list)):
        opt = lib.optim.SGD(params.parameters(), lr=0.1)
        loss = (lib.tensor(X[:, :3]) @ params[0]).pow(2).mean()
        loss.backward()
        opt.step()
    close(c_list[0], t_list[0])


# -- Bilinear -------------------------------------------------------------------------


def test_bilinear_names_init_and_values_match_torch():
    c_layer = ct.nn.Bilinear(3, 4, 2)
    t_layer = pt.nn.Bilinear(3, 4, 2)
    assert repr(c_layer) == repr(t_layer)
    assert [(n, tuple(p.shape)) for n, p in c_layer.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in t_layer.named_parameters()
    ]
    bound = 1 / np.sqrt(3)
    assert np.abs(c_layer.weight.detach().numpy()).max() <= bound
    c_layer.load_state_dict(
        {k: ct.tensor(v.numpy()) for k, v in t_layer.state_dict().items()}
    )
    a, b = (
        rng.standard_normal((5, 3)).astype(np.float32),
        rng.standard_normal((5, 4)).astype(np.float32),
    )
    close(
        c_layer(ct.tensor(a), ct.tensor(b)),
        t_layer(pt.tensor(a), pt.tensor(b)),
        atol=1e-5,
    )
    assert ct.nn.Bilinear(3, 4, 2, bias=False).bias is None
    with pytest.raises(RuntimeError, match="input1 size does not match weight size"):
        c_layer(ct.ones(5, 4), ct.ones(5, 4))


# -- lazy modules -------------------------------------------------------------------

LAZY = [
    ("LazyLinear", (3,), (2, 5)),
    ("LazyConv1d", (4, 3), (2, 2, 8)),
    ("LazyConv2d", (4, 3), (2, 6, 6)),  # unbatched: channels first
    ("LazyConvTranspose3d", (2, 2), (1, 2, 3, 3, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)),
]


@pytest.mark.parametrize("name, args, shape", LAZY)
def test_a_lazy_module_becomes_torch_s_module_at_its_first_call(name, args, shape):
    t_module, c_module = getattr(pt.nn, name)(*args), getattr(ct.nn, name)(*args)
    assert repr(c_module) == repr(t_module)
    assert repr(c_module.weight) == "<UninitializedParameter>"
    assert list(c_module.state_dict()) == list(t_module.state_dict())
    weight = c_module.weight
    x = rng.standard_normal(shape).astype(np.float32)
    t_out, c_out = t_module(pt.tensor(x)), c_module(ct.tensor(x))
    assert type(c_module).__name__ == type(t_module).__name__ == name[4:]
    assert repr(c_module) == repr(t_module)
    assert c_module.weight is weight and type(weight) is ct.nn.Parameter
    t_shapes = [(k, tuple(v.shape)) for k, v in t_module.state_dict().items()]
    assert [(k, tuple(v.shape)) for k, v in c_module.state_dict().items()] == t_shapes
    c_module.load_state_dict(
        {k: ct.tensor(v.numpy()) for k, v in t_module.state_dict().items()}
    )
    if "Norm" in name:  # the first call moved torch's running statistics
        c_module.eval(), t_module.eval()
    close(c_module(ct.tensor(x)), t_module(pt.tensor(x)), atol=1e-5)
    assert tuple(c_out.shape) == tuple(t_out.shape)


def test_a_lazy_linear_draws_linear_s_init_in_the_dtype_it_was_moved_to():
    layer = ct.nn.LazyLinear(50).double()
    layer(ct.ones(2, 400, dtype=ct.float64))
    assert layer.in_features == 400 and layer.weight.dtype == ct.float64
    w = layer.weight.detach().numpy()
    assert np.abs(w).max() <= 1 / 20 and np.abs(w).max() > 0.9 / 20


def test_a_lazy_module_loads_a_state_dict_before_its_first_call():
    source = pt.nn.Linear(4, 3)
    layer = ct.nn.LazyLinear(3)
    layer.load_state_dict(
        {k: ct.tensor(v.detach().numpy()) for k, v in source.state_dict().items()}
    )
    assert tuple(layer.weight.shape) == (3, 4)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    close(layer(ct.tensor(x)), source(pt.tensor(x)), atol=1e-6)
    assert type(layer) is ct.nn.Linear and layer.in_features == 0  # as torch's


def test_lazy_modules_in_a_sequential_train_as_torch():
    x = rng.standard_normal((4, 2, 5)).astype(np.float32)
    nets = []
    for lib in (pt, ct):
        net = lib.nn.Sequential(
            lib.nn.LazyConv1d(3, 2), lib.nn.Flatten(), lib.nn.LazyLinear(1)
        )
        net(lib.tensor(x))  # materialise
        nets.append(net)
    nets[1].load_state_dict(
        {k: ct.tensor(v.detach().numpy()) for k, v in nets[0].state_dict().items()}
    )
    for lib, net in ((pt, nets[0]), (ct, nets[1])):
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        net(lib.tensor(x)).pow(2).mean().backward()
        opt.step()
    for (name, t_p), (c_name, c_p) in zip(
        nets[0].named_parameters(), nets[1].named_parameters(), strict=True
    ):
        assert name == c_name
        close(c_p, t_p, atol=1e-6)


def test_a_lazy_conv_refuses_an_input_of_the_wrong_rank_as_torch():
    with pytest.raises(
        RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\)"
    ):
        ct.nn.LazyConv2d(4, 3)(ct.ones(2, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        ct.nn.LazyConv2d(4, 3, groups=2)(ct.ones(1, 3, 5, 5))


# -- CTC ------------------------------------------------------------------------------


def test_ctc_loss_with_concatenated_targets_matches_torch_s_values_and_grads():
    zero_infinity = False  # torch's nan gradient for the impossible one
    log_probs = np.log(rng.dirichlet(np.ones(5), (12, 3)))  # (T, N, C)
    targets = np.array([1, 2, 2, 3, 4, 4, 4, 4])  # lengths 3, 1, 4: the last too long
    lengths = ([12, 9, 3], [3, 1, 4])
    t, c = both(log_probs)
    t_out = pt.nn.CTCLoss(reduction="none", zero_infinity=zero_infinity)(
        t, pt.tensor(targets), *lengths
    )
    c_out = ct.nn.CTCLoss(reduction="none", zero_infinity=zero_infinity)(
        c, ct.tensor(targets), *lengths
    )
    np.testing.assert_allclose(c_out.detach().numpy(), t_out.detach().numpy())
    t_out.sum().backward()
    c_out.sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_ctc_loss_unbatched_and_errors_as_torch():
    log_probs = np.log(rng.dirichlet(np.ones(4), 6))  # (T, C)
    t_out = pt.nn.functional.ctc_loss(
        pt.tensor(log_probs), pt.tensor([1, 3]), pt.tensor(6), pt.tensor(2)
    )
    c_out = ct.nn.functional.ctc_loss(
        ct.tensor(log_probs), ct.tensor([1, 3]), ct.tensor(6), ct.tensor(2)
    )
    close(c_out, t_out)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        ct.nn.functional.ctc_loss(ct.tensor(log_probs), ct.tensor([1]), [6], [1], 4)
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 6"):
        ct.nn.functional.ctc_loss(ct.tensor(log_probs), ct.tensor([1]), [7], [1])


def test_a_lazy_module_inside_a_container_takes_its_sizes_from_a_loaded_state_dict():
    """torch's lazy load hook runs for every submodule: a Sequential of lazy
    layers loads a state_dict before its first call."""
    real = pytest.importorskip("torch")
    real.manual_seed(0)
    t = real.nn.Sequential(real.nn.Linear(3, 4), real.nn.ReLU(), real.nn.Linear(4, 2))
    state = {k: ct.tensor(v.detach().numpy()) for k, v in t.state_dict().items()}
    m = ct.nn.Sequential(ct.nn.LazyLinear(4), ct.nn.ReLU(), ct.nn.LazyLinear(2))
    m.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    got = m(ct.tensor(x)).detach().numpy()
    # float32's few ulps: an output near 0 may differ in its last bits
    want = t(real.tensor(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert type(m[0]).__name__ == "Linear" and tuple(m[2].weight.shape) == (2, 4)
