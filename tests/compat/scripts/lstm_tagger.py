"""A part-of-speech tagger in the shape of the sequence models tutorial
(pytorch/tutorials beginner_source/nlp/sequence_models_tutorial.py): nn.LSTM
stepped one element at a time with its (h, c) state, then over the whole
sequence (seq_len, batch=1, features), a tag-space Linear, log_softmax,
NLLLoss and SGD, with scoring under torch.no_grad(); then the exercise's
character-level LSTM feeding each word's final hidden state into the tagger."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)


def fill(model, scale=0.5):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(2.39 + 0.7 * i).cos()
                    .mul(scale).view(p.shape))  # fmt: skip


lstm = nn.LSTM(3, 3)  # input dim is 3, output dim is 3
fill(lstm)
inputs = [torch.linspace(-1, 1, 3).mul(i + 1).view(1, 3) for i in range(5)]
hidden = (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))
for i in inputs:
    # Step through the sequence one element at a time.
    out, hidden = lstm(i.view(1, 1, -1), hidden)
stepped = out
# Or the entire sequence at once.
inputs = torch.cat(inputs).view(len(inputs), 1, -1)
hidden = (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))
out, hidden = lstm(inputs, hidden)
print("lstm out", tuple(out.shape), [tuple(h.shape) for h in hidden])
print("stepped equals whole", torch.allclose(stepped, out[-1:], atol=1e-6))
print("last out", [round(v, 4) for v in out[-1, 0].tolist()])


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


training_data = [
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),  # noqa: SIM905
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"]),  # noqa: SIM905
]
word_to_ix = {}
for sent, _tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
print("word_to_ix", word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
ix_to_tag = {v: k for k, v in tag_to_ix.items()}
EMBEDDING_DIM = 6
HIDDEN_DIM = 6


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
fill(model)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.5)

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print("scores before", tuple(tag_scores.shape),
          [round(v, 4) for v in tag_scores[0].tolist()])  # fmt: skip

epoch_losses = []
for _epoch in range(30):
    total = 0.0
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = model(sentence_in)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    epoch_losses.append(total)
print("tagger losses", [round(epoch_losses[i], 4) for i in (0, 14, 29)])
print("tagger loss went down", epoch_losses[-1] < epoch_losses[0] / 2)

with torch.no_grad():
    for sentence, tags in training_data:
        scores = model(prepare_sequence(sentence, word_to_ix))
        predicted = [ix_to_tag[i] for i in scores.argmax(dim=1).tolist()]
        print("tagged", predicted, predicted == tags)


class CharLSTMTagger(nn.Module):
    """The exercise: each word also gets its characters' final LSTM state."""

    def __init__(self, vocab_size, n_chars, tagset_size, char_dim=3, char_hidden=3):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, EMBEDDING_DIM)
        self.char_embeddings = nn.Embedding(n_chars, char_dim)
        self.char_lstm = nn.LSTM(char_dim, char_hidden)
        self.lstm = nn.LSTM(EMBEDDING_DIM + char_hidden, HIDDEN_DIM)
        self.hidden2tag = nn.Linear(HIDDEN_DIM, tagset_size)

    def forward(self, sentence, chars):
        words = self.word_embeddings(sentence)  # (len, EMBEDDING_DIM)
        char_reps = []
        for word_chars in chars:
            c = self.char_embeddings(word_chars).unsqueeze(1)  # (n, 1, char_dim)
            _, (h, _) = self.char_lstm(c)
            char_reps.append(h.view(-1))
        feats = torch.cat([words, torch.stack(char_reps)], dim=1)
        out, _ = self.lstm(feats.unsqueeze(1))
        return F.log_softmax(self.hidden2tag(out.squeeze(1)), dim=1)


char_to_ix = {c: i for i, c in enumerate(sorted({c for w in word_to_ix for c in w}))}
char_model = CharLSTMTagger(len(word_to_ix), len(char_to_ix), len(tag_to_ix))
fill(char_model)
optimizer = optim.SGD(char_model.parameters(), lr=0.5)
char_losses = []
for _epoch in range(15):
    total = 0.0
    for sentence, tags in training_data:
        char_model.zero_grad()
        chars = [prepare_sequence(w, char_to_ix) for w in sentence]
        scores = char_model(prepare_sequence(sentence, word_to_ix), chars)
        loss = F.nll_loss(scores, prepare_sequence(tags, tag_to_ix))
        loss.backward()
        optimizer.step()
        total += loss.item()
    char_losses.append(total)
print("char tagger losses", [round(char_losses[i], 4) for i in (0, 14)])
print("char tagger loss went down", char_losses[-1] < char_losses[0])
print("char lstm grad", char_model.char_lstm.weight_hh_l0.grad is not None)
