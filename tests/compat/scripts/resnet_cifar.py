"""A small residual network trained the way the CIFAR-10 ResNet examples do
(kuangliu/pytorch-cifar, the transfer-learning tutorial's train_model loop):
BasicBlocks of Conv2d and BatchNorm2d with a residual add and a 1x1 projection
shortcut, AdaptiveAvgPool2d, a Dropout head, model.train()/model.eval() each
epoch, SGD with momentum and weight decay under CosineAnnealingLR (and StepLR),
clip_grad_norm_, accuracy by argmax, and the best epoch's state_dict kept with
copy.deepcopy, saved with torch.save to a temporary file and loaded back."""

import copy
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import (
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    StepLR,
)

torch.manual_seed(0)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
torch.backends.cudnn.benchmark = True


def fill(model, scale=0.25):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if name.endswith("bn1.weight") or name.endswith("bn2.weight"):
                p.fill_(1.0)
                continue
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(1.37 + 0.29 * i).sin()
                    .mul(scale).view(p.shape))  # fmt: skip


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class ResNet(nn.Module):
    def __init__(self, num_classes=3, drop=0.0):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(drop)
        self.fc = nn.Linear(16 * BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = torch.flatten(self.avgpool(out), 1)
        return self.fc(self.dropout(out))


# Three classes of 3x12x12 "images": a red bar across, a green bar down, a blue
# diagonal, over a class-independent ramp.
def make_images(n, offset):
    xs, ys = [], []
    for k in range(offset, offset + n):
        img = torch.linspace(0, 0.3, 144).view(1, 12, 12).repeat(3, 1, 1)
        img = img + 0.05 * ((k * 7) % 5)
        row = 1 + (k * 5) % 10
        c = k % 3
        if c == 0:
            img[0, row] += 0.8
        elif c == 1:
            img[1, :, row] += 0.8
        else:
            img[2] += torch.eye(12).roll(k % 3 - 1, dims=1) * 0.8
        xs.append(img)
        ys.append(c)
    return torch.stack(xs), torch.tensor(ys)


train_x, train_y = make_images(24, 0)
val_x, val_y = make_images(12, 100)
mean = train_x.mean(dim=(0, 2, 3), keepdim=True)
std = train_x.std(dim=(0, 2, 3), keepdim=True)
train_x, val_x = (train_x - mean) / std, (val_x - mean) / std
print("data", tuple(train_x.shape), tuple(val_x.shape), train_y.bincount().tolist())

model = ResNet()
fill(model)
print(model.layer2)
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("params", n_params, "buffers", [k for k, _ in model.named_buffers()][:3])

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
scheduler = CosineAnnealingLR(optimizer, T_max=6)

dataloaders = {"train": (train_x, train_y), "val": (val_x, val_y)}
best_acc, best_wts, best_epoch = 0.0, copy.deepcopy(model.state_dict()), -1
model = model.to(device)
for epoch in range(6):
    line = f"epoch {epoch}"
    for phase in ["train", "val"]:
        if phase == "train":
            model.train()
        else:
            model.eval()
        running_loss, running_corrects = 0.0, 0
        xs, ys = dataloaders[phase]
        for i in range(0, len(xs), 8):
            inputs = xs[i : i + 8].to(device, non_blocking=True)
            labels = ys[i : i + 8].to(device)
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                outputs = model(inputs)
                _, preds = torch.max(outputs, 1)
                loss = criterion(outputs, labels)
                if phase == "train":
                    loss.backward()
                    total_norm = nn.utils.clip_grad_norm_(
                        model.parameters(), max_norm=1.0
                    )
                    optimizer.step()
            running_loss += loss.item() * inputs.size(0)
            running_corrects += torch.sum(preds == labels.data)
        if phase == "train":
            scheduler.step()
        epoch_loss = running_loss / len(xs)
        epoch_acc = running_corrects.double() / len(xs)
        line += f" {phase} loss {epoch_loss:.4f} acc {epoch_acc:.4f}"
        if phase == "val" and epoch_acc > best_acc:
            best_acc, best_epoch = epoch_acc, epoch
            best_wts = copy.deepcopy(model.state_dict())
    lr = optimizer.param_groups[0]["lr"]
    print(line, f"lr {lr:.5f} clipped {total_norm.item() > 1.0}")

print("best epoch", best_epoch, f"acc {best_acc:.4f}")
print("running stats", [round(v, 4) for v in model.bn1.running_mean[:3].tolist()],
      model.bn1.num_batches_tracked.item())  # fmt: skip

# Keep the best weights: save the state_dict to a file and load it into a fresh
# model, which then predicts what the best epoch did.
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "best.pth")
    torch.save(best_wts, path)
    checkpoint = {"epoch": best_epoch, "model_state_dict": model.state_dict(),
                  "optimizer_state_dict": optimizer.state_dict(),
                  "scheduler_state_dict": scheduler.state_dict()}  # fmt: skip
    torch.save(checkpoint, os.path.join(folder, "last.tar"))
    fresh = ResNet()
    result = fresh.load_state_dict(torch.load(path, weights_only=True))
    print("load result", result)
    last = torch.load(os.path.join(folder, "last.tar"), map_location=device)
    print("checkpoint keys", sorted(last), last["epoch"])
    print("scheduler state", last["scheduler_state_dict"]["last_epoch"],
          last["scheduler_state_dict"]["T_max"])  # fmt: skip
    opt2 = optim.SGD(fresh.parameters(), lr=0.05, momentum=0.9)
    opt2.load_state_dict(last["optimizer_state_dict"])
    print("optimizer group", {k: v for k, v in opt2.param_groups[0].items()
                              if k in ("lr", "momentum", "weight_decay")})  # fmt: skip
model.load_state_dict(best_wts)
model.eval()
fresh.eval()
with torch.no_grad():
    same = torch.equal(model(val_x), fresh(val_x))
    acc = (fresh(val_x).argmax(1) == val_y).float().mean().item()
print("reloaded predicts alike", same, f"acc {acc:.4f}")
print("num_batches_tracked", fresh.bn1.num_batches_tracked.dtype,
      fresh.bn1.num_batches_tracked.item())  # fmt: skip

# Dropout only acts in train mode; BatchNorm uses batch statistics there.
noisy = ResNet(drop=0.5)
fill(noisy)
noisy.train()
with torch.no_grad():
    a, b = noisy(val_x), noisy(val_x)
print("train mode: dropout varies", not torch.equal(a, b))
noisy.eval()
with torch.no_grad():
    print("eval mode: repeatable", torch.equal(noisy(val_x), noisy(val_x)))

# StepLR's schedule, printed as the tutorial's train_model steps it.
opt = optim.SGD(model.parameters(), lr=0.1)
step = StepLR(opt, step_size=2, gamma=0.5)
lrs = []
for _ in range(6):
    opt.step()
    step.step()
    lrs.append(round(step.get_last_lr()[0], 6))
print("steplr", lrs)

# SGDR's warm restarts, stepped per batch with a fractional epoch.
sgdr = CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
iters, lrs = 3, []
for epoch in range(4):
    for i in range(iters):
        opt.step()
        sgdr.step(epoch + i / iters)
    lrs.append(round(opt.param_groups[0]["lr"], 6))
print("sgdr", lrs, sgdr.T_i)
print("input size", val_x.shape[1:], val_x.size()[2:])
