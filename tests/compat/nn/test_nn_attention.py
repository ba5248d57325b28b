"""compat's attention and Transformer modules against PyTorch: values, gradients,
parameter names and init, masks, torch's fused-path values, errors and repr."""

import warnings

import numpy as np
import pytest

import jaxblitz.compat as compat
import jaxblitz.compat.nn.functional as cF

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _c(t):
    out = compat.tensor(t.detach().numpy())
    return out.requires_grad_(True) if t.requires_grad else out


def _close(ref, got, atol=1e-5):
    ref = ref.detach().numpy()
    got = np.asarray(got.detach().numpy())
    assert ref.shape == got.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=atol, equal_nan=True)


def _twin(torch_module, compat_module):
    """compat_module with torch_module's weights, loaded from its state_dict."""
    compat_module.load_state_dict(
        {k: _c(v) for k, v in torch_module.state_dict().items()}
    )
    return compat_module


def _encoders(batch_first):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor's note
        layer = torch.nn.TransformerEncoderLayer(4, 2, 8, 0.0, batch_first=batch_first)
        ref = torch.nn.TransformerEncoder(layer, 2, torch.nn.LayerNorm(4))
        c_layer = compat.nn.TransformerEncoderLayer(
            4, 2, 8, 0.0, batch_first=batch_first
        )
        got = compat.nn.TransformerEncoder(c_layer, 2, compat.nn.LayerNorm(4))
    return ref, _twin(ref, got)


@pytest.mark.parametrize("train", [True, False])
def test_transformer_encoder_matches_torch_outputs_and_gradients(train):
    ref, got = _encoders(batch_first=True)
    ref.train(train)
    got.train(train)
    x = torch.randn(2, 3, 4, requires_grad=True)
    pad = torch.tensor([[False] * 3, [False, False, True]])
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    cx = _c(x)
    out = ref(x, mask=mask, src_key_padding_mask=pad)
    c_out = got(cx, mask=_c(mask), src_key_padding_mask=_c(pad))
    _close(out, c_out)
    cot = torch.randn(out.shape)
    out.backward(cot)
    c_out.backward(_c(cot))
    _close(x.grad, cx.grad)
    c_params = dict(got.named_parameters())
    assert list(c_params) == [n for n, _ in ref.named_parameters()]
    for name, p in ref.named_parameters():
        _close(p.grad, c_params[name].grad)


def test_transformer_encoder_state_dict_names_shapes_and_repr_are_torchs():
    ref, got = _encoders(batch_first=False)
    assert {k: tuple(v.shape) for k, v in ref.state_dict().items()} == {
        k: tuple(v.shape) for k, v in got.state_dict().items()
    }
    assert repr(got) == repr(ref)


def test_encoder_in_eval_without_grad_zeros_padding_as_torchs_nested_path():
    ref, got = _encoders(batch_first=True)
    ref.eval()
    got.eval()
    x = torch.randn(2, 3, 4)
    for pad in (
        [[False, False, True], [True, True, True]],  # left aligned: nested
        [[False, True, False], [False, True, True]],  # not left aligned
    ):
        pad = torch.tensor(pad)
        with torch.no_grad(), compat.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _close(
                ref(x, src_key_padding_mask=pad),
                got(_c(x), src_key_padding_mask=_c(pad)),
            )


def test_mha_fused_path_gives_nan_where_torch_does_and_zeros_elsewhere():
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    got = _twin(ref, compat.nn.MultiheadAttention(4, 2, batch_first=True))
    x = torch.randn(2, 3, 4)
    pad = torch.tensor([[False, False, True], [True, True, True]])
    for train in (True, False):  # train: zeros; eval without grad: torch's NaN
        ref.train(train)
        got.train(train)
        for need_weights in (True, False):
            cx = _c(x)  # one tensor for query, key and value, as in torch's call
            with torch.no_grad(), compat.no_grad():
                out, w = ref(x, x, x, key_padding_mask=pad, need_weights=need_weights)
                c_out, c_w = got(
                    cx, cx, cx, key_padding_mask=_c(pad), need_weights=need_weights
                )
            _close(out, c_out)
            assert (w is None) == (c_w is None)
            if w is not None:
                _close(w, c_w)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"attn_mask": "bool"},
        {"attn_mask": "float"},
        {"is_causal": True},
        {"scale": -0.3},
        {"enable_gqa": True},
    ],
)
def test_sdpa_matches_torch_values_and_gradients(kwargs):
    torch.manual_seed(0)
    kv_heads = 1 if kwargs.get("enable_gqa") else 2
    q = torch.randn(2, 2, 3, 4, requires_grad=True)
    k = torch.randn(2, kv_heads, 5, 4, requires_grad=True)
    v = torch.randn(2, kv_heads, 5, 6, requires_grad=True)
    kwargs = dict(kwargs)
    if kwargs.get("attn_mask") == "bool":
        mask = torch.rand(3, 5) > 0.4
        mask[1] = False  # a query that sees nothing: zeros, zero gradient
        kwargs["attn_mask"] = mask
    elif kwargs.get("attn_mask") == "float":
        kwargs["attn_mask"] = torch.randn(3, 5)
    c_kwargs = {
        k_: _c(v_) if isinstance(v_, torch.Tensor) else v_ for k_, v_ in kwargs.items()
    }
    cq, ck, cv = _c(q), _c(k), _c(v)
    out = F.scaled_dot_product_attention(q, k, v, **kwargs)
    c_out = cF.scaled_dot_product_attention(cq, ck, cv, **c_kwargs)
    _close(out, c_out)
    cot = torch.randn(out.shape)
    out.backward(cot)
    c_out.backward(_c(cot))
    for t, c in ((q, cq), (k, ck), (v, cv)):
        _close(t.grad, c.grad)


