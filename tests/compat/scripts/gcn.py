"""pytorch/examples gcn on a tiny Cora-like graph: the content and cites
tables read with np.genfromtxt (from memory, not files), features scaled by a
diagonal matrix, labels from np.unique(return_inverse=True), the adjacency
made with torch.sparse_coo_tensor, plus torch.eye, normalised as
D^-1/2 (A + I) D^-1/2 with inf set to 0, GraphConv layers (torch.mm, then
torch.spmm with the adjacency), log_softmax and NLLLoss on the training
indices, Adam with weight decay, and the accuracy on index masks.

compat has no sparse tensors: where to_sparse() and sparse_coo_tensor are
refused (the refusal goes to stderr), the same matrices stay dense and
torch.mm does what torch.spmm does; the printed numbers are the same either
way. The random permutation of the nodes comes from NumPy and the weights
from a formula (the random streams differ); dropout is 0."""

import io
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

torch.manual_seed(42)
V, WORDS, CLASSES = 30, 12, ("Neural_Networks", "Rule_Learning", "Theory")


def cora_tables():
    """The text of cora.content (id, word flags, class) and cora.cites."""
    content, cites = [], []
    for k in range(V):
        c = k % 3
        flags = [int((w + c * 4) % WORDS < 4 or (w * k) % 7 == 1) for w in range(WORDS)]
        content.append("\t".join([str(1000 + 7 * k), *map(str, flags), CLASSES[c]]))
    for k in range(V):
        cites.append(f"{1000 + 7 * k}\t{1000 + 7 * ((k + 3) % V)}")  # same class
        if k % 4 == 0:
            cites.append(f"{1000 + 7 * k}\t{1000 + 7 * ((k + 1) % V)}")  # another
    return "\n".join(content), "\n".join(cites)


def to_sparse(dense):
    """dense.to_sparse(), as upstream; dense where compat refuses it."""
    try:
        return dense.to_sparse()
    except NotImplementedError as e:
        print("sparse refused:", e, file=sys.stderr)
        return dense


def load_cora(device="cpu"):
    content_text, cites_text = cora_tables()
    content_tensor = np.genfromtxt(io.StringIO(content_text), dtype=np.dtype(str))
    cites_tensor = np.genfromtxt(io.StringIO(cites_text), dtype=np.int32)
    features = torch.FloatTensor(content_tensor[:, 1:-1].astype(np.int32))
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float("inf")] = 0
    scale_vector = to_sparse(torch.diag(scale_vector))
    features = scale_vector @ features
    classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)
    labels = torch.LongTensor(labels)
    idx = content_tensor[:, 0].astype(np.int32)
    idx_map = {id: pos for pos, id in enumerate(idx)}
    edges = np.array(
        list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]], cites_tensor)),
        dtype=np.int32,
    )
    E = edges.shape[0]
    try:
        adj_mat = torch.sparse_coo_tensor(
            edges.T, torch.ones(E), (V, V), dtype=torch.int64
        )
    except NotImplementedError as e:
        print("sparse refused:", e, file=sys.stderr)
        adj_mat = torch.zeros(V, V, dtype=torch.int64)
        ends = torch.from_numpy(edges.T).long()
        adj_mat.index_put_(
            (ends[0], ends[1]), torch.ones(E, dtype=torch.int64), accumulate=True
        )
    adj_mat = torch.eye(V) + adj_mat
    degree_mat = torch.sum(adj_mat, dim=1)
    degree_mat = torch.sqrt(1 / degree_mat)
    degree_mat[degree_mat == float("inf")] = 0
    degree_mat = to_sparse(torch.diag(degree_mat))
    adj_mat = degree_mat @ adj_mat @ degree_mat
    print(
        "classes",
        [str(c) for c in classes],
        "edges",
        E,
        "features",
        tuple(features.shape),
        "row sums",
        [round(v, 4) for v in features.sum(1)[:3].tolist()],
    )
    return (
        to_sparse(features).to(device),
        labels.to(device),
        to_sparse(adj_mat).to(device),
    )


class GraphConv(nn.Module):
    """Graph convolution: A X W (+ b)."""

    def __init__(self, input_dim, output_dim, use_bias=False):
        super().__init__()
        # Initialize the weight matrix W (in this case called `kernel`)
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel)
        if adj_mat.is_sparse:
            output = torch.spmm(adj_mat, support)
        else:  # compat's dense adjacency
            output = torch.mm(adj_mat, support)
        if self.bias is not None:
            output = output + self.bias
        return output


class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super().__init__()
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x)
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        return torch.log_softmax(x, dim=1)


def train_iter(
    epoch,
    model,
    optimizer,
    criterion,
    input,
    target,
    mask_train,
    mask_val,
    print_every=10,
):
    model.train()
    optimizer.zero_grad()
    output = model(*input)
    loss = criterion(output[mask_train], target[mask_train])
    loss.backward()
    optimizer.step()
    loss_train, acc_train = test(model, criterion, input, target, mask_train)
    loss_val, acc_val = test(model, criterion, input, target, mask_val)
    if epoch % print_every == 0:
        print(
            f"Epoch {epoch:04d} loss_train: {loss_train:.4f} acc_train: "
            f"{acc_train:.4f} loss_val: {loss_val:.4f} acc_val: {acc_val:.4f}"
        )


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


device = torch.device("cpu")
features, labels, adj_mat = load_cora(device=device)
dense_adj = adj_mat.to_dense()
print(
    "adjacency symmetric-normalised, diagonal",
    [round(v, 4) for v in dense_adj.diagonal()[:3].tolist()],
    "nonzero",
    int((dense_adj != 0).sum()),
)
idx = torch.from_numpy(np.random.default_rng(0).permutation(V)).to(device)
idx_test, idx_val, idx_train = idx[:8], idx[8:14], idx[14:]

gcn = GCN(features.shape[1], 16, labels.max().item() + 1, True, 0.0).to(device)
with torch.no_grad():
    for i, p in enumerate(gcn.parameters()):
        n = p.numel()
        p.copy_(
            torch.arange(n, dtype=torch.float32)
            .mul(0.47 + 0.19 * i)
            .sin()
            .mul(0.5)
            .view(p.shape)
        )
optimizer = Adam(gcn.parameters(), lr=0.05, weight_decay=5e-4)
criterion = nn.NLLLoss()
for epoch in range(40):
    train_iter(
        epoch + 1,
        gcn,
        optimizer,
        criterion,
        (features, adj_mat),
        labels,
        idx_train,
        idx_val,
        10,
    )
loss_test, acc_test = test(gcn, criterion, (features, adj_mat), labels, idx_test)
print(f"Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}")

# a boolean mask picks the same nodes as the index list
mask = torch.zeros(V, dtype=torch.bool)
mask[idx_test] = True
by_mask = test(gcn, criterion, (features, adj_mat), labels, mask)
print("mask agrees with indices", abs(by_mask[1] - acc_test) < 1e-6, int(mask.sum()))
