"""Stochastic Weight Averaging as torch.optim.swa_utils documents it: a small
network with BatchNorm trained by SGD under CosineAnnealingLR, then from
swa_start on under SWALR (cos annealing to swa_lr) while an AveragedModel
averages the weights each epoch; update_bn recomputes the BatchNorm
statistics of the average over the loader, and the average predicts. An
exponential moving average of the same network by AveragedModel with
get_ema_multi_avg_fn (use_buffers=True) and with a custom avg_fn beside it.

Weights come from a fixed formula; nothing random is printed."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.arange(p.numel(), dtype=torch.float32)
                .mul(0.71 + 0.13 * i)
                .sin()
                .mul(0.4)
                .view(p.shape)
            )


k = torch.arange(60, dtype=torch.float32)
x = torch.stack([(k * (0.3 + 0.1 * j)).sin() for j in range(6)], 1) + 0.5
y = (k.long() * 7) % 3
x[torch.arange(60), y] += 1.0
loader = DataLoader(TensorDataset(x, y), batch_size=12, shuffle=False)

model = Net()
fill(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
swa_model = AveragedModel(model)
scheduler = CosineAnnealingLR(optimizer, T_max=10)
swa_start = 5
swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=3, anneal_strategy="cos")
print(
    "averaged",
    type(swa_model.module).__name__,
    swa_model.n_averaged.item(),
    swa_model.n_averaged.dtype,
    [n for n, _ in swa_model.named_buffers()][:2],
)

for epoch in range(9):
    total = 0.0
    for input, target in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(input), target)
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch > swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    lr = optimizer.param_groups[0]["lr"]
    print(
        f"epoch {epoch} loss {total / len(loader):.4f} lr {lr:.5f} "
        f"n_averaged {swa_model.n_averaged.item()}"
    )

print(
    "swa bn before",
    [round(v, 4) for v in swa_model.module.bn.running_mean[:3].tolist()],
)
update_bn(loader, swa_model)
print(
    "swa bn after",
    [round(v, 4) for v in swa_model.module.bn.running_mean[:3].tolist()],
    swa_model.module.bn.momentum,
)
swa_model.eval()
with torch.no_grad():
    preds = swa_model(x)
    acc = (preds.argmax(1) == y).float().mean().item()
    print(f"swa loss {loss_fn(preds, y).item():.4f} acc {acc:.4f}")
print("swa state keys", list(swa_model.state_dict())[:4])
print(
    "swalr state",
    sorted(k for k in swa_scheduler.state_dict() if not k.startswith("_")),
)

# The average of two snapshots is their mean, parameter by parameter.
a, b = Net(), Net()
fill(a)
with torch.no_grad():
    for p in b.parameters():
        p.copy_(torch.full_like(p, 0.5))
avg = AveragedModel(a)
avg.update_parameters(a)
avg.update_parameters(b)
mean = (a.fc1.weight + b.fc1.weight) / 2
print("mean of two", torch.allclose(avg.module.fc1.weight, mean), avg.n_averaged.item())

# An exponential moving average, buffers included.
ema_model = AveragedModel(
    model, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True
)
ema_custom = AveragedModel(
    model, avg_fn=lambda avg, new, num: 0.9 * avg + 0.1 * new, use_buffers=True
)
for input, target in loader:
    optimizer.zero_grad()
    loss_fn(model(input), target).backward()
    optimizer.step()
    ema_model.update_parameters(model)
    ema_custom.update_parameters(model)
print(
    "ema agrees",
    torch.allclose(
        ema_model.module.fc2.weight, ema_custom.module.fc2.weight, atol=1e-6
    ),
    [round(v, 4) for v in ema_model.module.fc2.bias.tolist()],
)
print(
    "ema buffers follow",
    torch.allclose(
        ema_model.module.bn.running_var, ema_custom.module.bn.running_var, atol=1e-6
    ),
    ema_model.module.bn.num_batches_tracked.item(),
)
