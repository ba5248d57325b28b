"""A recurrent text classifier in the shape of bentrevett's pytorch-sentiment-
analysis ("Upgraded Sentiment Analysis") and the text tutorials' collate_fn:
a vocabulary with <pad> and <unk>, nn.Embedding(padding_idx=pad), a DataLoader
whose collate_fn pads with pad_sequence and returns the lengths, a two-layer
bidirectional LSTM (and GRU) over pack_padded_sequence, pad_packed_sequence's
outputs, the last hidden states of both directions concatenated,
CrossEntropyLoss with class weights for unbalanced classes, Adam with
weight_decay, and gradient accumulation over two micro-batches per step."""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(1234)

POS = ["good", "great", "fine", "nice", "love", "happy", "best", "superb"]
NEG = ["bad", "awful", "poor", "hate", "sad", "worst", "boring", "dull"]
NEU = ["the", "a", "movie", "film", "was", "is", "it", "this", "plot", "acting"]


def sentence(k):
    """Sentence k: neutral words around one to three sentiment words; class 2
    (mixed) for a few, so the classes are unbalanced."""
    label = 0 if k % 5 in (0, 1, 2) else 1 if k % 5 == 3 else 2
    words = [NEU[(k * 3 + j) % len(NEU)] for j in range(2 + k % 4)]
    for j in range(1 + k % 3):
        if label == 0:
            words.insert(j * 2, POS[(k + j) % len(POS)])
        elif label == 1:
            words.insert(j * 2, NEG[(k + 2 * j) % len(NEG)])
        else:
            words.insert(j, (POS if j % 2 else NEG)[(k + j) % 8])
    return words, label


data = [sentence(k) for k in range(40)]
counts = {}
for words, _ in data:
    for w in words:
        counts[w] = counts.get(w, 0) + 1
itos = ["<unk>", "<pad>"] + sorted(w for w, c in counts.items() if c >= 2)
stoi = {w: i for i, w in enumerate(itos)}
UNK, PAD = stoi["<unk>"], stoi["<pad>"]
print("vocab", len(itos), itos[:6], "unk'd", sum(c < 2 for c in counts.values()))


class TextDataset(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        words, label = self.rows[i]
        ids = torch.tensor([stoi.get(w, UNK) for w in words], dtype=torch.long)
        return ids, label


def collate_batch(batch):
    ids = [item[0] for item in batch]
    lengths = torch.tensor([len(x) for x in ids], dtype=torch.long)
    labels = torch.tensor([item[1] for item in batch], dtype=torch.long)
    return pad_sequence(ids, padding_value=PAD, batch_first=True), lengths, labels


train_loader = DataLoader(TextDataset(data[:32]), batch_size=4, shuffle=False,
                          collate_fn=collate_batch)  # fmt: skip
valid_loader = DataLoader(
    TextDataset(data[32:]), batch_size=8, collate_fn=collate_batch
)
text, lengths, labels = next(iter(train_loader))
print("batch", tuple(text.shape), lengths.tolist(), labels.tolist(), text[1].tolist())


class RNNClassifier(nn.Module):
    def __init__(self, vocab_size, emb_dim, hid_dim, out_dim, cell, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_idx)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(emb_dim, hid_dim, num_layers=2, bidirectional=True,
                       dropout=0.0, batch_first=True)  # fmt: skip
        self.fc = nn.Linear(hid_dim * 2, out_dim)
        self.dropout = nn.Dropout(0.0)

    def forward(self, text, text_lengths):
        embedded = self.dropout(self.embedding(text))  # (B, T, E)
        packed_embedded = pack_padded_sequence(
            embedded, text_lengths.to("cpu"), batch_first=True, enforce_sorted=False
        )
        packed_output, hidden = self.rnn(packed_embedded)
        if isinstance(hidden, tuple):
            hidden = hidden[0]
        output, output_lengths = pad_packed_sequence(packed_output, batch_first=True)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden), output, output_lengths


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(0.61 + 0.37 * i).sin()
                    .mul(0.3).view(p.shape))  # fmt: skip
        model.embedding.weight[PAD].zero_()


def categorical_accuracy(preds, y):
    top_pred = preds.argmax(1, keepdim=True)
    correct = top_pred.eq(y.view_as(top_pred)).sum()
    return correct.float() / y.shape[0]


label_counts = torch.bincount(torch.tensor([y for _, y in data[:32]]), minlength=3)
class_weights = label_counts.sum() / (3.0 * label_counts.float())
print("class counts", label_counts.tolist(), "weights",
      [round(w, 4) for w in class_weights.tolist()])  # fmt: skip

ACCUM = 2
for cell in ["lstm", "gru"]:
    model = RNNClassifier(len(itos), 8, 10, 3, cell, PAD)
    fill(model)
    print(cell, "trainable", sum(p.numel() for p in model.parameters()
                                 if p.requires_grad))  # fmt: skip
    logits, output, out_lengths = model(text, lengths)
    print(cell, "output", tuple(output.shape), out_lengths.tolist(),
          "padding zero", bool((output[2, lengths[2]:] == 0).all()))  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    for epoch in range(4):
        model.train()
        epoch_loss, epoch_acc = 0.0, 0.0
        optimizer.zero_grad()
        for i, (text_b, lengths_b, labels_b) in enumerate(train_loader):
            predictions, _, _ = model(text_b, lengths_b)
            loss = criterion(predictions, labels_b) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                optimizer.step()
                optimizer.zero_grad()
            epoch_loss += loss.item() * ACCUM
            epoch_acc += categorical_accuracy(predictions, labels_b).item()
        model.eval()
        with torch.no_grad():
            v_acc = sum(categorical_accuracy(model(t, n)[0], y).item()
                        for t, n, y in valid_loader) / len(valid_loader)  # fmt: skip
        n = len(train_loader)
        t_acc = epoch_acc * 100 / n
        print(f"{cell} epoch {epoch + 1} train loss {epoch_loss / n:.3f} "
              f"acc {t_acc:.2f}% valid acc {v_acc * 100:.2f}%")  # fmt: skip
    loss = criterion(model(text, lengths)[0], labels)
    loss.backward()
    pad_row = model.embedding.weight[PAD].abs().sum().item()
    pad_grad = model.embedding.weight.grad[PAD].abs().sum().item()
    print(cell, "pad row and grad", pad_row, pad_grad)
    state = optimizer.state[model.fc.weight]
    print(cell, "adam step", int(state["step"]), "steps per epoch", n // ACCUM)


def predict_sentiment(model, sentence):
    model.eval()
    ids = [stoi.get(w, UNK) for w in sentence.split()]
    tensor = torch.LongTensor(ids).unsqueeze(0)
    length = torch.LongTensor([len(ids)])
    with torch.no_grad():
        probs = torch.softmax(model(tensor, length)[0], dim=-1)
    return probs.argmax(-1).item(), round(probs.max().item(), 2)


print("predict", predict_sentiment(model, "the movie was great"),
      predict_sentiment(model, "this film is awful and zzz"))  # fmt: skip
