"""The "Fusing Convolution and Batch Norm using Custom Function" tutorial:
Conv2D and BatchNorm as torch.autograd.Function subclasses (ctx.save_for_backward,
values kept on ctx, @once_differentiable backward), the convolution's backward
by conv2d of transposes and conv_transpose2d (checked against torch.nn.grad's
conv2d_input and conv2d_weight), gradcheck of each in float64, the fused
FusedConvBN2DFunction that recomputes the convolution in backward, the
FusedConvBN module with kaiming_uniform_, and a small network trained with it
beside the unfused Conv2d + BatchNorm2d(affine=False) one.

Inputs for printed values come from a formula (the random streams differ)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd.function import once_differentiable


def convolution_backward(grad_out, X, weight):
    grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
    grad_X = F.conv_transpose2d(grad_out, weight)
    return grad_X, grad_input


class Conv2D(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight):
        ctx.save_for_backward(X, weight)
        return F.conv2d(X, weight)

    # Use @once_differentiable by default unless we intend to double backward
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, weight = ctx.saved_tensors
        return convolution_backward(grad_out, X, weight)


def pattern(*shape, scale=1.0, dtype=torch.double):
    n = math.prod(shape)
    return torch.arange(n, dtype=dtype).mul(0.37).sin().mul(scale).add(0.5).view(shape)


weight = torch.rand(5, 3, 3, 3, requires_grad=True, dtype=torch.double)
X = torch.rand(10, 3, 7, 7, requires_grad=True, dtype=torch.double)
print("conv gradcheck", torch.autograd.gradcheck(Conv2D.apply, (X, weight)))

Xp = pattern(2, 3, 6, 6).requires_grad_()
Wp = pattern(4, 3, 3, 3, scale=0.5).requires_grad_()
out = Conv2D.apply(Xp, Wp)
grad_out = pattern(*out.shape, scale=2.0)
out.backward(grad_out)
print("conv", tuple(out.shape), out.grad_fn.name(), round(out.sum().item(), 4))
print(
    "nn.grad agrees",
    torch.allclose(Xp.grad, torch.nn.grad.conv2d_input(Xp.shape, Wp, grad_out)),
    torch.allclose(Wp.grad, torch.nn.grad.conv2d_weight(Xp, Wp.shape, grad_out)),
)
print("grads", round(Xp.grad.sum().item(), 4), round(Wp.grad.sum().item(), 4))
# once_differentiable: the gradient has a grad_fn that refuses a second backward
(gX,) = torch.autograd.grad(Conv2D.apply(Xp, Wp).sum(), Xp, create_graph=True)
print("grad of grad", gX.requires_grad, type(gX.grad_fn).__name__)
try:
    gX.sum().backward()
except RuntimeError as e:
    print("double backward refused:", e)


def unsqueeze_all(t):
    # Helper function to unsqueeze all the dimensions that we reduce over
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    tmp *= -1
    d_denom = tmp / (sqrt_var + eps) ** 2  # d_denom = -num / denom**2
    d_var = d_denom / (2 * sqrt_var)  # denom = torch.sqrt(var) + eps
    d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    # (1) unbiased_var(x) = ((X - unsqueeze_all(mean))**2).sum(dim=(0, 2, 3)) / (N - 1)
    grad_input = X * unsqueeze_all(d_var * N)
    grad_input += unsqueeze_all(-d_var * sum)
    grad_input *= 2 / ((N - 1) * N)
    # (2) mean (see above)
    grad_input += d_mean_dx
    # (3) Add 'grad_out / <factor>' without allocating an extra buffer
    grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input += grad_out
    grad_input /= unsqueeze_all(sqrt_var + eps)  # sqrt_var + eps > 0!
    return grad_input


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        # Don't save keepdim'd values for backward
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.save_for_backward(X)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (X,) = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)


a = torch.rand(1, 2, 3, 4, requires_grad=True, dtype=torch.double)
print("bn gradcheck", torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False))
bn_in = pattern(2, 3, 4, 4).requires_grad_()
bn_out = BatchNorm.apply(bn_in)
print(
    "bn matches F.batch_norm-style",
    torch.allclose(
        bn_out,
        (bn_in - bn_in.mean((0, 2, 3), keepdim=True))
        / (bn_in.var((0, 2, 3), keepdim=True).sqrt() + 1e-3),
    ),
)


class FusedConvBN2DFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, conv_weight, eps=1e-3):
        assert X.ndim == 4  # N, C, H, W
        # (1) Only need to save this single buffer for backward!
        ctx.save_for_backward(X, conv_weight)

        # (2) Exact same Conv2D forward from example above
        X = F.conv2d(X, conv_weight)
        # (3) Exact same BatchNorm2D forward from example above
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (X, conv_weight) = ctx.saved_tensors
        # (4) Batch norm backward
        # (5) We need to recompute conv
        X_conv_out = F.conv2d(X, conv_weight)
        grad_out = batch_norm_backward(
            grad_out, X_conv_out, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps
        )
        # (6) Conv2d backward
        grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
        return grad_X, grad_input, None, None, None, None, None


weight = torch.rand(5, 3, 3, 3, requires_grad=True, dtype=torch.double)
X = torch.rand(2, 3, 4, 4, requires_grad=True, dtype=torch.double)
print(
    "fused gradcheck",
    torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight)),
)


class FusedConvBN(nn.Module):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        exp_avg_factor=0.1,
        eps=1e-3,
        device=None,
        dtype=None,
    ):
        super().__init__()
        factory_kwargs = {"device": device, "dtype": dtype}
        # Conv parameters
        weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
        # Batch norm parameters
        num_features = out_channels
        self.num_features = num_features
        self.eps = eps
        # Initialize
        self.reset_parameters()

    def forward(self, X):
        return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))


class Net(nn.Module):
    def __init__(self, fused=True):
        super().__init__()
        self.fused = fused
        if fused:
            self.convbn1 = FusedConvBN(1, 8, 3)
            self.convbn2 = FusedConvBN(8, 8, 3)
        else:
            self.conv1 = nn.Conv2d(1, 8, 3, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(8, affine=False, track_running_stats=False)
            self.conv2 = nn.Conv2d(8, 8, 3, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(8, affine=False, track_running_stats=False)
        self.fc1 = nn.Linear(8 * 5 * 5, 16)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        if self.fused:  # noqa: SIM108 -- the tutorial's two models in one
            x = self.convbn1(x)
        else:
            x = self.bn1(self.conv1(x))
        F.relu_(x)
        if self.fused:  # noqa: SIM108
            x = self.convbn2(x)
        else:
            x = self.bn2(self.conv2(x))
        F.relu_(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.dropout(x)
        x = self.fc1(x)
        return F.log_softmax(x, dim=1)


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.arange(p.numel(), dtype=torch.float32)
                .mul(0.61 + 0.23 * i)
                .sin()
                .mul(0.3)
                .view(p.shape)
            )


images = pattern(24, 1, 14, 14, dtype=torch.float32)
images = images + torch.arange(24).view(24, 1, 1, 1).remainder(4) * 0.3
targets = torch.arange(24) % 4
for fused in (True, False):
    torch.manual_seed(123456)
    model = Net(fused=fused)
    fill(model)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    losses = []
    for _epoch in range(3):
        for i in range(0, 24, 8):
            data, target = images[i : i + 8], targets[i : i + 8]
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            losses.append(round(loss.item(), 4))
    print(
        "fused" if fused else "unfused",
        [n for n, _ in model.named_parameters()],
        losses,
    )
