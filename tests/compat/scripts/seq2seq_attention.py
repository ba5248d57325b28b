"""A sequence-to-sequence GRU with attention in the shape of the translation
tutorial (pytorch/tutorials intermediate_source/seq2seq_translation_tutorial.py):
an EncoderRNN (nn.Embedding, nn.GRU batch_first), Bahdanau attention (Linear
layers, tanh, softmax, torch.bmm), an AttnDecoderRNN stepping one token at a
time from an SOS token (torch.empty(...).fill_), teacher forcing chosen with a
seeded Python random, greedy decoding with topk(1) and detach, NLLLoss over
the flattened outputs, two Adam optimizers and a TensorDataset DataLoader; the
task is reversing short token sequences."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
random.seed(0)

SOS_token, EOS_token = 0, 1
MAX_LENGTH = 6
device = torch.device("cpu")


def fill(model, scale=0.4):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(2.39 + 0.7 * i).cos()
                    .mul(scale).view(p.shape))  # fmt: skip


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None,
                teacher_forcing=True):  # fmt: skip
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(
            batch_size, 1, dtype=torch.long, device=device
        ).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []

        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            if target_tensor is not None and teacher_forcing:
                # Teacher forcing: Feed the target as the next input
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                # Without teacher forcing: use its own predictions as the next input
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # detach from history

        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


# Token sequences over words 2..7, each target the source reversed, + EOS.
words = ["<sos>", "<eos>", "un", "deux", "trois", "quatre", "cinq", "six"]
pairs = []
for k in range(16):
    n = 2 + k % 4
    src = [2 + (k * 3 + 5 * j) % 6 for j in range(n)]
    pairs.append((src, list(reversed(src))))
print("pair", [words[i] for i in pairs[5][0]], "->", [words[i] for i in pairs[5][1]])
n = len(pairs)
input_ids = torch.zeros((n, MAX_LENGTH), dtype=torch.long)
target_ids = torch.zeros((n, MAX_LENGTH), dtype=torch.long)
for idx, (inp, tgt) in enumerate(pairs):
    inp, tgt = inp + [EOS_token], tgt + [EOS_token]
    input_ids[idx, : len(inp)] = torch.tensor(inp)
    target_ids[idx, : len(tgt)] = torch.tensor(tgt)
print("ids", input_ids[5].tolist(), target_ids[5].tolist())
train_data = TensorDataset(input_ids.to(device), target_ids.to(device))
train_dataloader = DataLoader(train_data, batch_size=8, shuffle=False)

hidden_size = 16
# dropout off: PyTorch's and compat's random streams differ, the runs must not
encoder = EncoderRNN(len(words), hidden_size, dropout_p=0.0).to(device)
decoder = AttnDecoderRNN(hidden_size, len(words), dropout_p=0.0).to(device)
fill(encoder)
fill(decoder)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.03)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.03)
criterion = nn.NLLLoss()
teacher_forcing_ratio = 0.5


def train_epoch(dataloader):
    total_loss = 0
    forced = 0
    for data in dataloader:
        input_tensor, target_tensor = data
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        use_teacher_forcing = random.random() < teacher_forcing_ratio
        forced += use_teacher_forcing
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(
            encoder_outputs, encoder_hidden, target_tensor, use_teacher_forcing
        )
        loss = criterion(
            decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1)
        )
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        total_loss += loss.item()
    return total_loss / len(dataloader), forced


losses, forced = [], 0
for _epoch in range(12):
    loss, f = train_epoch(train_dataloader)
    losses.append(loss)
    forced += f
print("teacher forced batches", forced, "of", 12 * len(train_dataloader))
print("epoch losses", [round(v, 3) for v in losses[::4]])
print("seq2seq loss went down", losses[-1] < losses[0] / 2)


def evaluate(encoder, decoder, input_tensor):
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
    return decoded_ids, decoder_attn


encoder.eval()
decoder.eval()
decoded, attn = evaluate(encoder, decoder, input_ids[:4])
print("attention", tuple(attn.shape), "rows sum to 1",
      torch.allclose(attn.sum(-1), torch.ones(4, MAX_LENGTH)))  # fmt: skip
for row in range(4):
    out = []
    for idx in decoded[row].tolist():
        if idx == EOS_token:
            out.append("<EOS>")
            break
        out.append(words[idx])
    print("decoded", [words[i] for i in pairs[row][0]], "->", out)
correct = (decoded == target_ids[:4]) | (target_ids[:4] == 0)
print("token accuracy", round(correct.float().mean().item(), 3))
print("attention weights", [round(v, 3) for v in attn[1, 0].tolist()])
