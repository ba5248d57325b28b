"""Three recipes of pytorch/tutorials recipes_source/recipes/, as written:
"Defining a Neural Network in PyTorch" (Conv2d, Dropout2d, F.max_pool2d,
torch.flatten, log_softmax on one 28x28 image), "Warmstarting model using
parameters from a different model" (NetA's state_dict saved and loaded into
NetB with strict=False, the result printed; then the partial and renamed
cases the recipe describes) and "Zeroing out gradients in PyTorch" (the
training loop with optimizer.zero_grad(), and what each way of zeroing
leaves in .grad). The recipes' random inputs and CIFAR-10 are replaced by
values from a formula, and so are the weights; the Dropout2d layers print
only in eval mode or as shapes (the random streams differ)."""

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def fill(model, k=0.05):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_((torch.arange(p.numel(), dtype=torch.float32).remainder(11) - 5)
                    .mul(k / (i + 1)).view(p.shape))  # fmt: skip


# -- Defining a Neural Network ------------------------------------------------------


class Net(nn.Module):
    def __init__(self):
        super().__init__()

        # First 2D convolutional layer, taking in 1 input channel (image),
        # outputting 32 convolutional features, with a square kernel size of 3
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        # Second 2D convolutional layer, taking in the 32 input layers,
        # outputting 64 convolutional features, with a square kernel size of 3
        self.conv2 = nn.Conv2d(32, 64, 3, 1)

        # Designed to ensure that adjacent pixels are either all 0s or all active
        # with an input probability
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)

        # First fully connected layer
        self.fc1 = nn.Linear(9216, 128)
        # Second fully connected layer that outputs our 10 labels
        self.fc2 = nn.Linear(128, 10)

    # x represents our data
    def forward(self, x):
        # Pass data through conv1
        x = self.conv1(x)
        # Use the rectified-linear activation function over x
        x = F.relu(x)

        x = self.conv2(x)
        x = F.relu(x)

        # Run max pooling over x
        x = F.max_pool2d(x, 2)
        # Pass data through dropout1
        x = self.dropout1(x)
        # Flatten x with start_dim=1
        x = torch.flatten(x, 1)
        # Pass data through ``fc1``
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)

        # Apply softmax to x
        output = F.log_softmax(x, dim=1)
        return output


my_nn = Net()
print(my_nn)
fill(my_nn, 0.01)
# the recipe: random_data = torch.rand((1, 1, 28, 28))
random_data = torch.linspace(0, 1, 28 * 28).view(1, 1, 28, 28).mul(7).sin().abs()
result = my_nn(random_data)
one = bool(torch.isclose(result.exp().sum(), torch.tensor(1.0)))
print("train mode", tuple(result.shape), result.grad_fn.name(), "sums to 1", one)
my_nn.eval()
result = my_nn(random_data)
print([round(v, 4) for v in result[0].tolist()])

# -- Warmstarting model using parameters from a different model ---------------------


class NetA(nn.Module):
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


netA = NetA()
fill(netA)


class NetB(nn.Module):
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


netB = NetB()

# Specify a path to save to
tmp = tempfile.mkdtemp()
PATH = os.path.join(tmp, "model.pt")
torch.save(netA.state_dict(), PATH)
print(netB.load_state_dict(torch.load(PATH, weights_only=True), strict=False))
x = torch.linspace(-1, 1, 2 * 3 * 32 * 32).view(2, 3, 32, 32).cos()
print("netB now predicts as netA", torch.equal(netB(x), netA(x)))


class NetC(NetB):
    """A model that shares some layers: a new head, one layer fewer."""

    def __init__(self):
        super().__init__()
        del self.fc3
        self.head = nn.Linear(84, 4)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = F.relu(self.fc2(F.relu(self.fc1(torch.flatten(x, 1)))))
        return self.head(x)


netC = NetC()
result = netC.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print(result)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
print("as a tuple", list(result), result == (["head.weight", "head.bias"],
      ["fc3.weight", "fc3.bias"]))  # fmt: skip
print("conv1 copied", torch.equal(netC.conv1.weight, netA.conv1.weight))

wrong = NetB()
wrong.fc3 = nn.Linear(84, 5)
try:
    wrong.load_state_dict(netA.state_dict(), strict=False)
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])
    print(str(e).splitlines()[1].strip())
try:
    NetC().load_state_dict(netA.state_dict())
except RuntimeError as e:
    lines = str(e).splitlines()
    print("strict", lines[0])
    print([line.strip()[:40] for line in lines[1:]])

# the recipe's remedy when keys differ: edit the dictionary before loading
state = netA.state_dict()
renamed = {k.replace("fc3", "head") if k.startswith("fc3") else k: v
           for k, v in state.items()}  # fmt: skip
renamed["head.weight"] = renamed["head.weight"][:4]
renamed["head.bias"] = renamed["head.bias"][:4]
netC = NetC()
print("renamed", netC.load_state_dict(renamed), tuple(netC(x).shape))

# -- Zeroing out gradients ----------------------------------------------------------

net = NetA()
fill(net)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
inputs_all = torch.linspace(-1, 1, 8 * 3 * 32 * 32).view(8, 3, 32, 32).mul(5).sin()
labels_all = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7])
trainloader = [(inputs_all[i : i + 2], labels_all[i : i + 2]) for i in range(0, 8, 2)]

for epoch in range(2):
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 2 == 1:
            print("[%d, %5d] loss: %.4f" % (epoch + 1, i + 1, running_loss / 2))  # noqa: UP031
            running_loss = 0.0
print("Finished Training")

# what each way of zeroing leaves behind
w = net.fc3.weight
print("after step", w.grad is not None)
optimizer.zero_grad()
print("zero_grad()", w.grad)
criterion(net(inputs_all[:2]), labels_all[:2]).backward()
g = w.grad.clone()
optimizer.zero_grad(set_to_none=False)
zeros = bool((w.grad == 0).all())
print("set_to_none=False", w.grad.shape, zeros, w.grad.requires_grad)
criterion(net(inputs_all[:2]), labels_all[:2]).backward()
print("fresh grad equals first", torch.equal(w.grad, g))
net.zero_grad()
print("net.zero_grad()", w.grad, net.fc1.bias.grad)
criterion(net(inputs_all[:2]), labels_all[:2]).backward()
criterion(net(inputs_all[:2]), labels_all[:2]).backward()
print("two backwards accumulate", torch.allclose(w.grad, 2 * g))
for p in net.parameters():
    p.grad = None
print("grad = None", all(p.grad is None for p in net.parameters()))
criterion(net(inputs_all[:2]), labels_all[:2]).backward()
w.grad.zero_()
bias_kept = net.fc3.bias.grad.abs().sum().item() > 0
print("grad.zero_()", w.grad.abs().sum().item(), bias_kept)
w.grad.detach_().requires_grad_(False)
print("detach_ then zero", w.grad.zero_().is_leaf)
