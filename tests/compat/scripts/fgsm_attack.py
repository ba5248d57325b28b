"""Adversarial examples in the shape of the FGSM tutorial (pytorch/tutorials
beginner_source/fgsm_tutorial.py): a small LeNet-like classifier trained briefly,
then put in eval mode (dropout off); the loss's gradient with respect to the
input image (requires_grad on data, model.zero_grad(), data.grad.data), the
fast gradient sign step (sign, clamp to the valid range) and accuracy as epsilon
grows, with the tutorial's denormalize/renormalize of the perturbed image."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(42)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def fill(model, scale=0.3):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(2.39 + 0.7 * i).cos()
                    .mul(scale).view(p.shape))  # fmt: skip


# Three classes of 12x12 "images" in [0, 1]: a bar across, a bar down, a diagonal.
ramp = torch.linspace(0.2, 0.8, 12)
images, labels = [], []
for k in range(24):
    base = torch.zeros(12, 12) + 0.05 * (k % 4)
    row = 2 + k % 8
    if k % 3 == 0:
        base[row] = ramp
    elif k % 3 == 1:
        base[:, row] = ramp
    else:
        base = base + torch.eye(12).roll(k % 5 - 2, dims=1) * 0.7
    images.append(base.clamp(0, 1).unsqueeze(0))
    labels.append(k % 3)
data_all = torch.stack(images)
target_all = torch.tensor(labels)
MEAN, STD = 0.1307, 0.3081
print("data", tuple(data_all.shape), round(data_all.min().item(), 2),
      round(data_all.max().item(), 2))  # fmt: skip

model = Net()
fill(model)
optimizer = optim.Adam(model.parameters(), lr=0.01)
# The tutorial loads a pretrained model; a brief training stands in for it, with
# dropout off (eval mode) so that PyTorch and compat, whose random streams
# differ, train the same weights.
model.eval()
for _step in range(25):
    optimizer.zero_grad()
    loss = F.nll_loss(model((data_all - MEAN) / STD), target_all)
    loss.backward()
    optimizer.step()
print("train loss", round(loss.item(), 3), "small", loss.item() < 0.35)

model.train()
with torch.no_grad():
    x = (data_all[:4] - MEAN) / STD
    print("train mode: dropout varies", not torch.equal(model(x), model(x)))
model.eval()  # dropout off, as the tutorial's attack runs
with torch.no_grad():
    print("eval mode: repeatable", torch.equal(model(x), model(x)))


def fgsm_attack(image, epsilon, data_grad):
    sign_data_grad = data_grad.sign()
    perturbed_image = image + epsilon * sign_data_grad
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    return perturbed_image


def denorm(batch, mean=(MEAN,), std=(STD,)):
    mean = torch.tensor(mean).view(1, -1, 1, 1)
    std = torch.tensor(std).view(1, -1, 1, 1)
    return batch * std + mean


def test(model, epsilon):
    correct = 0
    adv_examples = []
    for i in range(len(data_all)):
        data = ((data_all[i : i + 1] - MEAN) / STD).clone()
        target = target_all[i : i + 1]
        data.requires_grad = True
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1]
        if init_pred.item() != target.item():
            continue
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = data.grad.data
        data_denorm = denorm(data)
        perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
        perturbed_data_normalized = (perturbed_data - MEAN) / STD
        output = model(perturbed_data_normalized)
        final_pred = output.max(1, keepdim=True)[1]
        if final_pred.item() == target.item():
            correct += 1
        elif len(adv_examples) < 2:
            adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
            adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
    final_acc = correct / float(len(data_all))
    print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(data_all)}")
    return final_acc, adv_examples


accuracies = []
for eps in [0, 0.1, 0.3]:
    acc, ex = test(model, eps)
    accuracies.append(acc)
    if ex:
        print("adversarial example", ex[0][:2], ex[0][2].shape, ex[0][2].dtype)
print("accuracy falls with epsilon", accuracies[0] >= accuracies[-1])

# The gradient the attack uses, checked on one image.
x = ((data_all[:1] - MEAN) / STD).requires_grad_()
F.nll_loss(model(x), target_all[:1]).backward()
print("grad shape", tuple(x.grad.shape), "sign values",
      sorted({int(v) for v in x.grad.sign().unique().tolist()}))  # fmt: skip
print(
    "backward fills the weights too",
    all(p.grad is not None for p in model.parameters()),
)
