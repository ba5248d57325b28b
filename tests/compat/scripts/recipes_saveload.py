"""The recipes "What is a state_dict", "Saving and loading models for inference",
"Saving and loading a general checkpoint", "Saving multiple models in one file",
"Warmstarting a model using parameters from a different model" and "Zeroing out
gradients" (pytorch/tutorials recipes_source/recipes/), on the Blitz's Net with
fixed weights and inputs."""

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


def fill(model):
    """Deterministic weights so torch and a port print the same numbers."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                (torch.arange(n, dtype=torch.float32).remainder(7) - 3)
                .mul(0.05 / (i + 1))
                .view(p.shape)
            )


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
fill(net)
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])

inputs = torch.linspace(-1, 1, 4 * 3 * 32 * 32).view(4, 3, 32, 32).sin()
labels = torch.tensor([1, 0, 3, 9])
criterion = nn.CrossEntropyLoss()


def train(model, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        opt.step()
    return loss.item()


loss = train(net, optimizer, 3)
print("loss after 3 steps", round(loss, 5))
print(
    "momentum buffers",
    len(optimizer.state_dict()["state"]),
    sorted(optimizer.state_dict()["state"][0]),
)

tmp = tempfile.mkdtemp()
PATH = os.path.join(tmp, "state_dict_model.pt")
torch.save(net.state_dict(), PATH)
model = Net()
model.load_state_dict(torch.load(PATH, weights_only=True))
model.eval()
print("training flag", model.training, model.fc1.training)
with torch.no_grad():
    print("inference agrees", torch.equal(model(inputs), net(inputs)))
    print("logits", [round(v, 4) for v in model(inputs)[0].tolist()])

# general checkpoint
EPOCH = 5
CKPT = os.path.join(tmp, "model.pt")
torch.save(
    {
        "epoch": EPOCH,
        "model_state_dict": net.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "loss": loss,
    },
    CKPT,
)
model = Net()
opt2 = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
checkpoint = torch.load(CKPT, weights_only=True)
model.load_state_dict(checkpoint["model_state_dict"])
opt2.load_state_dict(checkpoint["optimizer_state_dict"])
epoch = checkpoint["epoch"]
print("resumed epoch", epoch, "loss", round(checkpoint["loss"], 5))
model.train()
resumed = train(model, opt2, 2)
straight = train(net, optimizer, 2)
print("resume matches", round(resumed, 5), round(straight, 5), resumed == straight)

# several models in one file
netA, netB = Net(), Net()
fill(netA)
optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
optimizerB = optim.Adam(netB.parameters(), lr=0.001)
train(netB, optimizerB, 1)
BOTH = os.path.join(tmp, "both.pt")
torch.save(
    {
        "modelA_state_dict": netA.state_dict(),
        "modelB_state_dict": netB.state_dict(),
        "optimizerA_state_dict": optimizerA.state_dict(),
        "optimizerB_state_dict": optimizerB.state_dict(),
    },
    BOTH,
)
ck = torch.load(BOTH)
mA, mB = Net(), Net()
oB = optim.Adam(mB.parameters(), lr=0.001)
mA.load_state_dict(ck["modelA_state_dict"])
mB.load_state_dict(ck["modelB_state_dict"])
oB.load_state_dict(ck["optimizerB_state_dict"])
print(
    "adam state keys",
    sorted(oB.state_dict()["state"][0]),
    oB.state_dict()["param_groups"][0]["lr"],
)
print("B agrees", torch.equal(mB.fc3.weight, netB.fc3.weight))


# warmstarting: a model with one extra layer, strict=False
class NetB(Net):
    def __init__(self):
        super().__init__()
        self.fc4 = nn.Linear(10, 2)

    def forward(self, x):
        return self.fc4(F.relu(super().forward(x)))


warm = NetB()
result = warm.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
try:
    NetB().load_state_dict(torch.load(PATH, weights_only=True))
except RuntimeError as e:
    print("strict refused:", str(e).splitlines()[0])
renamed = {"backbone." + k: v for k, v in net.state_dict().items()}
r = Net().load_state_dict({k[len("backbone.") :]: v for k, v in renamed.items()})
print("renamed loaded", r)
print(
    "map_location",
    torch.load(PATH, map_location=torch.device("cpu"))["fc3.bias"].device,
)

# zeroing out gradients
net = Net()
fill(net)
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for i in range(2):
    running = 0.0
    for j in range(2):
        optimizer.zero_grad()
        outputs = net(inputs[j * 2 : (j + 1) * 2])
        loss = criterion(outputs, labels[j * 2 : (j + 1) * 2])
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"[{i + 1}] running {running:.5f}")
print(
    "grad still there after step",
    net.fc3.weight.grad is None or bool((net.fc3.weight.grad == 0).all()),
)
optimizer.zero_grad()
print("set_to_none default", net.fc3.weight.grad)
loss = criterion(net(inputs), labels)
loss.backward()
g1 = net.fc3.bias.grad.clone()
loss = criterion(net(inputs), labels)
loss.backward()
print("accumulates", torch.allclose(net.fc3.bias.grad, 2 * g1))
net.zero_grad(set_to_none=False)
print("zeroed", net.fc3.bias.grad)
