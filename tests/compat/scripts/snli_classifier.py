# ruff: noqa: UP008, UP032, B007 -- upstream's idioms, kept
"""pytorch/examples snli (model.py, train.py) on a tiny made-up entailment
set: the Bottle mixin that folds (time, batch) into one batch dimension for
nn.Linear, nn.Embedding with a padding_idx, a bidirectional LSTM encoder
started from new_zeros states, the encoding as the last states of both
directions (upstream's) or the max over time of the outputs (the
InferSent-style variant), an MLP classifier with BatchNorm1d and Dropout,
CrossEntropyLoss, Adam, clip_grad_norm_, accuracy by
``(torch.max(answer, 1)[1].view(label.size()) == label).sum().item()``, dev
evaluation under no_grad and the best model's snapshot. torchtext's SNLI
iterators and GloVe vectors become lists of padded batches and a formula;
dropout is 0 where values are printed, and the snapshot saves the
state_dict where upstream pickles the whole model."""

import glob
import os
import tempfile
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.optim as O


class Bottle(nn.Module):
    def forward(self, input):
        if len(input.size()) <= 2:
            return super(Bottle, self).forward(input)
        size = input.size()[:2]
        out = super(Bottle, self).forward(input.view(size[0] * size[1], -1))
        return out.view(size[0], size[1], -1)


class Linear(Bottle, nn.Linear):
    pass


class Encoder(nn.Module):
    def __init__(self, config):
        super(Encoder, self).__init__()
        self.config = config
        input_size = config.d_proj if config.projection else config.d_embed
        dropout = 0 if config.n_layers == 1 else config.dp_ratio
        self.rnn = nn.LSTM(
            input_size=input_size,
            hidden_size=config.d_hidden,
            num_layers=config.n_layers,
            dropout=dropout,
            bidirectional=config.birnn,
        )

    def forward(self, inputs):
        batch_size = inputs.size()[1]
        state_shape = self.config.n_cells, batch_size, self.config.d_hidden
        h0 = c0 = inputs.new_zeros(state_shape)
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        if self.config.pool == "max":  # max over time of both directions
            return torch.max(outputs, 0)[0]
        return (
            ht[-1]
            if not self.config.birnn
            else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)
        )


class SNLIClassifier(nn.Module):
    def __init__(self, config):
        super(SNLIClassifier, self).__init__()
        self.config = config
        self.embed = nn.Embedding(config.n_embed, config.d_embed, padding_idx=1)
        self.projection = Linear(config.d_embed, config.d_proj)
        self.encoder = Encoder(config)
        self.dropout = nn.Dropout(p=config.dp_ratio)
        self.relu = nn.ReLU()
        seq_in_size = 2 * config.d_hidden
        if self.config.birnn:
            seq_in_size *= 2
        lin_config = [seq_in_size] * 2
        # BatchNorm1d first: after a Linear its bias would get gradients of
        # rounding noise only, which Adam scales up to steps of lr
        self.out = nn.Sequential(
            nn.BatchNorm1d(seq_in_size),
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(seq_in_size, config.d_out),
        )

    def forward(self, batch):
        prem_embed = self.embed(batch.premise)
        hypo_embed = self.embed(batch.hypothesis)
        if self.config.fix_emb:
            prem_embed = prem_embed.detach()
            hypo_embed = hypo_embed.detach()
        if self.config.projection:
            prem_embed = self.relu(self.projection(prem_embed))
            hypo_embed = self.relu(self.projection(hypo_embed))
        premise = self.encoder(prem_embed)
        hypothesis = self.encoder(hypo_embed)
        scores = self.out(torch.cat([premise, hypothesis], 1))
        return scores


# the data: sentences of word ids (0 <unk>, 1 <pad>), label 0 entailment,
# 1 contradiction, 2 neutral, decided by the words the pair shares
def sentence(k, length):
    return [2 + (k * 5 + j * 3) % 14 for j in range(length)]


def examples(n, seed):
    out = []
    for k in range(n):
        prem = sentence(k + seed, 3 + (k + seed) % 4)
        label = (k + seed) % 3
        if label == 0:
            hypo = prem[: 2 + k % 2]
        elif label == 1:
            hypo = [w + 1 if w < 15 else 2 for w in prem[:3]]
        else:
            hypo = prem[:1] + sentence(k + 7, 2)
        out.append((prem, hypo, label))
    return out


def batches(data, batch_size):
    """torchtext's BucketIterator's batches: (time, batch) word ids padded
    with 1, and labels."""
    out = []
    for i in range(0, len(data), batch_size):
        chunk = data[i : i + batch_size]

        def pad(seqs):
            width = max(len(s) for s in seqs)
            return torch.tensor([s + [1] * (width - len(s)) for s in seqs]).t()

        out.append(
            SimpleNamespace(
                premise=pad([c[0] for c in chunk]),
                hypothesis=pad([c[1] for c in chunk]),
                label=torch.tensor([c[2] for c in chunk]),
                batch_size=len(chunk),
            )
        )
    return out


