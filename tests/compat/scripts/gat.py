"""pytorch/examples gat on a small fixed graph: a GraphAttentionLayer with
nn.Parameter weights W and a (heads, 2 * hidden, 1), per-head source and
target scores by torch.matmul and .mT, LeakyReLU, the adjacency mask applied
with torch.where (upstream) and with masked_fill(-inf) (the same softmax),
F.softmax over neighbours, heads concatenated or averaged, ELU, log_softmax,
NLLLoss on the training split, Adam with weight decay and the accuracy on
index splits made with torch.split.

The node order comes from NumPy and the weights from a formula (the random
streams differ); dropout is kept off while values are printed."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

torch.manual_seed(13)
V, FEATURES, CLASSES = 24, 10, 3


class GraphAttentionLayer(nn.Module):
    def __init__(
        self,
        in_features,
        out_features,
        n_heads,
        concat=False,
        dropout=0.4,
        leaky_relu_slope=0.2,
    ):
        super().__init__()
        self.n_heads = n_heads
        self.concat = concat
        self.dropout = dropout
        if concat:
            self.out_features = out_features
            assert out_features % n_heads == 0
            self.n_hidden = out_features // n_heads
        else:
            self.n_hidden = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        self.softmax = nn.Softmax(dim=1)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed):
        source_scores = torch.matmul(h_transformed, self.a[:, : self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden :, :])
        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self, h, adj_mat, mask_with="where"):
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden)
        h_transformed = h_transformed.permute(1, 0, 2)
        e = self._get_attention_scores(h_transformed)
        if mask_with == "where":
            connectivity_mask = -9e16 * torch.ones_like(e)
            e = torch.where(adj_mat > 0, e, connectivity_mask)
        else:
            e = e.masked_fill(adj_mat == 0, float("-inf"))
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            h_prime = h_prime.permute(1, 0, 2).contiguous()
            h_prime = h_prime.view(n_nodes, self.out_features)
        else:
            h_prime = h_prime.mean(dim=0)
        return h_prime


class GAT(nn.Module):
    def __init__(
        self,
        in_features,
        n_hidden,
        n_heads,
        num_classes,
        concat=False,
        dropout=0.4,
        leaky_relu_slope=0.2,
    ):
        super().__init__()
        self.gat1 = GraphAttentionLayer(
            in_features, n_hidden, n_heads, concat, dropout, leaky_relu_slope
        )
        self.gat2 = GraphAttentionLayer(
            n_hidden, num_classes, 1, False, dropout, leaky_relu_slope
        )

    def forward(self, input_tensor, adj_mat, mask_with="where"):
        x = self.gat1(input_tensor, adj_mat, mask_with)
        x = F.elu(x)
        x = self.gat2(x, adj_mat, mask_with)
        return F.log_softmax(x, dim=1)


def load_graph():
    """Features, labels and an adjacency with self-loops, as load_cora's."""
    labels = torch.arange(V) % CLASSES
    k = torch.arange(V * FEATURES, dtype=torch.float32).view(V, FEATURES)
    features = ((k * 0.37).sin() > 0.3).float()
    features[torch.arange(V), labels * 3] = 1.0
    features = features / features.sum(dim=1, keepdim=True)
    edges = [[i, (i + CLASSES) % V] for i in range(V)]
    edges += [[i, (i + 1) % V] for i in range(0, V, 4)]
    edges = torch.tensor(edges).T
    adj_mat = torch.zeros(V, V, dtype=torch.int64)
    adj_mat[edges[0], edges[1]] = 1
    adj_mat[edges[1], edges[0]] = 1
    adj_mat = torch.eye(V) + adj_mat
    return features, labels, adj_mat


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float32)
                .mul(0.53 + 0.17 * i)
                .sin()
                .mul(0.6)
                .view(p.shape)
            )


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


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


features, labels, adj_mat = load_graph()
print(
    "graph",
    tuple(features.shape),
    adj_mat.dtype,
    int((adj_mat > 0).sum()),
    labels.bincount().tolist(),
)
gat_net = GAT(FEATURES, 8, 4, CLASSES, concat=True, dropout=0.0)
fill(gat_net)
print("params", [(n, tuple(p.shape)) for n, p in gat_net.named_parameters()])
optimizer = Adam(gat_net.parameters(), lr=0.01, weight_decay=5e-4)
criterion = nn.NLLLoss()

indices = torch.from_numpy(np.random.default_rng(1).permutation(V))
idx_test, idx_val, idx_train = torch.split(indices, [6, 6, V - 12])
print("splits", [len(s) for s in (idx_test, idx_val, idx_train)])

gat_net.eval()
with torch.no_grad():
    by_where = gat_net(features, adj_mat)
    by_fill = gat_net(features, adj_mat, "fill")
    print(
        "masks agree",
        torch.allclose(by_where, by_fill, atol=1e-6),
        [round(v, 4) for v in by_where[0].tolist()],
    )
    h = torch.mm(features, gat_net.gat1.W).view(V, 4, 2).permute(1, 0, 2)
    e = gat_net.gat1._get_attention_scores(h)
    att = F.softmax(e.masked_fill(adj_mat == 0, float("-inf")), dim=-1)
    print(
        "attention",
        tuple(att.shape),
        "rows sum to 1",
        torch.allclose(att.sum(-1), torch.ones(4, V)),
        "zero off the graph",
        bool((att[:, adj_mat == 0] == 0).all()),
    )

for epoch in range(30):
    train_iter(
        epoch + 1,
        gat_net,
        optimizer,
        criterion,
        (features, adj_mat),
        labels,
        idx_train,
        idx_val,
        10,
    )
loss_test, acc_test = test(gat_net, criterion, (features, adj_mat), labels, idx_test)
print(f"Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}")
print(
    "adam state",
    sorted(optimizer.state[gat_net.gat1.a]),
    optimizer.state[gat_net.gat1.a]["step"].item(),
)

# a head-averaging layer gives the mean of the concatenated heads' outputs
avg = GraphAttentionLayer(FEATURES, 2, 4, concat=False, dropout=0.0)
cat = GraphAttentionLayer(FEATURES, 8, 4, concat=True, dropout=0.0)
fill(avg)
cat.load_state_dict(avg.state_dict())
with torch.no_grad():
    mean_heads = cat(features, adj_mat).view(V, 4, 2).mean(1)
    print(
        "head mean agrees",
        torch.allclose(avg(features, adj_mat), mean_heads, atol=1e-6),
    )

# dropout in train mode zeroes attention weights and scales the rest
drop = GAT(FEATURES, 8, 4, CLASSES, concat=True, dropout=0.5)
drop.train()
out = drop(features, adj_mat)
print("train-mode output", tuple(out.shape), out.grad_fn.name())
