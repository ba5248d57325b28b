"""Parametrizations in the shape of the parametrizations tutorial
(pytorch/tutorials intermediate_source/parametrizations.py): a Symmetric and a
Skew module registered on a Linear's weight with
parametrize.register_parametrization, the module's class swapped and its
``parametrizations.weight.original``, two parametrizations chained, the matrix
exponential of a skew matrix (an orthogonal weight), parametrize.cached(), a
right_inverse used when the weight is assigned, and
remove_parametrizations with and without leave_parametrized."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize

torch.manual_seed(0)


def fill(module, scale=0.5):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(1.3 + 0.5 * i).cos()
                    .mul(scale).view(p.shape))  # fmt: skip


def rounded(t, d=4):
    return [round(v, d) for v in t.flatten().tolist()]


def symmetric(X):
    return X.triu() + X.triu(1).transpose(-1, -2)


X = torch.arange(9.0).view(3, 3)
A = symmetric(X)
print("symmetric", torch.allclose(A, A.T), A.tolist())


class LinearSymmetric(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(n_features, n_features))

    def forward(self, x):
        A = symmetric(self.weight)
        return x @ A


layer = LinearSymmetric(3)
out = layer(torch.rand(8, 3))
print("by hand", tuple(out.shape))


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
fill(layer)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
print("layer weight symmetric", torch.allclose(A, A.T), rounded(A))
print(layer)
print("class", type(layer).__name__,
      parametrize.type_before_parametrizations(layer).__name__)  # fmt: skip
print("state_dict", list(layer.state_dict()))


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
fill(cnn)
parametrize.register_parametrization(cnn, "weight", Skew())
# Print a few kernels
print("skew kernels", rounded(cnn.weight[0, 1]), rounded(cnn.weight[2, 2]))

layer = nn.Linear(3, 3)
fill(layer)
print(f"Unparametrized:\n{layer}")
parametrize.register_parametrization(layer, "weight", Symmetric())
print(f"\nParametrized:\n{layer}")
parametrized_weight = layer.parametrizations.weight
print(parametrized_weight)
for module in parametrized_weight:  # it is a ModuleList
    print(module)
print("original", rounded(layer.parametrizations.weight.original))
print("original is triu-filled", torch.dist(layer.weight,
      symmetric(layer.parametrizations.weight.original)).item())  # fmt: skip


class NoisyParametrization(nn.Module):
    def forward(self, X):
        print("Computing the Parametrization")
        return X


layer = nn.Linear(4, 4)
parametrize.register_parametrization(layer, "weight", NoisyParametrization())
print("Here, layer.weight is recomputed every time we call it")
foo = layer.weight + layer.weight.T
bar = layer.weight.sum()
with parametrize.cached():
    print("Here, it is computed just the first time layer.weight is called")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # (I + X)(I - X)^{-1}
        return torch.linalg.solve(self.Id - X, self.Id + X)


layer = nn.Linear(3, 3)
fill(layer, 0.3)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.register_parametrization(layer, "weight", CayleyMap(3))
X = layer.weight
print("cayley orthogonal", torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


layer_orthogonal = nn.Linear(3, 3)
fill(layer_orthogonal, 0.3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print("expm orthogonal", torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5,
      rounded(X))  # fmt: skip
layer_spd = nn.Linear(3, 3)
fill(layer_spd, 0.3)
parametrize.register_parametrization(layer_spd, "weight", Symmetric())
parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
X = layer_spd.weight
print("expm spd", torch.dist(X, X.T).item() < 1e-6,
      (torch.linalg.eigvalsh(X) > 0.0).all().item())  # fmt: skip

# The parametrized layer trains: the gradient reaches the original.
opt = torch.optim.SGD(layer_orthogonal.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).view(4, 3)
for step in range(3):
    opt.zero_grad()
    loss = (layer_orthogonal(x) - x.flip(0)).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
X = layer_orthogonal.weight
print("still orthogonal", torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5)
print("grad on original",
      tuple(layer_orthogonal.parametrizations.weight.original.grad.shape))  # fmt: skip


class Symmetric2(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


layer = nn.Linear(3, 3)
fill(layer)
parametrize.register_parametrization(layer, "weight", Symmetric2())
print("original is triu", torch.allclose(layer.parametrizations.weight.original,
      layer.parametrizations.weight.original.triu()))  # fmt: skip
X = torch.rand(3, 3)
X = X + X.T  # X is now symmetric
layer.weight = X  # Initialize layer.weight to be X
print("assigned", torch.allclose(layer.weight, X))


class NotKnownToBeInvertible(nn.Module):
    def forward(self, X):
        return X


layer = nn.Linear(3, 3)
fill(layer)
parametrize.register_parametrization(layer, "weight", NotKnownToBeInvertible())
try:
    layer.weight = torch.rand(3, 3)
except RuntimeError as e:  # the tutorial's NotImplementedError in older PyTorch
    print("RuntimeError", str(e).splitlines()[0])

layer = nn.Linear(3, 3)
fill(layer)
print("Before:")
print(layer)
print(rounded(layer.weight))
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(rounded(layer.weight))
parametrize.remove_parametrizations(layer, "weight")
print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
print(layer)
print(rounded(layer.weight))

layer = nn.Linear(3, 3)
fill(layer)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
print("\nAfter. Same as Before:")
print(layer)
print(rounded(layer.weight))
