"""Forward-mode automatic differentiation in the shape of the tutorial
(pytorch/tutorials intermediate_source/forward_ad_usage.py): dual tensors made
and unpacked inside dual_level, tangents through an nn.Module (attributes
replaced and through functional_call), a custom Function with a jvp
staticmethod checked by gradcheck(check_forward_ad=True), then the functional
API, torch.func.jvp, on a function and on a module's parameters. Inputs come
from fixed formulas."""

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call, jvp


def seq(*shape, a=1.37, dtype=torch.float32):
    n = 1
    for s in shape:
        n *= s
    return torch.arange(n, dtype=dtype).mul(a).sin().view(*shape)


primal = seq(10, 10)
tangent = seq(10, 10, a=0.53)
print("primal", tuple(primal.shape), "tangent", tuple(tangent.shape))


def fn(x, y):
    return x**2 + y**2


# All forward AD computation must be performed in the context of
# a ``dual_level`` context. All dual tensors created in such a context
# will have their tangents destroyed upon exit. This is to ensure that
# if the output or intermediate results of this computation are reused
# in a future forward AD computation, their tangents (which are associated
# with this computation) won't be confused with tangents from the later
# computation.
with fwAD.dual_level():
    # To create a dual tensor we associate a tensor, which we call the
    # primal with another tensor of the same size, which we call the tangent.
    # If the layout of the tangent is different from that of the primal,
    # The values of the tangent are copied into a new tensor with the same
    # metadata as the primal. Otherwise, the tangent itself is used as-is.
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    # To demonstrate the case where the copy of the tangent happens,
    # we pass in a tangent with a layout different from that of the primal
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    # Tensors that do not have an associated tangent are automatically
    # considered to have a zero-filled tangent of the same shape.
    plain_tensor = seq(10, 10, a=0.21)
    dual_output = fn(dual_input, plain_tensor)

    # Unpacking the dual returns a ``namedtuple`` with ``primal`` and ``tangent``
    # as attributes
    jvp_out = fwAD.unpack_dual(dual_output).tangent
    print("jvp is 2 x t", torch.allclose(jvp_out, 2 * primal * tangent))

assert fwAD.unpack_dual(dual_output).tangent is None
print("tangent gone after the level", fwAD.unpack_dual(dual_output).tangent)

# Usage with Modules
model = nn.Linear(5, 5)
input = seq(16, 5, a=0.77)

params = {name: p for name, p in model.named_parameters()}
tangents = {name: seq(*p.shape, a=0.3) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp_mod = fwAD.unpack_dual(out).tangent
print("module jvp", tuple(jvp_mod.shape), round(jvp_mod.sum().item(), 4))

# Using the functional Module API
model = nn.Linear(5, 5)
params = {name: p for name, p in model.named_parameters()}
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        # Using the same ``tangents`` from the above section
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent

# Check our results
assert torch.allclose(jvp_mod, jvp2)
print("functional_call jvp agrees", torch.allclose(jvp_mod, jvp2))


# Custom autograd Function
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        # Tensors stored in ``ctx`` can be used in the subsequent forward grad
        # computation.
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        # If the tensor stored in`` ctx`` will not also be used in the backward
        # pass, one can manually free it using ``del``
        del ctx.result
        return gO


fn = Fn.apply

primal = seq(10, 10, dtype=torch.double).requires_grad_()
tangent = seq(10, 10, a=0.4)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp_fn = fwAD.unpack_dual(dual_output).tangent
print("custom jvp", torch.allclose(jvp_fn, tangent * primal.exp()))

# It is important to use ``autograd.gradcheck`` to verify that your
# custom autograd Function computes the gradients correctly. By default,
# ``gradcheck`` only checks the backward-mode (reverse-mode) AD gradients. Specify
# ``check_forward_ad=True`` to also check forward grads. If you did not
# implement the backward formula for your function, you can also tell ``gradcheck``
# to skip the tests that require backward-mode AD by specifying
# ``check_backward_ad=False``, ``check_undefined_grad=False``, and
# ``check_batched_grad=False``.
print("gradcheck", torch.autograd.gradcheck(
    Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
    check_undefined_grad=False, check_batched_grad=False))  # fmt: skip

# Functional API: torch.func.jvp
primal0, tangent0 = seq(10, 10), seq(10, 10, a=0.9)
primal1, tangent1 = seq(10, 10, a=0.2), seq(10, 10, a=0.6)


def fn(x, y):  # noqa: F811 -- the tutorial redefines it
    return x**2 + y**2


# Here is a basic example to compute the JVP of the above function.
# The ``jvp(func, primals, tangents)`` returns ``func(*primals)`` as well as the
# computed Jacobian-vector product (JVP). Each primal must be associated with a
# tangent of the same shape.
primal_out, tangent_out = jvp(fn, (primal0, primal1), (tangent0, tangent1))
print("func jvp", torch.allclose(tangent_out, 2 * primal0 * tangent0 + 2 * primal1
                                 * tangent1))  # fmt: skip

# Using the functional API with Modules
model = nn.Linear(5, 5)
input = seq(16, 5, a=0.77)
params = {k: v.detach() for k, v in model.named_parameters()}
tangents = {k: seq(*v.shape, a=0.3) for k, v in params.items()}


def func(params):
    return functional_call(model, params, input)


_, jvp_out = jvp(func, (params,), (tangents,))
print("module func jvp agrees", torch.allclose(jvp_out, jvp_mod, atol=1e-6))
