"""Forward-mode AD (``torch.autograd.forward_ad``) on compat against PyTorch:
tangents through ops on PyTorch's own OpInfo samples, in-place writes and
views, custom Functions' jvp, gradcheck(check_forward_ad=True) and torch's
errors. Each runs in the suite's mode (eager, or lazy with
``JAXBLITZ_COMPAT_LAZY=1``)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal imports it

import jaxblitz.compat as compat  # noqa: E402
from tests.compat import differential  # noqa: E402

fwAD = torch.autograd.forward_ad
cfwAD = compat.autograd.forward_ad

# A spread of ops PyTorch derives forward (supports_forward_ad): arithmetic,
# transcendental, reductions, shapes and views, indexing, linear algebra and
# the Blitz network's layers.
OPS = [
    "add", "mul", "div.no_rounding_mode", "pow", "sin", "exp", "log", "tanh",
    "sigmoid", "sqrt",
    "abs", "clamp", "where", "lerp", "addcmul", "sum", "mean", "prod", "cumsum",
    "amax", "max.reduction_with_dim", "matmul", "mm", "transpose", "reshape",
    "permute", "cat", "stack", "index_select", "gather", "nn.functional.linear",
    "nn.functional.relu", "softmax", "log_softmax", "var", "norm",
]  # fmt: skip


def _op(name: str):
    from torch.testing._internal.common_methods_invocations import op_db

    for op in op_db:
        if differential.row_name(op) == name:
            return op
    raise LookupError(name)


def _tangent_like(t: "torch.Tensor", seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).uniform(-1, 1, tuple(t.shape))
    return values.astype(np.float64)


def _outputs(out):
    return list(out) if isinstance(out, tuple | list) else [out]


@pytest.mark.parametrize("name", OPS)
def test_an_ops_tangent_is_pytorchs_on_its_opinfo_samples(name):
    op = _op(name)
    assert op.supports_forward_ad
    _, torch_fn, compat_fn = differential.op_variants(op)[0]
    samples = list(op.sample_inputs("cpu", torch.float64))[:3]
    for k, sample in enumerate(samples):
        args = [sample.input, *sample.args]
        memo: dict = {}
        c_args = differential.to_compat(args, memo)
        c_kwargs = differential.to_compat(sample.kwargs, memo)
        duals = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        duals = [i for i in duals if args[i].is_floating_point()]
        with fwAD.dual_level():
            t_in = list(args)
            for i in duals:
                tan = torch.from_numpy(_tangent_like(args[i], 10 * k + i))
                t_in[i] = fwAD.make_dual(args[i].detach(), tan)
            outs = _outputs(torch_fn(*t_in, **sample.kwargs))
            ref = [fwAD.unpack_dual(o).tangent for o in outs]
        with cfwAD.dual_level():
            c_in = list(c_args)
            for i in duals:
                tan = compat.tensor(_tangent_like(args[i], 10 * k + i))
                c_in[i] = cfwAD.make_dual(c_args[i].detach(), tan)
            outs = _outputs(compat_fn(*c_in, **c_kwargs))
            got = [cfwAD.unpack_dual(o).tangent for o in outs]
        assert len(got) == len(ref), (name, k)
        for r, g in zip(ref, got, strict=True):
            assert (r is None) == (g is None), (name, k, sample)
            if r is not None:
                np.testing.assert_allclose(
                    np.asarray(g.detach()), r.detach().numpy(), rtol=1e-7, atol=1e-9
                )


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the error is what is compared
        return type(e).__name__, str(e)
    return None


def _level_errors(lib, fw):
    p, t = lib.arange(4.0).reshape(2, 2), lib.ones(2, 2)
    seen = [
        _raised(lambda: fw.make_dual(p, t)),
        _raised(lambda: fw.exit_dual_level()),
        fw.unpack_dual(p).tangent,
    ]
    with fw.dual_level():
        d = fw.make_dual(p, t)
        seen += [
            _raised(lambda: fw.make_dual(p, lib.ones(3))),
            _raised(lambda: fw.make_dual(lib.arange(4), lib.arange(4))),
            _raised(lambda: fw.make_dual(p, lib.ones(2, 2, dtype=lib.long))),
            _raised(lambda: fw.enter_dual_level()),
            _raised(lambda: fw.make_dual(d, t)),
            _raised(lambda: lib.floor_divide(d, 2)),
            _raised(lambda: 3 % d),
            _raised(lambda: lib.func.jvp(lib.sin, (p,), (t,))),
            fw.unpack_dual(d > 1).tangent,
            fw.unpack_dual(d).tangent is t,
            fw.unpack_dual(d.detach()).tangent,
        ]
    seen.append(fw.unpack_dual(d).tangent)
    return seen


def test_levels_and_errors_are_pytorchs():
    assert _level_errors(compat, cfwAD) == _level_errors(torch, fwAD)


def _writes(lib, fw):
    p, t = lib.arange(4.0).reshape(2, 2), lib.arange(4.0).reshape(2, 2).cos()
    with fw.dual_level():
        d = fw.make_dual(p, t)
        x = d.clone()
        x.mul_(2)
        y = lib.zeros(3, 2)
        y[1:].copy_(d)
        z = lib.zeros(2, 2)
        z.copy_(d.t().exp())
        tangents = [
            fw.unpack_dual(v).tangent for v in (x, y, z, d.t(), d[1], d.view(4))
        ]
        return [v.tolist() for v in tangents]  # fmt: skip


def test_in_place_writes_and_views_carry_pytorchs_tangents():
    for got, ref in zip(_writes(compat, cfwAD), _writes(torch, fwAD), strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-6)


def _custom(lib, fw):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x.exp() * y * k, x + y

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            return (tx * y + ty) * x.exp() * ctx.k, tx + ty

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t, t

    p, t = lib.arange(3.0), lib.ones(3) * 0.5
    with fw.dual_level():
        d = fw.make_dual(p, t)
        outs = Exp.apply(d, p.sin(), 2.0)
        return (
            [fw.unpack_dual(o).tangent.tolist() for o in outs],
            _raised(lambda: NoJvp.apply(d)),
            _raised(lambda: Twice.apply(d)),
            NoJvp.apply(p).tolist(),
        )


def test_a_custom_functions_jvp_gives_its_outputs_tangents_as_pytorch():
    got, ref = _custom(compat, cfwAD), _custom(torch, fwAD)
    np.testing.assert_allclose(got[0][0], ref[0][0], rtol=1e-6)
    np.testing.assert_allclose(got[0][1], ref[0][1], rtol=1e-6)
    assert got[1:] == ref[1:]


def test_gradcheck_checks_forward_mode_and_names_a_wrong_jvp():
    class Wrong(compat.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return x.exp()

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.x  # exp's derivative is exp, not x

    x = compat.arange(1.0, 4.0, dtype=compat.float64).requires_grad_()
    only_forward = dict(check_forward_ad=True, check_backward_ad=False)
    only_forward.update(check_undefined_grad=False, check_batched_grad=False)
    assert compat.autograd.gradcheck(lambda v: (v * v).sin(), (x,), **only_forward)
    assert compat.autograd.gradcheck(
        lambda v: v.tanh().sum(), (x,), check_forward_ad=True
    )
    with pytest.raises(compat.autograd.GradcheckError) as caught:
        compat.autograd.gradcheck(Wrong.apply, (x,), **only_forward)
    assert str(caught.value).startswith(
        "Jacobian computed with forward mode mismatch for output 0 with respect to "
        "input 0,\nnumerical:"
    )


def test_an_op_compat_cannot_derive_forward_is_refused_by_name():
    with cfwAD.dual_level():
        d = cfwAD.make_dual(compat.ones(3), compat.ones(3))
        with pytest.raises(NotImplementedError, match=r"aten::atan2"):
            compat.atan2(d, compat.ones(3))


def test_the_module_tangent_is_pytorchs_through_functional_call():
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 3)
    c_model = compat.nn.Linear(5, 3)
    c_model.load_state_dict(
        {k: compat.tensor(v.detach().numpy()) for k, v in model.state_dict().items()}
    )
    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    tangents = {
        k: np.full(tuple(v.shape), 0.3, np.float32) for k, v in model.named_parameters()
    }

    def run(lib, fw, m, call):
        with fw.dual_level():
            params = {
                k: fw.make_dual(p.detach(), lib.tensor(tangents[k]))
                for k, p in m.named_parameters()
            }
            out = call(m, params, lib.tensor(x))
            return fw.unpack_dual(out).tangent.detach().numpy()

    ref = run(torch, fwAD, model, torch.func.functional_call)
    got = run(compat, cfwAD, c_model, compat.func.functional_call)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
