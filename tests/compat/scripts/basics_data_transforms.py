"""Learn the Basics, data's and transforms' calls: FashionMNIST indexed at
torch.randint(len(data), size=(1,)).item(), img.squeeze() shown with
matplotlib, a custom Dataset of image files, DataLoader batches, and a
one-hot target_transform Lambda with scatter_."""

import csv
import os

import matplotlib.pyplot as plt
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import datasets
from torchvision.transforms import Lambda, ToTensor

training_data = datasets.FashionMNIST(
    root="data", train=True, download=True, transform=ToTensor()
)
test_data = datasets.FashionMNIST(
    root="data", train=False, download=True, transform=ToTensor()
)
labels_map = {0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress",
              4: "Coat", 5: "Sandal", 6: "Shirt", 7: "Sneaker", 8: "Bag",
              9: "Ankle Boot"}  # fmt: skip
figure = plt.figure(figsize=(8, 8))
cols, rows = 3, 3
for i in range(1, cols * rows + 1):
    sample_idx = torch.randint(len(training_data), size=(1,)).item()
    img, label = training_data[sample_idx]
    figure.add_subplot(rows, cols, i)
    plt.title(labels_map[label])
    plt.axis("off")
    plt.imshow(img.squeeze(), cmap="gray")
plt.savefig("samples.png")
print("sample image:", img.shape, img.dtype, type(label).__name__)


class CustomImageDataset(Dataset):
    def __init__(
        self, annotations_file, img_dir, transform=None, target_transform=None
    ):
        with open(annotations_file) as f:
            self.img_labels = [(name, int(y)) for name, y in csv.reader(f)]
        self.img_dir = img_dir
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        img_path = os.path.join(self.img_dir, self.img_labels[idx][0])
        image = Image.open(img_path)
        label = self.img_labels[idx][1]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


os.makedirs("images", exist_ok=True)
with open("labels.csv", "w", newline="") as f:
    writer = csv.writer(f)
    for k in range(6):
        pixels = (np.arange(28 * 28).reshape(28, 28) * (k + 1)) % 256
        Image.fromarray(pixels.astype(np.uint8)).save(f"images/{k}.png")
        writer.writerow([f"{k}.png", k % 3])
custom = CustomImageDataset("labels.csv", "images", transform=ToTensor())
print("custom dataset:", len(custom), custom[4][0].shape, custom[4][1])

train_dataloader = DataLoader(training_data, batch_size=16, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=16, shuffle=True)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
img = train_features[0].squeeze()
label = train_labels[0]
plt.imshow(img, cmap="gray")
plt.savefig("one.png")
print(f"Label in range: {0 <= label.item() < 10}")
custom_loader = DataLoader(custom, batch_size=4)
print("custom batch:", [tuple(t.shape) for t in next(iter(custom_loader))])

ds = datasets.FashionMNIST(
    root="data",
    train=True,
    download=True,
    transform=ToTensor(),
    target_transform=Lambda(
        lambda y: torch.zeros(10, dtype=torch.float).scatter_(
            0, torch.tensor(y), value=1
        )
    ),
)
image, target = ds[3]
print("one-hot target:", target)
print("image range:", image.min().item() >= 0.0, image.max().item() <= 1.0)