train_iter = batches(examples(48, 0), 8)
dev = examples(12, 100)
dev_iter = batches(dev, 6)
print(
    "batch",
    tuple(train_iter[0].premise.shape),
    tuple(train_iter[0].hypothesis.shape),
    train_iter[0].label.tolist(),
)


def run(pool):
    config = SimpleNamespace(
        n_embed=16,
        d_embed=12,
        d_proj=10,
        projection=True,
        d_hidden=8,
        n_layers=1,
        birnn=True,
        dp_ratio=0.0,
        fix_emb=False,
        d_out=3,
        pool=pool,
    )
    config.n_cells = config.n_layers * (2 if config.birnn else 1)
    model = SNLIClassifier(config)
    with torch.no_grad():
        model.embed.weight.copy_(
            torch.arange(16 * 12, dtype=torch.float32).mul(0.37).sin().view(16, 12)
        )
        model.embed.weight[1].fill_(0)  # the padding row, as Embedding made it
        for i, (name, p) in enumerate(model.named_parameters()):
            if name.startswith("embed") or name.startswith("out.0"):
                continue
            p.copy_(
                torch.arange(p.numel(), dtype=torch.float32)
                .mul(0.61 + 0.07 * i)
                .sin()
                .mul(0.3)
                .view(p.shape)
            )
    criterion = nn.CrossEntropyLoss()
    opt = O.Adam(model.parameters(), lr=0.01)

    iterations = 0
    best_dev_acc = -1
    save_path = tempfile.mkdtemp()
    norms = []
    for epoch in range(4):
        n_correct, n_total = 0, 0
        for batch_idx, batch in enumerate(train_iter):
            # switch model to training mode, clear gradient accumulators
            model.train()
            opt.zero_grad()
            iterations += 1

            # forward pass
            answer = model(batch)

            # calculate accuracy of predictions in the current batch
            n_correct += (
                (torch.max(answer, 1)[1].view(batch.label.size()) == batch.label)
                .sum()
                .item()
            )
            n_total += batch.batch_size
            train_acc = 100.0 * n_correct / n_total

            # calculate loss of the network output with respect to training labels
            loss = criterion(answer, batch.label)

            # backpropagate and update optimizer learning rate
            loss.backward()
            norms.append(nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            opt.step()

        # evaluate performance on validation set
        model.eval()
        n_dev_correct, dev_loss = 0, 0
        with torch.no_grad():
            for dev_batch_idx, dev_batch in enumerate(dev_iter):
                answer = model(dev_batch)
                n_dev_correct += (
                    (
                        torch.max(answer, 1)[1].view(dev_batch.label.size())
                        == dev_batch.label
                    )
                    .sum()
                    .item()
                )
                dev_loss = criterion(answer, dev_batch.label)
        dev_acc = 100.0 * n_dev_correct / len(dev)
        print(
            "{} epoch {} iteration {} loss {:.4f} dev/loss {:.4f} "
            "acc {:.2f} dev/acc {:.2f}".format(
                pool,
                epoch,
                iterations,
                loss.item(),
                dev_loss.item(),
                train_acc,
                dev_acc,
            )
        )
        # update best validation set accuracy
        if dev_acc > best_dev_acc:
            best_dev_acc = dev_acc
            snapshot_prefix = os.path.join(save_path, "best_snapshot")
            snapshot_path = (
                snapshot_prefix
                + "_devacc_{}_devloss_{}__iter_{}_model.pt".format(
                    dev_acc, dev_loss.item(), iterations
                )
            )
            torch.save(model.state_dict(), snapshot_path)
            for f in glob.glob(snapshot_prefix + "*"):
                if f != snapshot_path:
                    os.remove(f)
    print(
        pool,
        "snapshots",
        len(glob.glob(os.path.join(save_path, "*"))),
        "best dev acc {:.2f}".format(best_dev_acc),
    )
    print(
        pool,
        "clip norms",
        type(norms[0]).__name__,
        norms[0].dim(),
        "clipped some",
        any(n.item() > 1.0 for n in norms),
    )
    print(
        pool,
        "pad row",
        model.embed.weight[1].abs().sum().item(),
        "grad",
        model.embed.weight.grad[1].abs().sum().item(),
    )
    print(
        pool,
        "bn",
        model.out[0].num_batches_tracked.item(),
        [round(v, 4) for v in model.out[0].running_var[:3].tolist()],
    )
    return model


model = run("last")
model = run("max")
bottle = Linear(4, 3)
x = torch.arange(24.0).view(2, 3, 4)
print(
    "bottle", tuple(bottle(x).shape), torch.allclose(bottle(x)[1, 2], bottle(x[1, 2]))
)
enc = model.encoder(torch.ones(5, 2, 10))
print("encoding", tuple(enc.shape), enc.requires_grad)
model.train()
model.dropout.p = 0.5
a, b = model(train_iter[0]), model(train_iter[0])
print("train mode: dropout varies", not torch.equal(a, b))
