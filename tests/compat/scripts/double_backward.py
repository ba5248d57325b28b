"""Double backward with custom Functions in the shape of the tutorial
(pytorch/tutorials intermediate_source/custom_function_double_backward_tutorial.rst):
a backward written in differentiable ops (checked with gradcheck and
gradgradcheck), saving the output (exp), saving intermediate results by
returning them as extra outputs (sinh), the forward/setup_context split with a
derivative computed in forward (cube), and once_differentiable refusing a second
backward; then a Hessian-vector product with create_graph."""

import torch
from torch.autograd.function import once_differentiable

torch.manual_seed(0)
x = torch.linspace(-1.2, 0.9, 9, dtype=torch.double).view(3, 3).requires_grad_()


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # Because we are saving one of the inputs use `save_for_backward`
        # Save non-tensors and non-inputs/non-outputs directly on ctx
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        # A function support double backward automatically if autograd
        # is able to record the computations performed in backward
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


# Use double precision because finite differencing method magnifies errors
print("square gradcheck", torch.autograd.gradcheck(Square.apply, x))
# Use gradcheck to verify second-order derivatives
print("square gradgradcheck", torch.autograd.gradgradcheck(Square.apply, x))


class Exp(torch.autograd.Function):
    # Simple case where everything goes well
    @staticmethod
    def forward(ctx, x):
        # This time we save the output
        result = torch.exp(x)
        # Note that we should use `save_for_backward` here when
        # the tensor saved is an output (or an input).
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return result * grad_out


print("exp gradcheck", torch.autograd.gradcheck(Exp.apply, x))
print("exp gradgradcheck", torch.autograd.gradgradcheck(Exp.apply, x))
y = Exp.apply(x)
print("exp grad_fn", type(y.grad_fn).__name__.startswith("ExpBackward"))


class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        # In order to be able to save the intermediate results, we return them
        # as outputs
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        # We cannot skip accumulating these even though we won't use the outputs
        # directly. They will be used later in the second backward.
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    # Create a wrapper that only returns the first output
    return Sinh.apply(x)[0]


print("sinh gradcheck", torch.autograd.gradcheck(sinh, x))
print("sinh gradgradcheck", torch.autograd.gradgradcheck(sinh, x))
print("sinh matches torch.sinh", torch.allclose(sinh(x), torch.sinh(x)))


class SinhBad(torch.autograd.Function):
    # This is an example of what NOT to do!
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.expx = expx
        ctx.expnegx = expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        expx = ctx.expx
        expnegx = ctx.expnegx
        grad_input = grad_out * (expx + expnegx) / 2
        return grad_input


print("sinh bad gradcheck", torch.autograd.gradcheck(SinhBad.apply, x))
bad = torch.autograd.gradgradcheck(SinhBad.apply, x, raise_exception=False)
print("sinh bad gradgradcheck", bad)


class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        # We wish to save dx for backward. In order to do so, it must
        # be returned as an output.
        dx = 3 * x**2
        result = x**3
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # In order for the autograd.Function to work with higher-order
        # gradients, we must add the gradient contribution of `dx`,
        # which is grad_dx * 6 * x.
        result = grad_output * dx + grad_dx * 6 * x
        return result


# Wrap MyCube in a function so that it is clearer what the output is
def my_cube(x):
    result, dx = MyCube.apply(x)
    return result


print("cube gradcheck", torch.autograd.gradcheck(my_cube, x))
print("cube gradgradcheck", torch.autograd.gradgradcheck(my_cube, x))
t = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)
(g,) = torch.autograd.grad(my_cube(t).sum(), t, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), t)
print("cube first", g.tolist(), "second", gg.tolist())


class Cosh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.cosh(x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sinh(x)


print("once_differentiable gradcheck", torch.autograd.gradcheck(Cosh.apply, x))
(g,) = torch.autograd.grad(Cosh.apply(t).sum(), t, create_graph=True)
print("once_differentiable first", [round(v, 4) for v in g.tolist()],
      g.requires_grad)  # fmt: skip
try:
    g.sum().backward()
    print("second backward ran")
except RuntimeError as e:
    print("second backward refused:", str(e).splitlines()[0])

# A Hessian-vector product through the custom Functions.
w = torch.tensor([0.3, -0.6, 0.9], requires_grad=True)
loss = (Exp.apply(w) * Square.apply(w)).sum() + sinh(w).sum()
(gw,) = torch.autograd.grad(loss, w, create_graph=True)
v = torch.tensor([1.0, 0.5, -1.0])
(hv,) = torch.autograd.grad(gw, w, grad_outputs=v)
print("gradient", [round(a, 4) for a in gw.tolist()])
print("hessian-vector", [round(a, 4) for a in hv.tolist()])