def test_sdpa_dropout_draws_from_compats_generator():
    q = compat.randn(2, 3, 4)
    compat.manual_seed(1)
    a = cF.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    compat.manual_seed(1)
    b = cF.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert compat.equal(a, b)
    assert not compat.equal(a, cF.scaled_dot_product_attention(q, q, q))
    zero = cF.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    assert not zero.abs().sum().item()


def _sdpa_bad_inputs():
    r = torch.randn
    q, k, v = r(2, 4, 3, 8), r(2, 4, 5, 8), r(2, 4, 5, 6)
    return [
        ((q, k.double(), v), {}),
        ((r(8), r(8), r(8)), {}),
        ((q, k, v), {"attn_mask": torch.ones(3, 5, dtype=torch.int64)}),
        ((q, k, v), {"attn_mask": torch.ones(4, 5, dtype=torch.bool)}),
        ((q, k, v), {"attn_mask": torch.ones(1, 1, 1, 3, 5, dtype=torch.bool)}),
        (
            (q, k, v),
            {"attn_mask": torch.ones(3, 5, dtype=torch.bool), "is_causal": True},
        ),
        ((q, r(2, 3, 5, 8), r(2, 3, 5, 6)), {"enable_gqa": True}),
        ((q, r(2, 2, 5, 8), r(2, 2, 5, 6)), {}),
        ((q, r(2, 4, 5, 7), v), {}),
        ((q, k, r(2, 4, 6, 6)), {}),
        ((r(3, 8), r(5, 7), r(5, 6)), {}),
        ((q.int(), k.int(), v.int()), {}),
        ((q, k, v), {"dropout_p": 1.5}),
        (([1], k, v), {}),
    ]


@pytest.mark.parametrize("case", range(len(_sdpa_bad_inputs())))
def test_sdpa_refuses_what_torch_refuses_in_its_words(case):
    args, kwargs = _sdpa_bad_inputs()[case]
    with pytest.raises(Exception) as ref:
        F.scaled_dot_product_attention(*args, **kwargs)
    c_args = [_c(a) if isinstance(a, torch.Tensor) else a for a in args]
    c_kwargs = {
        k: _c(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()
    }
    with pytest.raises(type(ref.value)) as got:
        cF.scaled_dot_product_attention(*c_args, **c_kwargs)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"bias": False},
        {"kdim": 3, "vdim": 5},
        {"add_bias_kv": True, "add_zero_attn": True},
    ],
)
def test_mha_parameters_are_torchs_by_name_shape_and_init(kwargs):
    ref = torch.nn.MultiheadAttention(4, 2, **kwargs)
    got = compat.nn.MultiheadAttention(4, 2, **kwargs)
    assert {k: tuple(v.shape) for k, v in ref.state_dict().items()} == {
        k: tuple(v.shape) for k, v in got.state_dict().items()
    }
    assert repr(got) == repr(ref)
    params = dict(got.named_parameters())
    if "in_proj_bias" in params:  # torch zeroes both biases
        assert not params["in_proj_bias"].abs().sum().item()
        assert not params["out_proj.bias"].abs().sum().item()
    for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight"):
        if name in params:  # Xavier-uniform: within sqrt(6 / (fan_in + fan_out))
            w = params[name]
            bound = (6 / (w.shape[0] + w.shape[1])) ** 0.5
            assert 0.5 * bound < w.abs().max().item() <= bound


