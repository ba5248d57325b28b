"""The text classification tutorial's shape (pytorch/tutorials
beginner_source/text_sentiment_ngrams_tutorial.py) on headlines held in memory:
a vocabulary, a collate_fn building (label, text, offsets), nn.EmbeddingBag with
offsets, clip_grad_norm_ and StepLR."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(1)


def fill(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):  # noqa: B007
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float32)
                .mul(0.37 + i)
                .sin()
                .mul(0.3)
                .view(p.shape)
            )


train_iter = [
    (1, "the team won the match"),
    (2, "stocks fell on the market"),
    (3, "new phone chip is fast"),
    (0, "the war ended in peace"),
    (1, "goal in the final minute"),
    (2, "bank raises the rates"),
    (3, "software update fixes bug"),
    (0, "leaders meet for talks"),
]
vocab = {"<unk>": 0}
for _, text in train_iter:
    for tok in text.split():
        vocab.setdefault(tok, len(vocab))
text_pipeline = lambda x: [vocab.get(t, 0) for t in x.split()]
print("vocab", len(vocab), text_pipeline("the market is here"))


class Headlines(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(_label)
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


dataloader = DataLoader(
    Headlines(train_iter), batch_size=4, shuffle=False, collate_fn=collate_batch
)
label, text, offsets = next(iter(dataloader))
print("batch", label.tolist(), text.shape, offsets.tolist())


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


model = TextClassificationModel(len(vocab), 8, 4)
fill(model)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
for epoch in range(1, 4):
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(dataloader):  # noqa: B007
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    scheduler.step()
    print(
        f"epoch {epoch} acc {total_acc / total_count:.3f} loss {loss.item():.4f} norm {norm.item():.4f}"  # noqa: E501
    )
with torch.no_grad():
    t = torch.tensor(text_pipeline("the match goal"))
    print("predict", model(t, torch.tensor([0])).argmax(1).item())
bag = nn.EmbeddingBag(5, 2, mode="max")
fill(bag)
print("max bag", bag(torch.tensor([[0, 1], [2, 4]])).tolist())
