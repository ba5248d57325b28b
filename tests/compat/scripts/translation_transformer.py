# ruff: noqa: UP008, UP018, SIM905, B007 -- the tutorial's idioms, kept
"""The "Language Translation with nn.Transformer" tutorial
(beginner_source/translation_transformer.py) on a tiny synthetic language
pair: Seq2SeqTransformer over nn.Transformer, PositionalEncoding (a
registered buffer), TokenEmbedding scaled by sqrt(emb_size),
generate_square_subsequent_mask, create_mask with padding masks,
pad_sequence in a collate_fn, CrossEntropyLoss(ignore_index=PAD_IDX), Adam
with the tutorial's betas and eps, and greedy_decode / translate. torchtext's
Multi30k, spaCy tokenizers and vocabularies become word lists and dicts;
xavier_uniform_ runs as in the tutorial, then weights are set from a formula
and dropout is 0, so that both libraries print the same values."""

import math

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn import Transformer
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(0)
DEVICE = torch.device("cpu")
SRC_LANGUAGE, TGT_LANGUAGE = "de", "en"
UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3
special_symbols = ["<unk>", "<pad>", "<bos>", "<eos>"]

# a made-up pair: each source word has one target word; the target is said
# in reverse order
SRC_WORDS = "ein zwei drei vier hund katze haus baum rot blau".split()
TGT_WORDS = "one two three four dog cat house tree red blue".split()
word_map = dict(zip(SRC_WORDS, TGT_WORDS, strict=True))


def make_pairs(n, seed):
    pairs = []
    for k in range(n):
        length = 3 + (k + seed) % 4
        words = [
            SRC_WORDS[(k * 3 + j * 7 + seed) % len(SRC_WORDS)] for j in range(length)
        ]
        pairs.append(
            (
                " ".join(words) + "\n",
                " ".join(word_map[w] for w in reversed(words)) + "\n",
            )
        )
    return pairs


train_iter, val_iter = make_pairs(24, 0), make_pairs(8, 5)
vocab_transform = {
    SRC_LANGUAGE: special_symbols + sorted(SRC_WORDS),
    TGT_LANGUAGE: special_symbols + sorted(TGT_WORDS),
}
stoi = {ln: {w: i for i, w in enumerate(v)} for ln, v in vocab_transform.items()}


def token_transform(text):
    return text.split()


def vocab_lookup(ln):
    return lambda tokens: [stoi[ln].get(t, UNK_IDX) for t in tokens]


def sequential_transforms(*transforms):
    def func(txt_input):
        for transform in transforms:
            txt_input = transform(txt_input)
        return txt_input

    return func


def tensor_transform(token_ids):
    return torch.cat(
        (torch.tensor([BOS_IDX]), torch.tensor(token_ids), torch.tensor([EOS_IDX]))
    )


text_transform = {}
for ln in [SRC_LANGUAGE, TGT_LANGUAGE]:
    text_transform[ln] = sequential_transforms(
        token_transform, vocab_lookup(ln), tensor_transform
    )


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size: int, dropout: float, maxlen: int = 5000):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(-torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)

        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pos_embedding", pos_embedding)

    def forward(self, token_embedding: Tensor):
        return self.dropout(
            token_embedding + self.pos_embedding[: token_embedding.size(0), :]
        )


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size):
        super(TokenEmbedding, self).__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens: Tensor):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Seq2SeqTransformer(nn.Module):
    def __init__(
        self,
        num_encoder_layers: int,
        num_decoder_layers: int,
        emb_size: int,
        nhead: int,
        src_vocab_size: int,
        tgt_vocab_size: int,
        dim_feedforward: int = 512,
        dropout: float = 0.1,
    ):
        super(Seq2SeqTransformer, self).__init__()
        self.transformer = Transformer(
            d_model=emb_size,
            nhead=nhead,
            num_encoder_layers=num_encoder_layers,
            num_decoder_layers=num_decoder_layers,
            dim_feedforward=dim_feedforward,
            dropout=dropout,
        )
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

    def forward(
        self,
        src: Tensor,
        trg: Tensor,
        src_mask: Tensor,
        tgt_mask: Tensor,
        src_padding_mask: Tensor,
        tgt_padding_mask: Tensor,
        memory_key_padding_mask: Tensor,
    ):
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        outs = self.transformer(
            src_emb,
            tgt_emb,
            src_mask,
            tgt_mask,
            None,
            src_padding_mask,
            tgt_padding_mask,
            memory_key_padding_mask,
        )
        return self.generator(outs)

    def encode(self, src: Tensor, src_mask: Tensor):
        return self.transformer.encoder(
            self.positional_encoding(self.src_tok_emb(src)), src_mask
        )

    def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor):
        return self.transformer.decoder(
            self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask
        )


def generate_square_subsequent_mask(sz):
    mask = (torch.triu(torch.ones((sz, sz), device=DEVICE)) == 1).transpose(0, 1)
    mask = (
        mask.float()
        .masked_fill(mask == 0, float("-inf"))
        .masked_fill(mask == 1, float(0.0))
    )
    return mask


def create_mask(src, tgt):
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]

    tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
    src_mask = torch.zeros((src_seq_len, src_seq_len), device=DEVICE).type(torch.bool)

    src_padding_mask = (src == PAD_IDX).transpose(0, 1)
    tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


SRC_VOCAB_SIZE = len(vocab_transform[SRC_LANGUAGE])
TGT_VOCAB_SIZE = len(vocab_transform[TGT_LANGUAGE])
EMB_SIZE = 16
NHEAD = 2
FFN_HID_DIM = 32
BATCH_SIZE = 4
NUM_ENCODER_LAYERS = 2
NUM_DECODER_LAYERS = 2

