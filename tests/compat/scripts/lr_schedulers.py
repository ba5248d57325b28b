"""The learning-rate schedulers of torch.optim.lr_scheduler as their
documentation and the "How to adjust learning rate" recipes use them: a
LambdaLR with one lambda per param group, OneCycleLR stepped per batch
(cos and linear annealing, three-phase, momentum cycled), CosineAnnealingWarmRestarts
stepped with fractional epochs, ReduceLROnPlateau on a validation loss
(mode, patience, threshold, cooldown, min_lr), SequentialLR of a warm-up and a
decay at a milestone, ChainedScheduler of two multiplicative ones, get_last_lr,
and a scheduler's state_dict saved with torch.save and loaded into a new one
that goes on exactly where the first was."""

import io
import math

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import (
    ChainedScheduler,
    ConstantLR,
    CosineAnnealingWarmRestarts,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
)


def lrs(opt):
    return [round(g["lr"], 6) for g in opt.param_groups]


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
x = torch.linspace(-1, 1, 32).view(8, 4)
y = torch.arange(8) % 2


def train_step(opt):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


# LambdaLR, a lambda per group
opt = torch.optim.SGD(
    [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.5}],
    lr=0.1,
)
sched = LambdaLR(opt, lr_lambda=[lambda e: 0.95**e, lambda e: 1 / (e + 1)])
for epoch in range(4):
    train_step(opt)
    sched.step()
    print(
        "lambda",
        epoch,
        sched.get_last_lr() == lrs(opt) or sched.get_last_lr(),
        lrs(opt),
    )

# OneCycleLR, stepped after each batch
for kw in ({}, {"anneal_strategy": "linear", "three_phase": True, "pct_start": 0.25}):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sched = OneCycleLR(opt, max_lr=0.1, epochs=2, steps_per_epoch=5, **kw)
    seen = []
    for _epoch in range(2):
        for _batch in range(5):
            train_step(opt)
            sched.step()
            seen.append(
                (
                    round(sched.get_last_lr()[0], 6),
                    round(opt.param_groups[0]["momentum"], 4),
                )
            )
    print("onecycle", kw.get("anneal_strategy", "cos"), seen)
    print(
        "onecycle start",
        opt.param_groups[0]["initial_lr"],
        opt.param_groups[0]["max_lr"],
        opt.param_groups[0]["min_lr"],
    )
try:
    sched.step()
except ValueError as e:
    print("stepped too far:", str(e).split(".")[0])

# CosineAnnealingWarmRestarts with fractional epochs
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
iters = 4
seen = []
for epoch in range(4):
    for i in range(iters):
        train_step(opt)
        sched.step(epoch + i / iters)
        seen.append(round(sched.get_last_lr()[0], 5))
print("warm restarts", seen, sched.T_i, sched.T_cur)

# ReduceLROnPlateau on a validation loss that stalls
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = ReduceLROnPlateau(
    opt, mode="min", factor=0.5, patience=1, threshold=0.01, cooldown=1, min_lr=0.002
)
val_losses = [1.0, 0.9, 0.95, 0.91, 0.905, 0.8, 0.85, 0.84, 0.83, 0.82, 0.83]
seen = []
for val in val_losses:
    sched.step(val)
    seen.append((sched.num_bad_epochs, sched.get_last_lr()[0]))
print("plateau", seen, sched.best)
max_sched = ReduceLROnPlateau(opt, "max", patience=0, threshold_mode="abs")
for acc in (0.5, 0.5, 0.6):
    max_sched.step(torch.tensor(acc))
print("plateau max", lrs(opt), max_sched.best, max_sched.mode_worse)

# SequentialLR: linear warm-up, then exponential decay
opt = torch.optim.SGD(model.parameters(), lr=0.1)
warmup = LinearLR(opt, start_factor=0.1, total_iters=3)
decay = ExponentialLR(opt, gamma=0.8)
sched = SequentialLR(opt, schedulers=[warmup, decay], milestones=[3])
seen = []
for _epoch in range(7):
    train_step(opt)
    sched.step()
    seen.append(round(sched.get_last_lr()[0], 6))
print("sequential", seen)

# ChainedScheduler: both act every step
opt = torch.optim.SGD(model.parameters(), lr=1.0)
sched = ChainedScheduler(
    [ConstantLR(opt, factor=0.5, total_iters=2), ExponentialLR(opt, gamma=0.9)]
)
seen = []
for _epoch in range(5):
    train_step(opt)
    sched.step()
    seen.append(round(sched.get_last_lr()[0], 6))
print("chained", seen)

# state_dict round trip: a second scheduler resumes where the first stopped
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
for _epoch in range(3):
    train_step(opt)
    sched.step()
buffer = io.BytesIO()
torch.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, buffer)
buffer.seek(0)
checkpoint = torch.load(buffer)
print(
    "scheduler state",
    sorted(checkpoint["scheduler"]),
    checkpoint["scheduler"]["last_epoch"],
    dict(checkpoint["scheduler"]["milestones"]),
)
opt2 = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched2 = MultiStepLR(opt2, milestones=[2, 4], gamma=0.1)
opt2.load_state_dict(checkpoint["optimizer"])
sched2.load_state_dict(checkpoint["scheduler"])
first, second = [], []
for _epoch in range(3):
    sched.step()
    sched2.step()
    first.append(sched.get_last_lr()[0])
    second.append(sched2.get_last_lr()[0])
print("resumed", [round(v, 8) for v in second], first == second)

# LambdaLR's state keeps no lambdas, only callable objects' state
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = LambdaLR(opt, lambda e: math.cos(e))
state = sched.state_dict()
print("lambda state", sorted(state), state["lr_lambdas"])
