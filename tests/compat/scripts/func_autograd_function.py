"""The "Extending torch.func with autograd.Function" tutorial: Functions
whose forward takes no ctx and whose setup_context staticmethod saves what
backward needs (NumpySort and NumpyTake, computing in NumPy, with
mark_non_differentiable on the index outputs; MyCube returning an
intermediate as an output so that it is twice differentiable), used under
torch.func.grad (grad of grad too), a vmap staticmethod for each NumPy
Function (in_dims, info.batch_size, the batch dimension moved to the front),
and generate_vmap_rule = True for MyCube under torch.vmap and vmap of grad.

compat batches forward itself, so it refuses to vmap the NumPy Functions
(the refusal goes to stderr) and the script loops over the batch there; the
printed values are the same either way. Inputs come from a formula (the
random streams differ)."""

import sys

import numpy as np
import torch


def to_numpy(tensor):
    return tensor.cpu().numpy()


class NumpySort(torch.autograd.Function):
    # Note that forward does not take ctx
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        # Any intermediates to be saved in backward must be returned as
        # outputs.
        return (
            # The desired output
            torch.tensor(result, device=device),
            # intermediate to save for backward
            torch.tensor(ind, device=device),
            # intermediate to save for backward
            torch.tensor(ind_inv, device=device),
        )

    # setup_context is responsible for calling methods and/or assigning to
    # the ctx object. Please do not do additional compute (e.g. add
    # Tensors together) in setup_context.
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        # Note that output is whatever you returned from forward.
        # If you returned multiple values, then output is a Tuple of multiple values.
        # If you returned a single Tensor, then output is a Tensor.
        # If you returned a Tuple with a single Tensor, then output is a
        # Tuple with a single Tensor.
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        # Tensors must be saved via ctx.save_for_backward. Please do not
        # assign them directly onto the ctx object.
        ctx.save_for_backward(ind, ind_inv)
        # Non-tensors may be saved by assigning them as attributes on the ctx object.
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # For the autograd.Function to be arbitrarily composable with function
        # transforms, all staticmethod other than forward and setup_context
        # must be implemented in a "transformable" way; that is, they must
        # only consist of PyTorch operations or autograd.Function.
        #
        # For example, this allows us to do double backwards and/or compute
        # second order gradients.
        #
        # We've written the backward pass of NumpySort in terms of another
        # autograd.Function, NumpyTake.
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    # The signature of the vmap staticmethod is:
    # vmap(info, in_dims: Tuple[Optional[int]], *args)
    # where *args is the same as the arguments to `forward`.
    @staticmethod
    def vmap(info, in_dims, x, dim):
        # For every input (x and dim), in_dims stores an Optional[int]
        # that is:
        # - None if the input is not being vmapped over or if the input
        #   is not a Tensor
        # - an integer if the input is being vmapped over that represents
        #   the index of the dimension being vmapped over.
        x_bdim, _ = in_dims

        # A "vmap rule" is the logic of how to perform the operation given
        # inputs with one additional dimension. In NumpySort, x has an
        # additional dimension (x_bdim). The vmap rule is simply
        # to call NumpySort again but pass it a different `dim`.
        x = x.movedim(x_bdim, 0)
        # Handle negative dims correctly
        dim = dim if dim >= 0 else dim + x.dim() - 1
        result = NumpySort.apply(x, dim + 1)  # noqa: F841 -- as the tutorial

        # The vmap rule must return a tuple of two things
        # 1. the output. Should be the same amount of things
        #    as returned by the forward().
        # 2. one Optional[int] for each output specifying if each output
        # is being vmapped over, and if so, the index of the
        # dimension being vmapped over.
        #
        # NumpySort.forward returns a Tuple of 3 Tensors. Since we moved the
        # dimension being vmapped over to the front of `x`, that appears at
        # dimension 0 of all outputs.
        # The return is (output, out_dims) -- output is a tuple of 3 Tensors
        # and out_dims is a Tuple of 3 Optional[int]
        return NumpySort.apply(x, dim + 1), (0, 0, 0)


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims

        # The strategy is: expand {x, ind, ind_inv} to all have the dimension
        # being vmapped over.
        # Then, call back into NumpyTake(expanded_x, expanded_ind, expanded_ind_inv,
        # new_dim).

        # Handle negative dims by wrapping them to be positive
        logical_dim = x.dim() if x_bdim is None else x.dim() - 1
        dim = dim if dim >= 0 else dim + logical_dim

        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)

        # If the Tensor doesn't have the dimension being vmapped over,
        # expand it out. Otherwise, move it to the front of the Tensor
        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)

        # The return is a tuple (output, out_dims). Since output is a Tensor,
        # then out_dims is an Optional[int] (instead of being a Tuple).
        return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


