"""A character-level classifier in the shape of the NLP-from-scratch tutorials
(pytorch/tutorials intermediate_source/char_rnn_classification_tutorial.py):
names turned into index sequences, padded with pad_sequence, packed with
pack_padded_sequence, run through a two-layer bidirectional nn.LSTM and nn.GRU
(batch_first), unpacked with pad_packed_sequence, and trained with Adam."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)


def fill(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):  # noqa: B007
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float32)
                .mul(0.37 + i)
                .sin()
                .mul(0.2)
                .view(p.shape)
            )


names = [
    ("albert", 0),
    ("rossi", 1),
    ("tanaka", 2),
    ("bob", 0),
    ("bianchi", 1),
    ("sato", 2),
    ("edward", 0),
    ("ricci", 1),
]
letters = sorted({c for name, _ in names for c in name})
char_to_ix = {c: i + 1 for i, c in enumerate(letters)}  # 0 is padding
print("letters", len(letters), "".join(letters))

seqs = [torch.tensor([char_to_ix[c] for c in n], dtype=torch.long) for n, _ in names]
lengths = torch.tensor([len(s) for s in seqs])
labels = torch.tensor([y for _, y in names])
padded = pad_sequence(seqs, batch_first=True)
print("padded", tuple(padded.shape), padded.dtype, padded[3].tolist())
print("lengths", lengths.tolist())


class CharClassifier(nn.Module):
    def __init__(self, vocab, n_classes, hidden=12, cell="lstm"):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8, padding_idx=0)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(8, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, x, lengths):
        emb = self.embed(x)
        packed = pack_padded_sequence(
            emb, lengths, batch_first=True, enforce_sorted=False
        )
        out, state = self.rnn(packed)
        unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
        h = state[0] if isinstance(state, tuple) else state
        # last layer, both directions
        feats = torch.cat([h[-2], h[-1]], dim=1)
        return self.fc(feats), packed, unpacked, out_lengths, state


for cell in ["lstm", "gru"]:
    model = CharClassifier(len(letters) + 1, 3, cell=cell)
    fill(model)
    print(cell, "keys", [k for k in model.state_dict() if k.startswith("rnn.")][:8])
    print(cell, "rnn params", sum(p.numel() for p in model.rnn.parameters()))
    logits, packed, unpacked, out_lengths, state = model(padded, lengths)
    print(cell, "packed batch_sizes", packed.batch_sizes.tolist())
    print(cell, "sorted_indices", packed.sorted_indices.tolist())
    print(cell, "packed data", tuple(packed.data.shape))
    print(cell, "unpacked", tuple(unpacked.shape), out_lengths.tolist())
    if isinstance(state, tuple):
        print(cell, "state", [tuple(s.shape) for s in state])
    else:
        print(cell, "state", tuple(state.shape))
    print(cell, "padding is zero", bool((unpacked[3, 3:] == 0).all()))
    print(cell, "logits", tuple(logits.shape))

    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _step in range(15):
        opt.zero_grad()
        logits = model(padded, lengths)[0]
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    print(cell, "first loss", round(losses[0], 3))
    print(cell, "loss went down", losses[-1] < losses[0] * 0.7)
    print(
        cell, "embedding pad grad zero", bool((model.embed.weight.grad[0] == 0).all())
    )
    with torch.no_grad():
        pred = model(padded, lengths)[0].argmax(1)
    print(cell, "train acc >= 0.75", (pred == labels).float().mean().item() >= 0.75)

# A plain unpacked LSTM on the padded batch, with explicit initial state.
lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
x = torch.arange(8 * 7 * 4, dtype=torch.float32).view(8, 7, 4).mul(0.01).cos()
h0 = torch.zeros(4, 8, 6)
c0 = torch.zeros(4, 8, 6)
out, (hn, cn) = lstm(x, (h0, c0))
print("plain lstm", tuple(out.shape), tuple(hn.shape), tuple(cn.shape))
print("forward end matches hn", torch.allclose(out[:, -1, :6], hn[-2]))
print("backward start matches hn", torch.allclose(out[:, 0, 6:], hn[-1]))
