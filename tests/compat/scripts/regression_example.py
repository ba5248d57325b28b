"""The regression example's shape: fit a degree-4 polynomial with one Linear
layer on features torch.cat([x ** i for i in range(1, 5)], 1), the update
written by hand with p.grad.data and .sub_, until the loss is small."""

import torch
import torch.nn.functional as F

POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = "y = "
    for i, w in enumerate(W):
        result += f"{w:+.2f} x^{i + 1} "
    result += f"{b[0]:+.2f}"
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


fc = torch.nn.Linear(W_target.size(0), 1)
print("features:", make_features(torch.tensor([1.0, 2.0])).tolist())
for batch_idx in range(1, 2001):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    steps = batch_idx
    if loss < 1e-3:
        break
print(f"loss small: {loss < 1e-3} or steps done: {steps == 2000}")
print("fc.weight.grad shape:", tuple(fc.weight.grad.data.shape))
w = fc.weight.data.view(-1)
w.sub_(0.0)
learned = poly_desc(fc.weight.view(-1), fc.bias)
actual = poly_desc(W_target.view(-1), b_target)
print("descriptions:", [d.startswith("y = ") and d.count("x^") == 4
                        for d in (learned, actual)])  # fmt: skip
print("Learned function:")
print(fc.weight.view(-1).detach(), fc.bias.detach())
print("Actual function:")
print(W_target.view(-1), b_target)
print("close:", torch.allclose(fc.weight.view(-1), W_target.view(-1), atol=0.5))
