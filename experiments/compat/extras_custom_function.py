"""Notes' extra: extending autograd with a custom ``Function`` + ``gradcheck``
(PyTorch's "Learning PyTorch with Examples"), as PyTorch code.

Run: python experiments/compat/extras_custom_function.py
"""

import math

import jaxblitz.compat as torch
from jaxblitz.compat.autograd import Function, gradcheck


class LegendrePolynomial3(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(2000):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 500 == 499:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
print("grad_fn:", y_pred.grad_fn.next_functions[1][0].next_functions[1][0])

inp = torch.randn(6, dtype=torch.double, requires_grad=True)
print("gradcheck:", gradcheck(LegendrePolynomial3.apply, (inp,), eps=1e-6, atol=1e-4))
