"""A tiny Transformer language model in the shape of the language-modeling
tutorial (pytorch/tutorials beginner_source/transformer_tutorial.py): token
embeddings, a sinusoidal positional-encoding buffer, nn.TransformerEncoder with a
causal mask from generate_square_subsequent_mask, a custom attention head on
F.scaled_dot_product_attention, and nn.MultiheadAttention with key_padding_mask."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

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


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model)
        )
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(0)]


class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model=16, nhead=2, d_hid=32, nlayers=2):
        super().__init__()
        self.pos_encoder = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout=0.0)
        self.transformer_encoder = nn.TransformerEncoder(
            layer, nlayers, enable_nested_tensor=False
        )
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)

    def forward(self, src, src_mask=None):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, src_mask)
        return self.linear(output)


class CausalHead(nn.Module):
    """One attention head written with F.scaled_dot_product_attention."""

    def __init__(self, d_model, head):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * head, bias=False)
        self.proj = nn.Linear(head, d_model)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y)


# The corpus: a repeating pattern the model can learn in a few steps.
ntokens = 11
data = torch.arange(200) % 7 + (torch.arange(200) // 50)
print("data", tuple(data.shape), data[:10].tolist(), int(data.max()))

bptt = 8


def batchify(data, bsz):
    seq_len = data.size(0) // bsz
    return data[: seq_len * bsz].view(bsz, seq_len).t().contiguous()


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i : i + seq_len], source[i + 1 : i + 1 + seq_len].reshape(-1)


train_data = batchify(data, 4)
print("train_data", tuple(train_data.shape))
x, y = get_batch(train_data, 0)
print("batch", tuple(x.shape), tuple(y.shape))

mask = nn.Transformer.generate_square_subsequent_mask(4)
print("mask dtype", mask.dtype)
print("mask rows", mask.tolist())

model = TransformerModel(ntokens)
fill(model)
print("params", sum(p.numel() for p in model.parameters()))
print("buffers", [name for name, _ in model.named_buffers()])
print("first keys", list(model.state_dict())[:6])

src_mask = nn.Transformer.generate_square_subsequent_mask(bptt)
out = model(x, src_mask)
print("output", tuple(out.shape))

# Causality: changing the last position leaves earlier outputs unchanged.
x2 = x.clone()
x2[-1] = (x2[-1] + 1) % ntokens
with torch.no_grad():
    a = model(x, src_mask)
    b = model(x2, src_mask)
print("causal prefix unchanged", torch.allclose(a[:-1], b[:-1], atol=1e-5))
print("last position changed", not torch.allclose(a[-1], b[-1]))

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
model.train()
for step, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
    if step == 6:
        break
    data_b, targets = get_batch(train_data, i)
    output = model(data_b, src_mask[: data_b.size(0), : data_b.size(0)])
    loss = criterion(output.view(-1, ntokens), targets)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    losses.append(loss.item())
print("steps", len(losses), "first loss", round(losses[0], 2))
print("loss went down", losses[-1] < losses[0])

# A custom head on scaled_dot_product_attention agrees with an explicit softmax.
head = CausalHead(16, 8)
fill(head)
h = torch.arange(2 * 5 * 16, dtype=torch.float32).view(2, 5, 16).mul(0.05).sin()
q, k, v = head.qkv(h).chunk(3, dim=-1)
scores = q @ k.transpose(-2, -1) / math.sqrt(8)
scores = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))
manual = head.proj(scores.softmax(-1) @ v)
print("sdpa head", tuple(head(h).shape), torch.allclose(head(h), manual, atol=1e-5))
head(h).sum().backward()
print("head grads", [tuple(p.grad.shape) for p in head.parameters()])

# nn.MultiheadAttention with a key padding mask.
mha = nn.MultiheadAttention(16, 4, batch_first=True)
fill(mha)
print("mha params", [(n, tuple(p.shape)) for n, p in mha.named_parameters()])
key_padding_mask = torch.tensor(
    [[False, False, False, True, True], [False, False, False, False, False]]
)
attn_out, attn_w = mha(h, h, h, key_padding_mask=key_padding_mask)
print("mha", tuple(attn_out.shape), tuple(attn_w.shape))
print("padded keys get no weight", bool((attn_w[0, :, 3:] == 0).all()))
print("weights sum to one", torch.allclose(attn_w.sum(-1), torch.ones(2, 5)))
_, per_head = mha(
    h, h, h, key_padding_mask=key_padding_mask, average_attn_weights=False
)
print("per-head weights", tuple(per_head.shape))
# Padded keys do not matter: changing them leaves the output of row 0 alone.
h2 = h.clone()
h2[0, 3:] = 7.0
out2, _ = mha(h2, h2, h2, key_padding_mask=key_padding_mask)
print("padding ignored", torch.allclose(out2[0, :3], attn_out[0, :3], atol=1e-5))
