"""Function transforms (``torch.func``): ``vmap``, ``grad``, ``jacrev``,
``jacfwd``, ``hessian``, ``vjp``, ``jvp``, ``functional_call`` and
``stack_module_state`` -- each case run on compat in both modes and on real
PyTorch, and compared: values, dtypes, shapes, dict key order; errors by type
and first line."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.notes.record import plain

pt = pytest.importorskip("torch")

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def outcome(torch, fn):
    try:
        return plain(fn(torch))
    except Exception as error:  # noqa: BLE001 -- the error is the result
        return plain(error)


def agree(ours, theirs) -> bool:
    if isinstance(theirs, tuple) and theirs[:1] == ("tensor",):
        if not (isinstance(ours, tuple) and ours[:3] == theirs[:3]):
            return False
        return np.allclose(np.asarray(ours[3]), np.asarray(theirs[3]), 1e-5, 1e-6)
    if isinstance(theirs, list | tuple):
        return (
            type(ours) is type(theirs)
            and len(ours) == len(theirs)
            and all(map(agree, ours, theirs))
        )
    if isinstance(theirs, dict):
        return list(ours) == list(theirs) and all(
            agree(ours[k], theirs[k]) for k in theirs
        )
    return type(ours) is type(theirs) and ours == theirs


def seq(torch, *shape, a=1.37):
    n = int(np.prod(shape))
    return torch.arange(n, dtype=torch.float32).mul(a).sin().view(*shape)


def mlp(torch, k=0):
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)
    )
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(seq(torch, *p.shape, a=0.7 + 0.3 * i + 0.1 * k))
    return net


@case
def vmap_maps_the_leading_dimension(torch):
    return torch.func.vmap(lambda r: r.sum() * r)(seq(torch, 3, 4))


@case
def vmap_in_dims_none_and_out_dims(torch):
    f = torch.vmap(lambda r, w: w @ r, in_dims=(1, None), out_dims=1)
    return f(seq(torch, 4, 5), seq(torch, 2, 4, a=0.3))


@case
def vmap_keyword_arguments_are_not_mapped(torch):
    return torch.func.vmap(lambda r, *, k: r * k)(seq(torch, 3, 2), k=seq(torch, 2))


@case
def vmap_of_a_dict_keeps_its_key_order(torch):
    d = {"z": seq(torch, 2, 3), "a": seq(torch, 2), "m": seq(torch, 2, 1)}
    return torch.func.vmap(lambda t: {k: v * 2 for k, v in t.items()})(d)


@case
def grad_of_dict_params_keeps_key_order(torch):
    params = {"w": seq(torch, 3), "b": seq(torch, 1), "a": seq(torch, 2)}
    return torch.func.grad(lambda p: (p["w"].sin().sum() + p["b"] * p["a"]).sum())(
        params
    )


@case
def grad_argnums_tuple_and_has_aux(torch):
    def f(x, y):
        return (x * y).sin().sum(), {"y2": y * 2}

    return torch.func.grad(f, argnums=(0, 1), has_aux=True)(
        seq(torch, 3), seq(torch, 3, a=0.4)
    )


@case
def grad_and_value_gives_grad_first(torch):
    return torch.func.grad_and_value(lambda x: x.pow(3).sum())(seq(torch, 4))


@case
def grad_of_a_non_scalar_is_refused(torch):
    return torch.func.grad(lambda x: x * 2)(seq(torch, 3))


@case
def per_sample_grads_of_a_module(torch):
    net = mlp(torch)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def loss(p, x, t):
        out = torch.func.functional_call(net, p, (x.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, t.unsqueeze(0))

    x, t = seq(torch, 5, 3, a=0.9), torch.tensor([0, 1, 1, 0, 1])
    return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, t)


@case
def jacrev_and_jacfwd_with_argnums(torch):
    def f(w, b, x):
        return torch.nn.functional.linear(x, w, b).tanh()

    w, b, x = seq(torch, 3, 4), seq(torch, 3, a=0.5), seq(torch, 4, a=2.1)
    return (
        torch.func.jacrev(f, argnums=2)(w, b, x),
        torch.func.jacfwd(f, argnums=(0, 1))(w, b, x),
    )


@case
def hessian_and_batched_hessian(torch):
    def f(x):
        return x.sin().prod()

    x = seq(torch, 3, 3, a=0.8)
    return torch.func.hessian(f)(x[0]), torch.func.vmap(torch.func.hessian(f))(x)


@case
def vjp_and_jvp_and_hvp(torch):
    def f(x):
        return x.sin() * x

    x, v = seq(torch, 4), seq(torch, 4, a=0.6)
    out, vjp_fn = torch.func.vjp(f, x)
    hvp = torch.func.jvp(torch.func.grad(lambda y: f(y).sum()), (x,), (v,))
    return out, vjp_fn(v), torch.func.jvp(f, (x,), (v,)), hvp


@case
def linearize_gives_the_jvp(torch):
    out, jvp_fn = torch.func.linearize(lambda x: x.exp() * 2, seq(torch, 3))
    return out, jvp_fn(seq(torch, 3, a=0.2))


@case
def functional_call_replaces_for_one_call(torch):
    net = mlp(torch)
    x = seq(torch, 2, 3)
    w = torch.zeros(2, 4)
    out = torch.func.functional_call(net, {"2.weight": w}, x)
    return out, net(x), net[2].weight is dict(net.named_parameters())["2.weight"]


@case
def functional_call_with_dicts_and_kwargs(torch):
    lin = torch.nn.Linear(2, 2)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin
            self.register_buffer("scale", torch.ones(2))

        def forward(self, x, shift=0.0):
            return self.lin(x) * self.scale + shift

    m = M()
    got = {"lin.weight": torch.eye(2), "lin.bias": torch.ones(2)}
    return torch.func.functional_call(
        m, (got, {"scale": torch.full((2,), 3.0)}), (seq(torch, 1, 2),), {"shift": 1.0}
    )


@case
def functional_call_repeated_keys_are_refused(torch):
    net = mlp(torch)
    w = {"0.bias": torch.zeros(4)}
    return torch.func.functional_call(net, (w, dict(w)), seq(torch, 1, 3))


@case
def functional_call_strict_names_missing_and_unexpected(torch):
    net = torch.nn.Linear(2, 2)
    return torch.func.functional_call(
        net, {"nope": torch.zeros(2)}, seq(torch, 1, 2), strict=True
    )


@case
def functional_call_replaces_tied_weights_together(torch):
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(2, 2, bias=False)
            self.b = torch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    w = torch.full((2, 2), 0.5)
    x = seq(torch, 1, 2)
    return (
        torch.func.functional_call(m, {"a.weight": w}, x),
        torch.func.functional_call(m, {"a.weight": w}, x, tie_weights=False)
        - m.b(x @ w.T),
    )


@case
def stack_module_state_stacks_new_leaves(torch):
    models = [mlp(torch, k) for k in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    flags = [(p.requires_grad, p.is_leaf) for p in params.values()]
    return params, buffers, flags


@case
def stack_module_state_stacks_buffers(torch):
    bns = [torch.nn.BatchNorm1d(2) for _ in range(2)]
    return torch.func.stack_module_state(bns)[1]


@case
def stack_module_state_wants_one_mode(torch):
    models = [mlp(torch), mlp(torch).eval()]
    return torch.func.stack_module_state(models)


@case
def stack_module_state_wants_one_class(torch):
    return torch.func.stack_module_state([mlp(torch), torch.nn.Linear(2, 2)])


@case
def ensemble_by_vmap_over_functional_call(torch):
    models = [mlp(torch, k) for k in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    x = seq(torch, 3, 5, 3, a=0.45)

    def fmodel(p, b, xs):
        return torch.func.functional_call(models[0], (p, b), (xs,))

    with torch.no_grad():
        each = torch.func.vmap(fmodel)(params, buffers, x)
        same = torch.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[0])
        return each, same, torch.stack([m(x[0]) for m in models])


@case
def backward_through_an_ensembles_vmap(torch):
    models = [mlp(torch, k) for k in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    x = seq(torch, 5, 3, a=0.45)

    def fmodel(p, b, xs):
        return torch.func.functional_call(models[0], (p, b), (xs,))

    out = torch.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    (out**2).sum().backward()
    return (
        out.requires_grad,
        out.grad_fn is not None,
        {k: p.grad for k, p in params.items()},
    )


@case
def backward_through_grad_of_a_leaf(torch):
    x = seq(torch, 4).requires_grad_()
    w = seq(torch, 4, a=0.3).requires_grad_()
    g = torch.func.grad(lambda t, v: (t.sin() * v).sum())(x, w)
    g.pow(2).sum().backward()
    return g, x.grad, w.grad


@case
def backward_through_jacrev_with_an_integer_input(torch):
    x = seq(torch, 3).requires_grad_()
    idx = torch.tensor([2, 0, 1])
    j = torch.func.jacrev(lambda t, i: t[i].exp())(x, idx)
    j.sum().backward()
    return j, x.grad


@case
def vmap_refuses_random_ops_by_default(torch):
    return torch.func.vmap(lambda r: torch.nn.functional.dropout(r, 0.5))(
        torch.ones(3, 4)
    )


@case
def vmap_randomness_same_draws_alike_for_every_element(torch):
    out = torch.func.vmap(lambda r: r + torch.rand(4), randomness="same")(
        torch.zeros(3, 4)
    )
    return bool((out[0] == out[1]).all() and (out[1] == out[2]).all()), out.shape


@case
def vmap_randomness_must_be_one_of_three(torch):
    return torch.func.vmap(lambda r: r, randomness="bad")


@case
def vmap_in_eval_mode_dropout_draws_nothing(torch):
    return torch.func.vmap(torch.nn.Dropout(0.5).eval())(seq(torch, 2, 3))


@case
def a_traced_tensor_has_its_arguments_device(torch):
    seen = []

    def f(x):
        seen.append((str(x.device), x.is_cuda, x.get_device(), x.is_cpu))
        return x.sum()

    torch.func.grad(f)(seq(torch, 3))
    torch.func.vmap(lambda r: seen.append(str(r.device)) or r)(seq(torch, 2, 3))
    torch.func.jvp(f, (seq(torch, 3),), (seq(torch, 3),))
    torch.func.vjp(f, seq(torch, 3))[1](torch.tensor(1.0))
    made = torch.func.grad(lambda x: (x * torch.ones(3, device=x.device)).sum())
    return seen, made(seq(torch, 3))


def _functions(torch):
    """autograd.Functions in the style torch.func takes (setup_context)."""

    class Scaled(torch.autograd.Function):
        # a backward that is not forward's derivative: the transform must use it
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k * 10, None

    class NumpySort(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            ind = np.argsort(x.numpy(), axis=-1)
            return x.sort(-1).values, torch.tensor(ind), torch.tensor(ind)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1], output[2])
            ctx.save_for_backward(output[1])

        @staticmethod
        def backward(ctx, grad, _0, _1):
            (ind,) = ctx.saved_tensors
            return torch.zeros_like(grad).scatter(-1, ind, grad)

    class Cube(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**3, 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, grad, grad_dx):
            x, dx = ctx.saved_tensors
            return grad * dx + grad_dx * 6 * x

    class OldStyle(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Scaled, NumpySort, Cube, OldStyle


@case
def a_function_under_grad_gives_its_own_backward(torch):
    scaled = _functions(torch)[0]
    return torch.func.grad(lambda x: scaled.apply(x, 3.0).sum())(seq(torch, 4))


@case
def a_function_under_grad_reads_its_inputs_values_in_forward(torch):
    numpy_sort = _functions(torch)[1]
    w = torch.tensor([1.0, 2.0, 3.0])
    f = torch.func.grad(lambda x: (numpy_sort.apply(x)[0] * w).sum())
    return f(seq(torch, 2, 3)), numpy_sort.apply(seq(torch, 3))[1]


@case
def a_function_under_grad_of_grad_and_vmap_of_grad(torch):
    cube = _functions(torch)[2]

    def f(x):
        return cube.apply(x)[0]

    x = torch.tensor([0.5, -1.0, 2.0])
    return (
        torch.func.grad(torch.func.grad(f))(torch.tensor(0.7)),
        torch.vmap(f)(x),
        torch.vmap(torch.func.grad(f))(x),
        torch.func.jacrev(lambda v: cube.apply(v)[0])(x),
    )


@case
def a_function_without_setup_context_is_refused_by_grad(torch):
    old = _functions(torch)[3]
    return torch.func.grad(lambda x: old.apply(x).sum())(seq(torch, 3))


@case
def a_function_without_a_vmap_rule_is_refused_by_vmap(torch):
    scaled = _functions(torch)[0]
    return torch.vmap(lambda x: scaled.apply(x, 2.0))(seq(torch, 2, 3))


@case
def a_function_without_a_jvp_is_refused_by_jvp(torch):
    scaled = _functions(torch)[0]
    x = seq(torch, 3)
    return torch.func.jvp(lambda v: scaled.apply(v, 2.0), (x,), (x,))


def test_vmap_of_a_function_that_reads_values_is_refused_saying_why():
    numpy_sort = _functions(jaxblitz.compat)[1]
    x = seq(jaxblitz.compat, 2, 3)
    with pytest.raises(NotImplementedError, match="^torch.vmap over NumpySort is"):
        jaxblitz.compat.vmap(lambda r: numpy_sort.apply(r)[0])(x)


@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_func_matches_pytorch(name, mode, request):
    theirs = outcome(pt, CASES[name])
    request.getfixturevalue(mode)
    ours = outcome(jaxblitz.compat, CASES[name])
    assert agree(ours, theirs), f"\ntorch:  {theirs}\ncompat: {ours}"


def test_vmap_randomness_different_is_refused_saying_why():
    with pytest.raises(NotImplementedError, match="randomness='different'"):
        jaxblitz.compat.func.vmap(lambda r: r, randomness="different")


def test_vjp_of_tensors_that_require_grad_is_refused_saying_why():
    torch = jaxblitz.compat
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="^torch.func.vjp of tensors that"):
        torch.func.vjp(lambda r: r * 2, x)
    with torch.no_grad():
        assert torch.func.vjp(lambda r: r * 2, x)[0].tolist() == [2.0, 2.0, 2.0]
