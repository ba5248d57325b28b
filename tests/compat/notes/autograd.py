"""Docs "Autograd mechanics" and the Blitz's "A Gentle Introduction to
torch.autograd": requires_grad, no_grad, detach, backward(v), accumulation,
retain_graph, in-place correctness checks, in-place on views, ``.data``, hooks."""

from __future__ import annotations

import warnings

from tests.compat.notes.record import Notes

VERSION_ERROR = "one of the variables needed for gradient computation"


def _name(node) -> str | None:
    return None if node is None else node.name()


def run(torch) -> dict[str, object]:
    notes = Notes()
    nn = torch.nn

    with notes.section("blitz_differentiation"):
        a = torch.tensor([2.0, 3.0], requires_grad=True)
        b = torch.tensor([6.0, 4.0], requires_grad=True)
        Q = 3 * a**3 - b**2
        external_grad = torch.tensor([1.0, 1.0])
        Q.backward(gradient=external_grad)
        # check if collected gradients are correct
        notes.record("a_grad_ok", lambda: 9 * a**2 == a.grad)
        notes.record("b_grad_ok", lambda: -2 * b == b.grad)
        notes.record("a_grad", lambda: a.grad)
        notes.record("Q_grad_fn", lambda: _name(Q.grad_fn))

    with notes.section("blitz_exclusion"):
        x = torch.rand(5, 5)
        y = torch.rand(5, 5)
        z = torch.rand((5, 5), requires_grad=True)
        a = x + y
        notes.record("a_requires_grad", lambda: a.requires_grad)
        b = x + z
        notes.record("b_requires_grad", lambda: b.requires_grad)
        notes.record("b_is_leaf", lambda: b.is_leaf)
        notes.record("z_is_leaf", lambda: z.is_leaf)
        notes.record("z_grad_fn", lambda: z.grad_fn)

    class Small(nn.Module):  # stands in for the Blitz's resnet18
        def __init__(self):
            super().__init__()
            self.features = nn.Linear(3, 4)
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(torch.relu(self.features(x)))

    with notes.section("blitz_frozen"):
        torch.manual_seed(0)
        model = Small()
        # Freeze all the parameters in the network
        for param in model.parameters():
            param.requires_grad = False
        model.fc = nn.Linear(4, 2)  # the new classifier is unfrozen
        # Optimize only the classifier
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
        out = model(torch.ones(5, 3))
        notes.record("out_requires_grad", lambda: out.requires_grad)
        out.sum().backward()
        optimizer.step()
        notes.record("frozen_grad_is_none", lambda: model.features.weight.grad is None)
        notes.record("head_grad_shape", lambda: model.fc.weight.grad.shape)
        notes.record(
            "trainable",
            lambda: [n for n, p in model.named_parameters() if p.requires_grad],
        )

    with notes.section("grad_mode"):
        x = torch.ones(2, requires_grad=True)
        with torch.no_grad():
            y = x * 2
            notes.record("no_grad_requires_grad", lambda: y.requires_grad)
            with torch.enable_grad():
                notes.record("enable_grad_inside", lambda: (x * 2).requires_grad)
        notes.record("after_no_grad", lambda: (x * 2).requires_grad)
        with torch.set_grad_enabled(False):
            notes.record("set_grad_enabled_false", lambda: (x * 2).requires_grad)
            notes.record("is_grad_enabled", lambda: torch.is_grad_enabled())

        @torch.no_grad()
        def doubler(t):
            return t * 2

        notes.record("decorated", lambda: doubler(x).requires_grad)
        notes.record(
            "requires_grad_ones", lambda: torch.ones(2, requires_grad=True).grad
        )
        with torch.inference_mode():
            notes.record("inference_mode", lambda: (x * 2).requires_grad)

    with notes.section("requires_grad_flags"):
        x = torch.ones(2)
        notes.record("default", lambda: x.requires_grad)
        x.requires_grad_()
        notes.record("after_requires_grad_", lambda: x.requires_grad)
        y = x * 2
        notes.record("detach", lambda: y.detach().requires_grad)
        notes.record("set_on_non_leaf", lambda: setattr(y, "requires_grad", False))
        notes.record("int_requires_grad", lambda: torch.tensor([1], requires_grad=True))
        notes.record("backward_no_grad", lambda: torch.ones(2).sum().backward())
        notes.record("hook_no_grad", lambda: torch.ones(2).register_hook(print))

    with notes.section("non_scalar"):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        notes.record("implicit", lambda: y.backward())
        y.backward(torch.tensor([1.0, 0.1, 0.01]))
        notes.record("grad_v", lambda: x.grad)
        notes.record("wrong_shape_v", lambda: (x * x).backward(torch.ones(2)))

    with notes.section("accumulation"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        (x * x).sum().backward()
        notes.record("accumulated", lambda: x.grad)
        x.grad.zero_()
        notes.record("zeroed", lambda: x.grad)
        x.grad = None
        (x * 3).sum().backward()
        notes.record("after_none", lambda: x.grad)

    with notes.section("retain_graph"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        notes.record("twice_retained", lambda: x.grad)
        notes.record("third_time", lambda: y.backward())
        z = (x.exp()).sum()
        z.backward()
        notes.record("exp_twice", lambda: z.backward())
        w = (x * 2).sum()
        w.backward()
        notes.record("scalar_mul_twice", lambda: w.backward())

    with notes.section("non_leaf_grad"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        z = y * y
        u = z * 1
        u.sum().backward()
        notes.record("retained", lambda: y.grad)
        with warnings.catch_warnings():  # .grad of a non-leaf warns
            warnings.simplefilter("ignore")
            notes.record("not_retained_is_none", lambda: z.grad is None)
        notes.record("x_grad", lambda: x.grad)
        notes.record("retains_grad", lambda: (y.retains_grad, z.retains_grad))

    with notes.section("autograd_grad"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x**3).sum()
        notes.record("first", lambda: torch.autograd.grad(y, x))
        notes.record("x_grad_untouched", lambda: x.grad is None)
        other = torch.ones(2, requires_grad=True)
        notes.record("unused", lambda: torch.autograd.grad((x * 2).sum(), other))
        notes.record(
            "allow_unused",
            lambda: torch.autograd.grad((x * 2).sum(), other, allow_unused=True),
        )

    with notes.section("double_backward"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x**3).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        notes.record("first", lambda: g)
        notes.record("first_requires_grad", lambda: g.requires_grad)
        (g2,) = torch.autograd.grad(g.sum(), x)
        notes.record("second", lambda: g2)

    with notes.section("version_check"):
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.sigmoid()  # sigmoid saves its output
        notes.record("version_before", lambda: b._version)
        b.mul_(2)
        notes.record("version_after", lambda: b._version)
        notes.record("sigmoid_then_mul_", lambda: b.sum().backward())
        x = a.exp()
        y = x * 3
        x.add_(1)
        notes.record("exp_then_add_", lambda: y.sum().backward())
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = a * 2
        y = x + 1
        x.add_(1)  # nothing saved x: no error
        y.sum().backward()
        notes.record("unsaved_ok", lambda: a.grad)

    with notes.section("inplace_leaf"):
        a = torch.ones(3, requires_grad=True)
        notes.record("add_", lambda: a.add_(1))
        notes.record("setitem", lambda: a.__setitem__(0, 5.0))
        notes.record("view_mul_", lambda: a[0].mul_(2))
        notes.record("view_setitem", lambda: a[:2].__setitem__(0, 5.0))
        with torch.no_grad():
            a.add_(1)
            a[0] = 5.0
        notes.record("no_grad_ok", lambda: a)
        notes.record("no_grad_still_leaf", lambda: (a.is_leaf, a.requires_grad))
        notes.record("version", lambda: a._version)

    with notes.section("inplace_view_non_leaf"):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y[0].mul_(2)
        y.sum().backward()
        notes.record("mul_view", lambda: x.grad)
        notes.record("y", lambda: y)
        x.grad = None
        y = x * 1
        y[1] = x[0] ** 2
        y.sum().backward()
        notes.record("setitem_view", lambda: x.grad)
        x.grad = None
        y = x * 1
        v = y[:2]
        y.mul_(3)
        notes.record("view_sees_base_mul", lambda: v)
        v.sum().backward()
        notes.record("view_after_base_mul", lambda: x.grad)
        x.grad = None
        y = x * 1
        v = y[1:]
        v.add_(x[:2] * x[:2])
        y.sum().backward()
        notes.record("base_after_view_add", lambda: x.grad)
        notes.record("base_value", lambda: y)
        x.grad = None
        y = x * 1
        cols = y.unbind(0)
        notes.record("unbind_output_mul_", lambda: cols[0].mul_(2))

    with notes.section("detach_shares_version"):
        x = torch.ones(2, requires_grad=True)
        y = x.exp()
        z = y.detach()
        z.zero_()
        notes.record("detach_zero_", lambda: y.sum().backward())
        x = torch.ones(2, requires_grad=True)
        y = x.exp()
        y.data.zero_()  # .data bypasses the version counter: a silently wrong grad
        y.sum().backward()
        notes.record("data_zero_", lambda: x.grad)

    with notes.section("data_training"):
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(3):
            loss = (w * w * 3).sum()
            loss.backward()
            w.data -= 0.1 * w.grad.data
            w.grad.zero_()
        notes.record("w", lambda: w)
        notes.record("w_flags", lambda: (w.is_leaf, w.requires_grad))
        with torch.no_grad():
            w -= 0.5
        notes.record("no_grad_sub", lambda: w)
        notes.record(
            "still_leaf", lambda: (w.is_leaf, w.requires_grad, w.grad_fn is None)
        )
        w.data = torch.tensor([5.0, 6.0])
        notes.record("data_assigned", lambda: w)
        notes.record("data_assigned_flags", lambda: (w.is_leaf, w.requires_grad))
        (w * 2).sum().backward()
        notes.record("grad_after_assign", lambda: w.grad)

    with notes.section("leaf_hook"):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x.register_hook(lambda g: g * 2)
        (x * 3).sum().backward()
        notes.record("doubled", lambda: x.grad)
        h.remove()
        x.grad = None
        (x * 3).sum().backward()
        notes.record("removed", lambda: x.grad)

    with notes.section("non_leaf_hook"):
        seen = []
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.sum().backward()
        notes.record("non_leaf_hook_saw", lambda: seen)
        x.grad = None
        y = x * x
        y.register_hook(lambda g: g * 0)
        y.sum().backward()
        notes.record("non_leaf_hook_replaces", lambda: x.grad)

    return notes
