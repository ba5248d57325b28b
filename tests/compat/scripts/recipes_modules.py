"""Building-models idioms from the tutorials and recipes: ModuleList/ModuleDict,
register_buffer, BatchNorm running statistics, Dropout in eval, apply(init_fn),
freezing with requires_grad_(False), forward and tensor hooks, autograd.grad with
create_graph, retain_graph and StepLR."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def init_weights(m):
    if isinstance(m, nn.Linear):
        with torch.no_grad():
            n = m.weight.numel()
            m.weight.copy_(torch.linspace(-0.5, 0.5, n).view(m.weight.shape))
        nn.init.constant_(m.bias, 0.01)


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]  # noqa: B905
        )
        self.norms = nn.ModuleDict({"bn": nn.BatchNorm1d(sizes[1])})
        self.drop = nn.Dropout(p=0.5)
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        x = self.layers[0](x)
        x = F.relu(self.norms["bn"](x))
        x = self.drop(x)
        for layer in self.layers[1:-1]:
            x = torch.tanh(layer(x))
        return self.layers[-1](x) * self.scale


model = MLP([4, 8, 6, 3])
model.apply(init_weights)
print(model)
print("params", sum(p.numel() for p in model.parameters()))
print("trainable", sum(p.numel() for p in model.parameters() if p.requires_grad))
print("state keys", list(model.state_dict().keys()))
print("modules", [name for name, _ in model.named_modules()])
print("buffers", [name for name, _ in model.named_buffers()])

x = torch.linspace(-2, 2, 40).view(10, 4)
target = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
model.eval()
with torch.no_grad():
    out_eval = model(x)
print("eval twice same", torch.equal(out_eval, model(x)))
print("eval out", [round(v, 4) for v in out_eval[1].tolist()])
print("running_mean before", model.norms["bn"].running_mean[:3].tolist())

model.train()
model.drop.p = 0.0
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), target)
    loss.backward()
    opt.step()
    sched.step()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.4f}")
bn = model.norms["bn"]
print("running_mean after", [round(v, 4) for v in bn.running_mean[:3].tolist()])
print("running_var after", [round(v, 4) for v in bn.running_var[:3].tolist()])
print("num_batches_tracked", bn.num_batches_tracked)

# freeze the first layer
for p in model.layers[0].parameters():
    p.requires_grad_(False)
print("trainable now", sum(p.numel() for p in model.parameters() if p.requires_grad))
opt.zero_grad()
F.cross_entropy(model(x), target).backward()
print("frozen grad", model.layers[0].weight.grad)
print("head grad norm", round(model.layers[-1].weight.grad.norm().item(), 4))

# hooks
seen = []
h = model.layers[1].register_forward_hook(
    lambda m, inp, out: seen.append(tuple(out.shape))
)
model(x)
h.remove()
model(x)
print("forward hook saw", seen)
grads = []
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w.register_hook(lambda g: grads.append(g.clone()))
(w**2).sum().backward()
print("tensor hook", grads[0].tolist(), w.grad.tolist())

# autograd.grad with create_graph for a second derivative
t = torch.tensor(1.5, requires_grad=True)
y = t**3
(dy,) = torch.autograd.grad(y, t, create_graph=True)
(d2y,) = torch.autograd.grad(dy, t)
print("dy", round(dy.item(), 4), "d2y", round(d2y.item(), 4))

# retain_graph
z = (w * 3).sum()
z.backward(retain_graph=True)
z.backward()
print("twice", w.grad.tolist())
print("detach", w.detach().requires_grad, w.clone().requires_grad)
