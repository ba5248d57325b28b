"""Tensors: creation, the NumPy bridge, devices, indexing, joining, arithmetic."""

import numpy as np
import torch

rows = [[5, 6], [7, 8]]
from_list = torch.tensor(rows)
from_array = torch.from_numpy(np.array(rows))
print("like:", torch.ones_like(from_list), torch.zeros_like(from_array))
print("random dtype:", torch.rand_like(from_list, dtype=torch.float).dtype)
size = (3, 2)
for make in (torch.rand, torch.ones, torch.zeros):
    print(make.__name__, make(size).shape)
grid = torch.rand(2, 5)
print(f"shape {grid.shape}, dtype {grid.dtype}, device {grid.device}")
if torch.accelerator.is_available():
    grid = grid.to(torch.accelerator.current_accelerator())
grid = torch.ones(3, 3)
grid[:, 2] = 0
print(grid[1], grid[:, 1], grid[..., -1])
print(torch.cat([grid, grid], dim=0).shape, torch.stack([grid, grid]).shape)
product = grid @ grid.T
same = grid.matmul(grid.T)
out = torch.rand_like(product)
torch.matmul(grid, grid.T, out=out)
print("matmul agree:", torch.equal(product, same), torch.equal(product, out))
square = torch.rand_like(grid)
torch.mul(grid, grid, out=square)
print(
    "mul agree:", torch.equal(square, grid * grid), torch.equal(square, grid.mul(grid))
)
total = grid.sum()
print(total.item(), type(total.item()).__name__)
grid.add_(2)
print(grid)
shared = torch.ones(4)
view = shared.numpy()
shared.add_(3)
print("numpy sees the add:", view)
array = np.zeros(4)
bridged = torch.from_numpy(array)
np.add(array, 2, out=array)
print("tensor sees numpy:", bridged)
