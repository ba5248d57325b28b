"""Docs "Extending PyTorch" and the tutorials' custom Functions: ``Function`` with
``save_for_backward``, ``needs_input_grad``, ``mark_non_differentiable``,
``once_differentiable``, ``gradcheck``; a custom ``nn.Module`` with parameters and
buffers, ``state_dict``, ``apply(init)``, ``zero_grad``."""

from __future__ import annotations

import numpy as np

from tests.compat.notes.record import Notes


def _sort_functions(torch):
    """The docs' mark_non_differentiable example, and a max with its index."""
    Function = torch.autograd.Function
    once_differentiable = torch.autograd.function.once_differentiable

    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            sorted, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return sorted, idx

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):  # still need to accept g2
            x, idx = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            grad_input.index_add_(0, idx, g1)
            return grad_input

    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return x.max(), idx

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_value, grad_idx):
            x, idx = ctx.saved_tensors
            grad = torch.zeros_like(x)
            grad[idx] = grad_value
            return grad

    return Sort, MaxWithIndex


def run(torch) -> dict[str, object]:  # noqa: C901 -- one script, top to bottom
    notes = Notes()
    nn = torch.nn
    Function = torch.autograd.Function
    needs = []  # ctx.needs_input_grad as each backward saw it

    # Inherit from Function
    class LinearFunction(Function):
        # Note that forward, setup_context, and backward are @staticmethods
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        # This function has only a single output, so it gets only one gradient
        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            needs.append(tuple(ctx.needs_input_grad))
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class LinearSetupContext(Function):
        @staticmethod
        def forward(input, weight, bias):
            return input.mm(weight.t()) + bias

        @staticmethod
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight)

        @staticmethod
        def backward(ctx, grad_output):
            input, weight = ctx.saved_tensors
            return grad_output.mm(weight), grad_output.t().mm(input), grad_output.sum(0)

    class MulConstant(Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            # ctx is a context object that can be used to stash information
            # for backward computation
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            # We return as many input gradients as there were arguments.
            # Gradients of non-Tensor arguments to forward must be None.
            return grad_output * ctx.constant, None

    class MulTensors(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            needs.append(tuple(ctx.needs_input_grad))
            grad_a = grad_output * b if ctx.needs_input_grad[0] else None
            grad_b = grad_output * a if ctx.needs_input_grad[1] else None
            return grad_a, grad_b

    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    class LegendrePolynomial3(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    class WrongGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output  # wrong on purpose: should be 2 * x * grad_output

    class TrailingNone(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2, None  # an extra None is allowed

    class TooManyGrads(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2, grad_output

    class WrongShapeGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad_output):
            return torch.ones(2)

    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 3)).astype(np.float32)
    w_np = rng.standard_normal((2, 3)).astype(np.float32)
    b_np = rng.standard_normal(2).astype(np.float32)

    with notes.section("linear_function"):
        x = torch.tensor(x_np, requires_grad=True)
        w = torch.tensor(w_np, requires_grad=True)
        b = torch.tensor(b_np, requires_grad=True)
        out = LinearFunction.apply(x, w, b)
        notes.record("out", lambda: out)
        notes.record("grad_fn", lambda: out.grad_fn.name())
        out.sum().backward()
        notes.record("grads", lambda: (x.grad, w.grad, b.grad))
        notes.record("needs_all", lambda: needs[-1])
        w2 = torch.tensor(w_np, requires_grad=True)
        LinearFunction.apply(torch.tensor(x_np), w2).sum().backward()
        notes.record("needs_weight_only", lambda: needs[-1])
        notes.record("no_bias_grad", lambda: w2.grad)
        plain_out = LinearFunction.apply(torch.tensor(x_np), torch.tensor(w_np))
        notes.record(
            "no_grad_inputs", lambda: (plain_out.requires_grad, plain_out.grad_fn)
        )

    with notes.section("setup_context"):
        x = torch.tensor(x_np, requires_grad=True)
        w = torch.tensor(w_np, requires_grad=True)
        b = torch.tensor(b_np, requires_grad=True)
        out = LinearSetupContext.apply(x, w, b)
        (out * out).sum().backward()
        notes.record("grads", lambda: (x.grad, w.grad, b.grad))

    with notes.section("mul_constant"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = MulConstant.apply(x, 5.0)
        notes.record("y", lambda: y)
        notes.record("grad_fn", lambda: y.grad_fn.name())
        y.sum().backward()
        notes.record("grad", lambda: x.grad)

    with notes.section("needs_input_grad"):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0])
        MulTensors.apply(a, b).sum().backward()
        notes.record("a_only", lambda: needs[-1])
        notes.record("a_grad", lambda: a.grad)
        b.requires_grad_()
        MulTensors.apply(a, b).sum().backward()
        notes.record("both", lambda: needs[-1])
        notes.record("b_grad", lambda: b.grad)

    with notes.section("exp"):
        x = torch.tensor([0.0, 1.0], requires_grad=True)
        y = Exp.apply(x)
        notes.record("grad_fn", lambda: y.grad_fn.name())
        (y * 2).sum().backward()
        notes.record("grad", lambda: x.grad)
        notes.record("no_grad_input", lambda: Exp.apply(torch.zeros(2)).requires_grad)

    with notes.section("legendre"):
        # the Blitz's "Learning PyTorch with Examples": P3 = LegendrePolynomial3.apply
        P3 = LegendrePolynomial3.apply
        a = torch.full((), 0.0, requires_grad=True)
        b = torch.full((), -1.0, requires_grad=True)
        c = torch.full((), 0.0, requires_grad=True)
        d = torch.full((), 0.3, requires_grad=True)
        x = torch.linspace(-1.0, 1.0, 5)
        y = torch.sin(x)
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        notes.record("loss", lambda: loss)
        notes.record("grads", lambda: (a.grad, b.grad, c.grad, d.grad))

    with notes.section("mark_non_differentiable"):
        Sort, _ = _sort_functions(torch)
        x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
        s, idx = Sort.apply(x)
        notes.record("sorted", lambda: s)
        notes.record("idx", lambda: idx)
        notes.record("requires_grad", lambda: (s.requires_grad, idx.requires_grad))
        (s * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
        notes.record("grad", lambda: x.grad)

    with notes.section("max_with_index"):
        _, MaxWithIndex = _sort_functions(torch)
        x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
        m, idx = MaxWithIndex.apply(x)
        notes.record("requires_grad", lambda: (m.requires_grad, idx.requires_grad))
        (m * 4).backward()
        notes.record("grad", lambda: x.grad)

    with notes.section("once_differentiable"):
        _, MaxWithIndex = _sort_functions(torch)
        x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
        m, _ = MaxWithIndex.apply(x)
        (g,) = torch.autograd.grad(m, x, create_graph=True)
        notes.record("g", lambda: g)
        notes.record("g_requires_grad", lambda: g.requires_grad)
        notes.record("double_backward", lambda: g.sum().backward())

    with notes.section("backward_returns"):

        def grad_through(fn):
            x = torch.ones(3, requires_grad=True)
            fn.apply(x).sum().backward()
            return x.grad

        notes.record("trailing_none", lambda: grad_through(TrailingNone))
        notes.record("too_many", lambda: grad_through(TooManyGrads))
        notes.record("wrong_shape", lambda: grad_through(WrongShapeGrad))

    with notes.section("mark_dirty"):
        x = torch.ones(2, requires_grad=True)
        y = x * 1
        z = AddOneInplace.apply(y)
        notes.record("same_object", lambda: z is y)
        notes.record("z", lambda: z)
        z.sum().backward()
        notes.record("grad", lambda: x.grad)

    with notes.section("gradcheck"):
        gradcheck = torch.autograd.gradcheck
        # gradcheck takes a tuple of tensors as input, check if your gradient
        # evaluated with these tensors are close enough to numerical
        # approximations and returns True if they all verify this condition.
        input = (
            torch.randn(4, 3, dtype=torch.double, requires_grad=True),
            torch.randn(2, 3, dtype=torch.double, requires_grad=True),
        )
        notes.record(
            "linear",
            lambda: gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4),
        )
        sq = torch.randn(3, dtype=torch.double, requires_grad=True)
        notes.record("square", lambda: gradcheck(Square.apply, (sq,)))
        notes.record("exp", lambda: gradcheck(Exp.apply, (sq,)))
        notes.record(
            "wrong_quiet",
            lambda: gradcheck(WrongGrad.apply, (sq,), raise_exception=False),
        )
        try:
            gradcheck(WrongGrad.apply, (sq,))
            notes.record("wrong_raises_runtime_error", lambda: False)
        except RuntimeError:
            notes.record("wrong_raises_runtime_error", lambda: True)

    class Linear(nn.Module):
        def __init__(self, input_features, output_features, bias=True):
            super().__init__()
            self.input_features = input_features
            self.output_features = output_features

            # nn.Parameter is a special kind of Tensor, that will get
            # automatically registered as Module's parameter once it's assigned
            # as an attribute.
            self.weight = nn.Parameter(torch.empty(output_features, input_features))
            if bias:
                self.bias = nn.Parameter(torch.empty(output_features))
            else:
                # You should always register all possible parameters, but the
                # optional ones can be None if you want.
                self.register_parameter("bias", None)

            # Not a very smart way to initialize weights
            nn.init.uniform_(self.weight, -0.1, 0.1)
            if self.bias is not None:
                nn.init.uniform_(self.bias, -0.1, 0.1)
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))

        def forward(self, input):
            # See the autograd section for explanation of what happens here.
            self.calls += 1
            return LinearFunction.apply(input, self.weight, self.bias)

        def extra_repr(self):
            # (Optional)Set the extra information about this module.
            return "input_features={}, output_features={}, bias={}".format(  # noqa: UP032
                self.input_features, self.output_features, self.bias is not None
            )

    with notes.section("module"):
        m = Linear(3, 2)
        notes.record("repr", lambda: repr(m))
        notes.record(
            "named_parameters", lambda: [(n, p.shape) for n, p in m.named_parameters()]
        )
        notes.record("state_dict_keys", lambda: list(m.state_dict()))
        notes.record("weight_in_range", lambda: bool((m.weight.abs() <= 0.1).all()))
        nb = Linear(3, 2, bias=False)
        notes.record("no_bias_repr", lambda: repr(nb))
        notes.record("no_bias_state_dict_keys", lambda: list(nb.state_dict()))
        notes.record("no_bias_parameters", lambda: len(list(nb.parameters())))
        with torch.no_grad():
            m.weight.copy_(torch.tensor(w_np))
            m.bias.copy_(torch.tensor(b_np))
        x = torch.tensor(x_np)
        out = m(x)
        m(x)
        notes.record("out", lambda: out)
        notes.record("calls", lambda: m.calls)
        out.sum().backward()
        notes.record("bias_grad", lambda: m.bias.grad)
        m.zero_grad()
        notes.record("zero_grad_none", lambda: (m.weight.grad, m.bias.grad))

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(3))
            self.register_parameter("bias", None)
            self.register_buffer("running_mean", torch.zeros(3))
            self.register_buffer("scratch", torch.zeros(2), persistent=False)

        def forward(self, x):
            self.running_mean += x.detach().mean(0)
            return x * self.weight

    with notes.section("buffers"):
        m = Scale()
        notes.record(
            "named_parameters", lambda: [(n, p.shape) for n, p in m.named_parameters()]
        )
        notes.record("named_buffers", lambda: [n for n, _ in m.named_buffers()])
        notes.record("state_dict_keys", lambda: list(m.state_dict()))
        notes.record("bias_is_none", lambda: m.bias is None)
        notes.record("weight_is_parameter", lambda: isinstance(m.weight, nn.Parameter))
        notes.record("weight_is_tensor", lambda: isinstance(m.weight, torch.Tensor))
        notes.record("buffer_is_parameter", lambda: isinstance(m.scratch, nn.Parameter))
        out = m(torch.tensor([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]]))
        notes.record("running_mean", lambda: m.running_mean)
        notes.record("buffer_requires_grad", lambda: m.running_mean.requires_grad)
        out.sum().backward()
        notes.record("weight_grad", lambda: m.weight.grad)
        m.zero_grad()
        notes.record("zero_grad_none", lambda: m.weight.grad)
        sd = m.state_dict()
        notes.record("state_dict_detached", lambda: sd["weight"].requires_grad)
        notes.record(
            "state_dict_shares", lambda: sd["weight"].data_ptr() == m.weight.data_ptr()
        )
        notes.record(
            "assign_tensor_to_parameter",
            lambda: setattr(m, "weight", torch.ones(3)),
        )
        notes.record("missing_key", lambda: Scale().load_state_dict({}))
        notes.record(
            "unexpected_key",
            lambda: Scale().load_state_dict({**sd, "extra": torch.ones(1)}),
        )
        m.double()
        notes.record("double", lambda: (m.weight.dtype, m.running_mean.dtype))

    with notes.section("parameter"):
        p = nn.Parameter(torch.ones(2))
        notes.record("repr", lambda: repr(p))
        notes.record("requires_grad", lambda: p.requires_grad)
        notes.record(
            "frozen",
            lambda: nn.Parameter(torch.ones(2), requires_grad=False).requires_grad,
        )
        notes.record("times_two_is_parameter", lambda: isinstance(p * 2, nn.Parameter))
        notes.record("grad_fn", lambda: (p * 2).grad_fn.name())

    with notes.section("apply_init"):
        visited = []

        @torch.no_grad()
        def init_weights(m):
            visited.append(type(m).__name__)
            if type(m) is nn.Linear:
                m.weight.fill_(1.0)

        net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
        returned = net.apply(init_weights)
        notes.record("returns_self", lambda: returned is net)
        notes.record("visited", lambda: visited)
        notes.record("weight", lambda: net[0].weight)
        notes.record("named_modules", lambda: [n for n, _ in net.named_modules()])
        notes.record("state_dict_keys", lambda: list(net.state_dict()))
        out = net(torch.ones(1, 2))
        out.sum().backward()
        notes.record("grad_before_zero", lambda: net[1].bias.grad)
        net.zero_grad()
        notes.record("zero_grad", lambda: [p.grad for p in net.parameters()])

    return notes
