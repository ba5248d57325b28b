"""Data parallelism: a Dataset of random rows, DataLoader, and nn.DataParallel
when more than one GPU is there."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

where = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Noise(Dataset):
    def __init__(self, width, count):
        self.rows = torch.randn(count, width)

    def __getitem__(self, i):
        return self.rows[i]

    def __len__(self):
        return len(self.rows)


class Head(nn.Module):
    def __init__(self, width, out):
        super().__init__()
        self.fc = nn.Linear(width, out)

    def forward(self, x):
        y = self.fc(x)
        print("\tinside:", x.size(), y.size())
        return y


loader = DataLoader(dataset=Noise(6, 70), batch_size=25, shuffle=True)
model = Head(6, 3)
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
model.to(where)
for rows in loader:
    rows = rows.to(where)
    print("outside:", rows.size(), model(rows).size())
