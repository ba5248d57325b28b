"""Hooks for autograd saved tensors, in the shape of the tutorial
(pytorch/tutorials intermediate_source/autograd_saved_tensors_hooks_tutorial.py):
what a node saves (grad_fn._saved_self, _saved_result), hooks on a grad_fn,
then saved_tensors_hooks with pack/unpack counting, hooks that change the saved
values, and save_on_cpu. compat's tape saves each op's inputs (JAX derives
the backward from them), not the tensors torch saves, so it refuses the
saved-tensor hooks by name rather than call them a different number of times."""

import torch

torch.manual_seed(0)

# Saved tensors
a = torch.arange(1.0, 6.0, requires_grad=True)
y = a.pow(2)
print("saved self is a", y.grad_fn._saved_self is a)  # True

x = torch.arange(1.0, 6.0, requires_grad=True)
y = x.exp()
print("saved result equals y", y.grad_fn._saved_result.equal(y))  # True
print("saved result is y", y.grad_fn._saved_result is y)  # False

# Hooks on a grad_fn see the gradients flowing through it.
z = x.exp() * 3
seen = []
z.grad_fn.register_hook(lambda gi, go: seen.append((len(gi), len(go))))
z.grad_fn.register_prehook(lambda go: seen.append(("pre", len(go))))
z.sum().backward()
print("grad_fn hooks", seen, [round(v, 4) for v in x.grad.tolist()])


# Registering hooks for saved tensors
def pack_hook(x):
    print("Packing", x.shape)
    return x


def unpack_hook(x):
    print("Unpacking", x.shape)
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b

y.sum().backward()
print("a.grad", a.grad.tolist())

# Counting what is packed: a multiplication saves both its operands.
packed = []


def counting_pack(t):
    packed.append(tuple(t.shape))
    return t


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(counting_pack, lambda t: t):
    y = (x * x).exp().sum()
y.backward()
print("packed", packed)

# Hooks may change what is saved, as long as unpack restores it.
x = torch.arange(1.0, 6.0, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):
    y = torch.pow(x, 2)
y.sum().backward()
print("grad is 2x", x.grad.equal(2 * x))

# Saving tensors to CPU
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    y = (x * x).sum()
y.backward()
print("save_on_cpu grad", x.grad.tolist())