transformer = Seq2SeqTransformer(
    NUM_ENCODER_LAYERS,
    NUM_DECODER_LAYERS,
    EMB_SIZE,
    NHEAD,
    SRC_VOCAB_SIZE,
    TGT_VOCAB_SIZE,
    FFN_HID_DIM,
    dropout=0.0,
)

for p in transformer.parameters():
    if p.dim() > 1:
        nn.init.xavier_uniform_(p)
bound = math.sqrt(6 / (EMB_SIZE + FFN_HID_DIM))
w = transformer.transformer.encoder.layers[0].linear1.weight
print(
    "xavier bound",
    bool(w.abs().max() <= bound),
    "buffers",
    [k for k, _ in transformer.named_buffers()],
)
with torch.no_grad():  # a formula in place of the random draws
    for i, p in enumerate(transformer.parameters()):
        p.copy_(
            torch.arange(p.numel(), dtype=torch.float32)
            .mul(0.71 + 0.13 * i)
            .sin()
            .mul(0.3 if p.dim() > 1 else 0.05)
            .view(p.shape)
        )

transformer = transformer.to(DEVICE)
print("params", sum(p.numel() for p in transformer.parameters()))
loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
optimizer = torch.optim.Adam(
    transformer.parameters(), lr=0.01, betas=(0.9, 0.98), eps=1e-9
)


def collate_fn(batch):
    src_batch, tgt_batch = [], []
    for src_sample, tgt_sample in batch:
        src_batch.append(text_transform[SRC_LANGUAGE](src_sample.rstrip("\n")))
        tgt_batch.append(text_transform[TGT_LANGUAGE](tgt_sample.rstrip("\n")))

    src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
    tgt_batch = pad_sequence(tgt_batch, padding_value=PAD_IDX)
    return src_batch, tgt_batch


src, tgt = collate_fn(train_iter[:3])
print("batch", tuple(src.shape), tuple(tgt.shape), src.dtype, src[:, 0].tolist())
masks = create_mask(src, tgt[:-1, :])
print("masks", [(tuple(m.shape), str(m.dtype)) for m in masks])
print("tgt mask rows", generate_square_subsequent_mask(3).tolist())
print("src padding", masks[2].tolist())


def train_epoch(model, optimizer):
    model.train()
    losses = 0
    train_dataloader = DataLoader(
        train_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn
    )

    for src, tgt in train_dataloader:
        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)

        tgt_input = tgt[:-1, :]

        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(
            src, tgt_input
        )

        logits = model(
            src,
            tgt_input,
            src_mask,
            tgt_mask,
            src_padding_mask,
            tgt_padding_mask,
            src_padding_mask,
        )

        optimizer.zero_grad()

        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()

        optimizer.step()
        losses += loss.item()

    return losses / len(list(train_dataloader))


def evaluate(model):
    model.eval()
    losses = 0

    val_dataloader = DataLoader(val_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn)

    for src, tgt in val_dataloader:
        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)

        tgt_input = tgt[:-1, :]

        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(
            src, tgt_input
        )

        logits = model(
            src,
            tgt_input,
            src_mask,
            tgt_mask,
            src_padding_mask,
            tgt_padding_mask,
            src_padding_mask,
        )

        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        losses += loss.item()

    return losses / len(list(val_dataloader))


NUM_EPOCHS = 6
for epoch in range(1, NUM_EPOCHS + 1):
    train_loss = train_epoch(transformer, optimizer)
    val_loss = evaluate(transformer)
    print(f"Epoch: {epoch}, Train loss: {train_loss:.4f}, Val loss: {val_loss:.4f}")


def greedy_decode(model, src, src_mask, max_len, start_symbol):
    src = src.to(DEVICE)
    src_mask = src_mask.to(DEVICE)

    memory = model.encode(src, src_mask)
    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
    for i in range(max_len - 1):
        memory = memory.to(DEVICE)
        tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool)).to(
            DEVICE
        )
        out = model.decode(ys, memory, tgt_mask)
        out = out.transpose(0, 1)
        prob = model.generator(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()

        ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == EOS_IDX:
            break
    return ys


def translate(model: torch.nn.Module, src_sentence: str):
    model.eval()
    src = text_transform[SRC_LANGUAGE](src_sentence).view(-1, 1)
    num_tokens = src.shape[0]
    src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
    tgt_tokens = greedy_decode(
        model, src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX
    ).flatten()
    words = [vocab_transform[TGT_LANGUAGE][int(i)] for i in tgt_tokens.cpu().numpy()]
    return " ".join(words).replace("<bos>", "").replace("<eos>", "")


print("translated:", repr(translate(transformer, "ein hund rot")))
ys = greedy_decode(
    transformer,
    text_transform[SRC_LANGUAGE]("zwei katze").view(-1, 1),
    torch.zeros(4, 4).type(torch.bool),
    6,
    BOS_IDX,
)
print("decoded", tuple(ys.shape), ys.dtype, ys[0].tolist())
with torch.no_grad():
    src, tgt = collate_fn(val_iter[:2])
    masks = create_mask(src, tgt[:-1, :])
    full = transformer(src, tgt[:-1, :], *masks, masks[2])
    memory = transformer.encode(src, masks[0])
    bool_mask = masks[1].type(torch.bool)
    step = transformer.decode(tgt[:-1, :1], memory[:, :1], bool_mask)
    print(
        "decode agrees with forward",
        torch.allclose(transformer.generator(step)[:, 0], full[:, 0], atol=1e-5),
    )
