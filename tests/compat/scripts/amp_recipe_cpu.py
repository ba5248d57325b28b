"""Automatic mixed precision in the shape of the AMP recipe
(pytorch/tutorials recipes_source/recipes/amp_recipe.py) on the CPU:
torch.autocast("cpu", dtype=torch.bfloat16) around the forward pass and loss,
the dtypes autocast gives (matmuls in bfloat16, the loss in float32),
GradScaler("cpu") scaling the loss, unscale_ before gradient clipping, step,
update, and the scaler's state_dict saved with the model's."""

import torch

torch.manual_seed(0)
device = "cpu"
batch_size, in_size, out_size, num_layers, epochs = 16, 32, 32, 3, 3


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers)).to(device=device)


net = make_model(in_size, out_size, num_layers)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).mul(0.9 + 0.3 * i).sin()
                .mul(0.2).view(p.shape))  # fmt: skip
data = [torch.linspace(-1, 1, batch_size * in_size).view(batch_size, in_size).roll(k)
        for k in range(4)]  # fmt: skip
targets = [d.flip(1) for d in data]
loss_fn = torch.nn.MSELoss().to(device)
opt = torch.optim.SGD(net.parameters(), lr=0.01)

# Default precision, for comparison.
for epoch in range(epochs):  # noqa: B007
    for input, target in zip(data, targets, strict=True):
        output = net(input)
        loss = loss_fn(output, target)
        loss.backward()
        opt.step()
        opt.zero_grad()
print(f"default precision loss {loss.item():.4f}", output.dtype)

# Adding autocast: the forward pass in bfloat16 where autocast chooses.
with torch.autocast(device_type=device, dtype=torch.bfloat16):
    output = net(data[0])
    print("autocast output", output.dtype)  # bfloat16: linear layers autocast
    loss = loss_fn(output, targets[0])
    print("autocast loss", loss.dtype)  # float32: mse_loss autocasts to float32
loss.backward()
opt.zero_grad()

# Adding GradScaler, then all together.
use_amp = True
scaler = torch.amp.GradScaler("cpu", enabled=use_amp)
for epoch in range(epochs):  # noqa: B007
    for input, target in zip(data, targets, strict=True):
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
print(f"amp loss {loss.item():.2f}", "scale", scaler.get_scale())
checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(),
              "scaler": scaler.state_dict()}  # fmt: skip
print("scaler state", sorted(checkpoint["scaler"]))
