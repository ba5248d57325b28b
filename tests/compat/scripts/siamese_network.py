"""pytorch/examples siamese_network on in-memory digits: a Dataset that returns
pairs (same class: target 1, different: target 0) chosen with Python's random,
a ResNet-style tower whose first convolution is replaced for one channel and
whose children but the last become an nn.Sequential, shared by both inputs
(forward_once), the two embeddings concatenated into an MLP and a Sigmoid,
weights initialised with .apply (xavier_uniform_, bias.data.fill_), BCELoss,
Adadelta with StepLR, and predictions with torch.where(outputs > 0.5, 1, 0).
The torchvision resnet18 and MNIST of upstream are replaced by a small ResNet
and pictures drawn from a formula; weights are set from a formula too."""

import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(1)
random.seed(1)


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class TinyResNet(nn.Module):
    """torchvision's resnet18 in miniature: the same children, in order."""

    def __init__(self, width=8, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = nn.Sequential(BasicBlock(width))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width, num_classes)


class SiameseNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.resnet = TinyResNet()
        # over-write the first conv layer to be able to read MNIST images
        self.resnet.conv1 = nn.Conv2d(
            1, 8, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False
        )
        self.fc_in_features = self.resnet.fc.in_features
        # remove the last layer of resnet (the linear layer before avgpool)
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 16),
            nn.ReLU(inplace=True),
            nn.Linear(16, 1),
        )
        self.sigmoid = nn.Sigmoid()
        self.resnet.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.resnet(x)
        output = output.view(output.size()[0], -1)
        return output

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        output = self.fc(output)
        output = self.sigmoid(output)
        return output


def digits(n, seed):
    """n 12x12 uint8 pictures: each class a bar at its own angle, plus noise."""
    rng = np.random.default_rng(seed)
    targets = np.arange(n) % 10
    yy, xx = np.mgrid[0:12, 0:12] - 5.5
    images = []
    for t in targets:
        angle = np.pi * t / 10
        dist = np.abs(xx * np.sin(angle) - yy * np.cos(angle))
        img = 255 * np.exp(-dist) + rng.uniform(0, 40, (12, 12))
        images.append(np.clip(img, 0, 255).astype(np.uint8))
    return torch.from_numpy(np.stack(images)), torch.from_numpy(targets)


class APP_MATCHER(Dataset):
    def __init__(self, train):
        super().__init__()
        images, targets = digits(40 if train else 20, 0 if train else 1)
        self.targets = targets
        self.data = images.unsqueeze(1).clone()  # (N, 1, 12, 12)
        self.group_examples()

    def group_examples(self):
        np_arr = np.array(self.targets.clone())
        self.grouped_examples = {}
        for i in range(0, 10):
            self.grouped_examples[i] = np.where(np_arr == i)[0]

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        # pick some random class for the first image
        selected_class = random.randint(0, 9)
        random_index_1 = random.randint(
            0, self.grouped_examples[selected_class].shape[0] - 1
        )
        index_1 = self.grouped_examples[selected_class][random_index_1]
        image_1 = self.data[index_1].clone().float()
        if index % 2 == 0:  # same class
            random_index_2 = random.randint(
                0, self.grouped_examples[selected_class].shape[0] - 1
            )
            while random_index_2 == random_index_1:
                random_index_2 = random.randint(
                    0, self.grouped_examples[selected_class].shape[0] - 1
                )
            index_2 = self.grouped_examples[selected_class][random_index_2]
            image_2 = self.data[index_2].clone().float()
            target = torch.tensor(1, dtype=torch.float)
        else:  # a different class
            other_selected_class = random.randint(0, 9)
            while other_selected_class == selected_class:
                other_selected_class = random.randint(0, 9)
            random_index_2 = random.randint(
                0, self.grouped_examples[other_selected_class].shape[0] - 1
            )
            index_2 = self.grouped_examples[other_selected_class][random_index_2]
            image_2 = self.data[index_2].clone().float()
            target = torch.tensor(0, dtype=torch.float)
        return image_1 / 255.0, image_2 / 255.0, target


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    # we aren't using `TripletLoss` as the MNIST dataset is simple
    criterion = nn.BCELoss()
    for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
        images_1, images_2 = images_1.to(device), images_2.to(device)
        targets = targets.to(device)
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        if batch_idx % 2 == 0:
            print(
                f"Train Epoch: {epoch} [{batch_idx * len(images_1)}/"
                f"{len(train_loader.dataset)} "
                f"({100.0 * batch_idx / len(train_loader):.0f}%)]\t"
                f"Loss: {loss.item():.4f}"
            )


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    criterion = nn.BCELoss()
    with torch.no_grad():
        for images_1, images_2, targets in test_loader:
            images_1, images_2 = images_1.to(device), images_2.to(device)
            targets = targets.to(device)
            outputs = model(images_1, images_2).squeeze()
            test_loss += criterion(outputs, targets).sum().item()  # batch sum
            pred = torch.where(outputs > 0.5, 1, 0)  # 0.5 is the threshold
            correct += pred.eq(targets.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(
        f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/"
        f"{len(test_loader.dataset)} "
        f"({100.0 * correct / len(test_loader.dataset):.0f}%)"
    )
    return pred


device = torch.device("cpu")
train_dataset = APP_MATCHER(train=True)
test_dataset = APP_MATCHER(train=False)
train_loader = DataLoader(train_dataset, batch_size=8)
test_loader = DataLoader(test_dataset, batch_size=10)
im1, im2, t = train_dataset[0]
print(
    "pair",
    tuple(im1.shape),
    im1.dtype,
    t.item(),
    t.dtype,
    "groups",
    [len(train_dataset.grouped_examples[i]) for i in range(3)],
)

model = SiameseNetwork().to(device)
print(model.resnet[0], len(model.resnet), type(model.resnet[-1]).__name__)
print("fc bias filled", model.fc[0].bias[:3].tolist())
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        if p.dim() > 1:  # BatchNorm keeps its ones and zeros
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float32)
                .mul(0.41 + 0.23 * i)
                .sin()
                .mul(0.4)
                .view(p.shape)
            )
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 4):
    train(model, device, train_loader, optimizer, epoch)
    pred = test(model, device, test_loader)
    scheduler.step()
    print("lr", round(scheduler.get_last_lr()[0], 6))
print("pred", pred.dtype, tuple(pred.shape))
bn = model.resnet[1]
print(
    "bn tracked",
    bn.num_batches_tracked.item(),
    "running mean",
    [round(v, 4) for v in bn.running_mean[:3].tolist()],
)

# BCEWithLogitsLoss on the logits is BCELoss on the sigmoid
x1, x2, targets = next(iter(test_loader))
with torch.no_grad():
    logits = model.fc(torch.cat((model.forward_once(x1), model.forward_once(x2)), 1))
    a = nn.BCEWithLogitsLoss()(logits.squeeze(), targets)
    b = nn.BCELoss()(torch.sigmoid(logits).squeeze(), targets)
    c = F.binary_cross_entropy_with_logits(
        logits.squeeze(), targets, pos_weight=torch.tensor(2.0)
    )
print(
    "with logits agrees",
    abs(a.item() - b.item()) < 1e-5,
    "pos_weight raises it",
    c.item() > a.item(),
)