@pytest.mark.parametrize(
    "kwargs, call",
    [
        ({"batch_first": True}, {"need_weights": True, "average_attn_weights": False}),
        ({"kdim": 3, "vdim": 5}, {"need_weights": False}),
        ({"add_bias_kv": True, "add_zero_attn": True}, {"attn_mask": "causal"}),
        ({}, {"is_causal": True, "attn_mask": "causal", "need_weights": False}),
    ],
)
def test_mha_forward_matches_torch(kwargs, call):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(4, 2, **kwargs)
    got = _twin(ref, compat.nn.MultiheadAttention(4, 2, **kwargs))
    q = torch.randn(3, 2, 4, requires_grad=True)  # (L, N, E), batch_first or not
    k = torch.randn(3, 2, kwargs.get("kdim", 4))
    v = torch.randn(3, 2, kwargs.get("vdim", 4))
    if call.get("attn_mask") == "causal":
        k, v = q, q  # self-attention: one projection
        call = {**call, "attn_mask": torch.ones(3, 3, dtype=torch.bool).triu(1)}
    c_call = {n: _c(x) if isinstance(x, torch.Tensor) else x for n, x in call.items()}
    cq = _c(q)
    ck, cv = (cq, cq) if k is q else (_c(k), _c(v))
    out, w = ref(q, k, v, **call)
    c_out, c_w = got(cq, ck, cv, **c_call)
    _close(out, c_out)
    assert (w is None) == (c_w is None)
    if w is not None:
        _close(w, c_w)
    out.sum().backward()
    c_out.sum().backward()
    _close(q.grad, cq.grad)
    c_params = dict(got.named_parameters())
    for name, p in ref.named_parameters():
        _close(p.grad, c_params[name].grad)


def test_mha_unbatched_input_and_functional_form_match_torch():
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(4, 2)
    got = _twin(ref, compat.nn.MultiheadAttention(4, 2))
    x = torch.randn(3, 4)
    pad = torch.tensor([False, False, True])
    out, w = ref(x, x, x, key_padding_mask=pad)
    c_out, c_w = got(_c(x), _c(x), _c(x), key_padding_mask=_c(pad))
    _close(out, c_out)
    _close(w, c_w)
    xb = torch.randn(3, 2, 4)
    p = dict(ref.named_parameters())
    out, _ = F.multi_head_attention_forward(
        xb,
        xb,
        xb,
        4,
        2,
        p["in_proj_weight"],
        p["in_proj_bias"],
        None,
        None,
        False,
        0.0,
        p["out_proj.weight"],
        p["out_proj.bias"],
        need_weights=False,
    )
    cp = {n: _c(t) for n, t in p.items()}
    c_out, _ = cF.multi_head_attention_forward(
        _c(xb),
        _c(xb),
        _c(xb),
        4,
        2,
        cp["in_proj_weight"],
        cp["in_proj_bias"],
        None,
        None,
        False,
        0.0,
        cp["out_proj.weight"],
        cp["out_proj.bias"],
        need_weights=False,
    )
    _close(out, c_out)


def _both_raise(make, call):
    with pytest.raises(Exception) as ref:
        call(torch, make(torch))
    with pytest.raises(type(ref.value)) as got:
        call(compat, make(compat))
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize(
    "make, call",
    [
        (lambda lib: None, lambda lib, m: lib.nn.MultiheadAttention(6, 4)),
        (lambda lib: None, lambda lib, m: lib.nn.MultiheadAttention(0, 2)),
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2),
            lambda lib, m: m(*[lib.ones(3, 2, 4)] * 3, is_causal=True),
        ),
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2),
            lambda lib, m: m(*[lib.ones(3, 2, 4)] * 3, attn_mask=lib.ones(2, 3)),
        ),
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2),
            lambda lib, m: m(
                *[lib.ones(3, 2, 4)] * 3,
                key_padding_mask=lib.ones(2, 3, dtype=lib.int64),
            ),
        ),
        (
            lambda lib: lib.nn.MultiheadAttention(4, 2),
            lambda lib, m: m(lib.ones(3, 2, 4), lib.ones(3, 4), lib.ones(3, 4)),
        ),
        (
            lambda lib: None,
            lambda lib, m: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
        ),
        (
            lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8),
            lambda lib, m: m(lib.ones(3, 2, 4), lib.ones(3, 1, 4)),
        ),
        (
            lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8),
            lambda lib, m: m(lib.ones(3, 2, 4), lib.ones(3, 2, 5)),
        ),
    ],
)
def test_mha_and_transformer_refuse_what_torch_refuses(make, call):
    _both_raise(make, call)


