"""Fusing the optimizer step into the backward pass, in the shape of the recipe
(pytorch/tutorials intermediate_source/optimizer_step_in_backward_tutorial.py):
a model trained with Adam stepped after backward, then the same model with one
Adam per parameter stepped (and zeroed) inside
register_post_accumulate_grad_hook, so no .grad outlives its step. A small MLP
stands in for the recipe's vit_l_16 and the CPU for CUDA (the memory snapshots
are CUDA's); data and weights come from fixed formulas."""

import torch
import torch.nn as nn

IMAGE_SIZE = 8


def make_model():
    model = nn.Sequential(
        nn.Flatten(), nn.Linear(3 * IMAGE_SIZE * IMAGE_SIZE, 32), nn.GELU(),
        nn.LayerNorm(32), nn.Linear(32, 10))  # fmt: skip
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(1.37 + 0.29 * i).sin()
                    .mul(0.2).view(p.shape))  # fmt: skip
    return model


def fake_image(step):
    n = 3 * IMAGE_SIZE * IMAGE_SIZE
    x = torch.arange(n, dtype=torch.float32).mul(0.31 + 0.07 * step).cos()
    return x.view(1, 3, IMAGE_SIZE, IMAGE_SIZE)


# Now let's define our typical training loop.
model = make_model()
optimizer = torch.optim.Adam(model.parameters())


def train(model, optimizer, step):
    # create our fake image input: tensor shape is batch_size, channels, height, width
    loss = model.forward(fake_image(step))
    loss.sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.sum().item()


for step in range(3):
    print(f"typical step {step} loss {train(model, optimizer, step):.4f}")
print("grads after zero_grad", {p.grad for p in model.parameters()})
typical = [p.detach().clone() for p in model.parameters()]

# Now that we have a sense of what we're looking at, let's fuse the optimizer
# step into the backward pass.
model = make_model()

# Instead of having just *one* optimizer, we will have a ``dict`` of optimizers
# for every parameter so we could reference them in our hook.
optimizer_dict = {p: torch.optim.Adam([p], foreach=False) for p in model.parameters()}

seen = []


# Define our hook, which will call the optimizer ``step()`` and ``zero_grad()``
def optimizer_hook(parameter) -> None:
    seen.append(tuple(parameter.shape))
    optimizer_dict[parameter].step()
    optimizer_dict[parameter].zero_grad()


# Register the hook onto every parameter
handles = []
for p in model.parameters():
    handles.append(p.register_post_accumulate_grad_hook(optimizer_hook))


# Now remember our previous ``train()`` function? Since the optimizer has been
# fused into the backward, we can remove the optimizer step and zero_grad calls.
def train(model, step):  # noqa: F811 -- the recipe redefines it
    loss = model.forward(fake_image(step))
    loss.sum().backward()

    # optimizer update --> no longer needed!
    # optimizer.step()
    # optimizer.zero_grad()
    return loss.sum().item()


for step in range(3):
    print(f"fused step {step} loss {train(model, step):.4f}")
print("hook calls", len(seen), "first", seen[:2])
print("grads freed in the hook", {p.grad for p in model.parameters()})
fused = [p.detach() for p in model.parameters()]
print(
    "same parameters as the typical loop",
    all(torch.allclose(a, b, atol=1e-6) for a, b in zip(typical, fused, strict=True)),
)
print("adam steps", [o.state[p]["step"].item() for p, o in optimizer_dict.items()][:3])

for h in handles:
    h.remove()
loss = model(fake_image(0)).sum()
loss.backward()
print(
    "after remove the grads stay", all(p.grad is not None for p in model.parameters())
)
print("hook calls after remove", len(seen))