x = torch.arange(6.0).mul(2.3).sin().view(2, 3)
result = numpy_sort(x)
print("sorted", [[round(v, 4) for v in row] for row in result.tolist()])
grad_x = torch.func.grad(lambda x: numpy_sort(x).sum())(x)
print("grad of sort is ones", torch.allclose(grad_x, torch.ones_like(x)))
weights = torch.tensor([1.0, 2.0, 3.0])
grad_w = torch.func.grad(lambda x: (numpy_sort(x) * weights).sum())(x)
print("grad follows the order", grad_w.tolist())

y = x.clone().requires_grad_()
out, ind, ind_inv = NumpySort.apply(y, 1)
print(
    "index outputs",
    ind.dtype,
    ind.requires_grad,
    ind_inv.requires_grad,
    out.requires_grad,
    type(out.grad_fn).__name__,
)
(out * weights).sum().backward()
print("backward agrees", torch.equal(y.grad, grad_w))


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
    result, _ = MyCube.apply(x)
    return result


x = torch.tensor(0.7)
gx = torch.func.grad(my_cube)(x)
ggx = torch.func.grad(torch.func.grad(my_cube))(x)
print(
    "cube grads", round(gx.item(), 4), round(ggx.item(), 4), torch.allclose(ggx, 6 * x)
)


def vmapped(func, x, **kwargs):
    """torch.vmap(func, **kwargs)(x), as upstream; where compat refuses to
    batch a forward that calls NumPy (the refusal goes to stderr), the same
    result by a loop over the batch."""
    try:
        return torch.vmap(func, **kwargs)(x)
    except NotImplementedError as e:
        print("vmap refused:", e, file=sys.stderr)
        dim = kwargs.get("in_dims", 0)
        rows = [func(r) for r in x.unbind(dim)]
        return torch.stack(rows, kwargs.get("out_dims", 0))


# vmap
x = torch.arange(12.0).mul(1.7).cos().view(4, 3)
result = vmapped(numpy_sort, x)
print(
    "vmap sort",
    torch.allclose(result, numpy_sort(x, 1)),
    [round(v, 4) for v in result[0].tolist()],
)
cols = vmapped(numpy_sort, x, in_dims=1, out_dims=1)
print("vmap over columns", torch.allclose(cols, numpy_sort(x, 0)))
grads = vmapped(torch.func.grad(lambda r: (numpy_sort(r) * weights).sum()), x)
print("vmap of grad", tuple(grads.shape), grads[0].tolist())


class MyCubeVmap(torch.autograd.Function):
    # Set generate_vmap_rule to True to ask PyTorch to automatically generate
    # a vmap rule.
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        result = x**3
        dx = 3 * x**2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube_vmap(x):
    result, dx = MyCubeVmap.apply(x)
    return result


x = torch.tensor([0.5, -1.0, 2.0])
result = torch.vmap(my_cube_vmap)(x)
print("generated vmap rule", torch.allclose(result, x.pow(3)), result.tolist())
per_sample = torch.vmap(torch.func.grad(my_cube_vmap))(x)
print("vmap of grad of cube", per_sample.tolist())
try:
    torch.vmap(my_cube)(x)
except RuntimeError as e:
    print("no vmap rule:", str(e).split(".")[0])