def test_transformer_matches_torch_with_causal_masks_and_a_training_step():
    torch.manual_seed(0)
    kwargs = {"num_encoder_layers": 1, "num_decoder_layers": 1, "dim_feedforward": 8}
    kwargs.update(dropout=0.0, activation="gelu", norm_first=True, batch_first=True)
    ref = torch.nn.Transformer(4, 2, **kwargs)
    got = _twin(ref, compat.nn.Transformer(4, 2, **kwargs))
    src, tgt = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    c_mask = compat.nn.Transformer.generate_square_subsequent_mask(3)
    _close(mask, c_mask)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    c_opt = compat.optim.SGD(got.parameters(), lr=0.1)
    out = ref(src, tgt, tgt_mask=mask, tgt_is_causal=True)
    c_out = got(_c(src), _c(tgt), tgt_mask=c_mask, tgt_is_causal=True)
    _close(out, c_out)
    opt.zero_grad()
    c_opt.zero_grad()
    out.square().mean().backward()
    c_out.square().mean().backward()
    opt.step()
    c_opt.step()
    c_state = got.state_dict()
    for name, p in ref.state_dict().items():
        _close(p, c_state[name])


def test_decoder_layer_with_a_callable_activation_and_norm_first_matches_torch():
    torch.manual_seed(0)
    ref = torch.nn.TransformerDecoderLayer(
        4, 2, 8, 0.0, activation=F.gelu, norm_first=True, bias=False
    )
    got = _twin(
        ref,
        compat.nn.TransformerDecoderLayer(
            4, 2, 8, 0.0, activation=cF.gelu, norm_first=True, bias=False
        ),
    )
    tgt, mem = torch.randn(3, 2, 4), torch.randn(3, 2, 4)
    pad = torch.tensor([[False, False, True], [False] * 3])
    out = ref(tgt, mem, memory_key_padding_mask=pad)
    _close(out, got(_c(tgt), _c(mem), memory_key_padding_mask=_c(pad)))
    assert repr(got) == repr(ref)


def test_encoder_warns_as_torch_when_nested_tensors_cannot_be_used():
    for lib in (torch, compat):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            layer = lib.nn.TransformerEncoderLayer(4, 2, 8)
            encoder = lib.nn.TransformerEncoder(layer, 1)
        messages = [str(w.message) for w in seen if "nested" in str(w.message)]
        if lib is torch:
            expected = messages
        else:
            assert messages == expected
            assert encoder.use_nested_tensor is False and encoder.enable_nested_tensor


def test_encoder_layers_are_independent_copies():
    layer = compat.nn.TransformerEncoderLayer(4, 2, 8, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        encoder = compat.nn.TransformerEncoder(layer, 2)
    with compat.no_grad():
        encoder.layers[0].linear1.weight.fill_(0.0)
    assert encoder.layers[1].linear1.weight.abs().sum().item() > 0
    assert layer.linear1.weight.abs().sum().item() > 0


def test_the_fastpath_switch_gives_the_unfused_values_as_torch():
    """``torch.backends.mha.set_fastpath_enabled(False)``: an encoder's padded
    positions hold the unfused path's values, not the fused path's zeros."""
    real = pytest.importorskip("torch")
    real.manual_seed(0)
    kw = {"dim_feedforward": 8, "dropout": 0.0, "batch_first": True}
    t = real.nn.TransformerEncoder(real.nn.TransformerEncoderLayer(4, 2, **kw), 1)
    c = compat.nn.TransformerEncoder(compat.nn.TransformerEncoderLayer(4, 2, **kw), 1)
    t.eval(), c.eval()
    c.load_state_dict({k: compat.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = real.randn(2, 3, 4)
    pad = real.tensor([[False, False, True], [False, False, False]])
    outs = {}
    for enabled in (True, False):
        real.backends.mha.set_fastpath_enabled(enabled)
        compat.backends.mha.set_fastpath_enabled(enabled)
        try:
            with real.no_grad(), compat.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = t(x, src_key_padding_mask=pad).numpy()
                got = c(
                    compat.tensor(x.numpy()),
                    src_key_padding_mask=compat.tensor(pad.numpy()),
                ).numpy()
        finally:
            real.backends.mha.set_fastpath_enabled(True)
            compat.backends.mha.set_fastpath_enabled(True)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
        outs[enabled] = got
    assert not outs[True][0, 2].any() and outs[False][0, 2].any()
