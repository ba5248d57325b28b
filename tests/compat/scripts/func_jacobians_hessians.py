"""Jacobians, Hessians, hvp, vhp, and more, in the shape of the torch.func
tutorial (pytorch/tutorials intermediate_source/jacobians_hessians.py): a
Jacobian row by row with torch.autograd.grad, then jacrev and jacfwd (argnums
single and a tuple), hessian and its jacfwd/jacrev compositions, batched
Jacobians and Hessians with vmap, and Hessian-vector products through jvp of
grad and vjp of grad. Sizes are small; inputs come from fixed formulas."""

from functools import partial

import torch
import torch.nn.functional as F
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.manual_seed(0)


def seq(n, a, scale=1.0):
    return torch.arange(n, dtype=torch.float32).mul(a).sin().mul(scale)


# Let's start with a function that we'd like to compute the jacobian of. This
# is a simple linear function with non-linear activation.
def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


# Let's add some dummy data: a weight, a bias, and a feature vector x.
D = 8
weight = seq(D * D, 1.37, 0.4).view(D, D)
bias = seq(D, 0.71, 0.3)
x = seq(D, 2.3)  # feature vector

# Let's think of predict as a function that maps the input x from R^D -> R^D.
# PyTorch Autograd computes vector-Jacobian products. In order to compute the
# full Jacobian of this R^D -> R^D function, we would have to compute it
# row-by-row by using a different unit vector each time.


def compute_jac(xp):
    jacobian_rows = [
        torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
        for vec in unit_vectors
    ]
    return torch.stack(jacobian_rows)


xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)

jacobian = compute_jac(xp)

print(jacobian.shape)
print([round(v, 4) for v in jacobian[0].tolist()])  # show first row

# Instead of computing the jacobian row-by-row, we can use PyTorch's
# torch.vmap function transform to get rid of the for-loop and vectorize the
# computation.
_, vjp_fn = vjp(partial(predict, weight, bias), x)

ft_jacobian, = vmap(vjp_fn)(unit_vectors)  # fmt: skip

# let's confirm both methods compute the same result
assert torch.allclose(ft_jacobian, jacobian)
print("vmap of vjp", ft_jacobian.shape, torch.allclose(ft_jacobian, jacobian))

# torch.func provides jacrev as a convenient function that performs the vmap-vjp
# trick for us.
ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)

# Confirm by running the following
assert torch.allclose(ft_jacobian, jacobian)
print("jacrev agrees", torch.allclose(ft_jacobian, jacobian))

# note the change in input via ``argnums`` parameters of 0,1 to map to weight
# and bias
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)

# Compare against the row-by-row autograd for the bias
biasp = bias.clone().requires_grad_()


def compute_bias_jac(bp):
    rows = [torch.autograd.grad(predict(weight, bp, x), bp, vec)[0]
            for vec in unit_vectors]  # fmt: skip
    return torch.stack(rows)


print("argnums", ft_jac_weight.shape, ft_jac_bias.shape,
      torch.allclose(ft_jac_bias, compute_bias_jac(biasp)))  # fmt: skip

# Reverse-mode Jacobian (jacrev) vs forward-mode Jacobian (jacfwd)
jacfwd_jac = jacfwd(predict, argnums=2)(weight, bias, x)
print("jacfwd agrees", torch.allclose(jacfwd_jac, ft_jacobian, atol=1e-6))
fwd_w, fwd_b = jacfwd(predict, argnums=(0, 1))(weight, bias, x)
print("jacfwd argnums agrees", torch.allclose(fwd_w, ft_jac_weight, atol=1e-6),
      torch.allclose(fwd_b, ft_jac_bias, atol=1e-6))  # fmt: skip

# Hessian computation with functorch.hessian
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print("hessian", hess_api.shape, torch.allclose(hess_api, hess_fwdfwd, atol=1e-6),
      torch.allclose(hess_api, hess_revrev, atol=1e-6))  # fmt: skip
print("hessian corner", round(hess_api[0, 0, 0].item(), 4),
      round(hess_api[3, 1, 2].item(), 4))  # fmt: skip

# Batch Jacobian and Batch Hessian
batch_size = 6
Din = 5
Dout = 7

weight = seq(Dout * Din, 0.93, 0.5).view(Dout, Din)
bias = seq(Dout, 1.9, 0.2)
x = seq(batch_size * Din, 0.57).view(batch_size, Din)

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
print("batch jacobian", batch_jacobian0.shape)


# If you have a function that goes from (B, N) -> (B, M) instead and are
# certain that each input produces an independent output, then it's also
# sometimes possible to do this without using vmap by summing the outputs and
# then computing the Jacobian of that function:
def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x)
batch_jacobian1 = batch_jacobian1.movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1)
print("summed agrees", torch.allclose(batch_jacobian0, batch_jacobian1))

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))

batch_hess = compute_batch_hessian(weight, bias, x)
print("batch hessian", batch_hess.shape)


# Computing Hessian-vector products
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = seq(64, 0.77, 2.0)
tangent = seq(64, 1.21)

result = hvp(f, (x,), (tangent,))


# If PyTorch forward-AD does not have coverage for your operations, then we can
# instead compose reverse-mode AD with reverse-mode AD:
def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
assert torch.allclose(result, result_hvp_revrev[0])
print("hvp agrees", torch.allclose(result, result_hvp_revrev[0]),
      torch.allclose(result, -x.sin() * tangent))  # fmt: skip
print("hvp head", [round(v, 4) for v in result[:4].tolist()])
out, tangent_out = jvp(f, (x,), (tangent,))
print("jvp", round(out.item(), 4), round(tangent_out.item(), 4))
g, (value,) = grad(lambda t: (t.cos().sum(), (t.sum(),)), has_aux=True)(x), (x.sum(),)
print("grad has_aux", type(g).__name__, len(g), round(value.item(), 4))
try:
    grad(lambda t: t.sin())(x)
except RuntimeError as err:
    print("non-scalar refused:", err)
