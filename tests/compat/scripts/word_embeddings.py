"""Word embeddings in the shape of the NLP tutorial "Word Embeddings: Encoding
Lexical Semantics" (pytorch/tutorials beginner_source/nlp/word_embeddings_tutorial.py):
an nn.Embedding lookup, an N-gram language model (embeddings concatenated with
view, a hidden layer, log_softmax, NLLLoss, SGD) and the CBOW exercise (context
embeddings summed), on the tutorial's own sonnet."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)


def fill(model, scale=0.3):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(0.61 + i).sin()
                    .mul(scale).view(p.shape))  # fmt: skip


word_to_ix = {"hello": 0, "world": 1}
embeds = nn.Embedding(2, 5)  # 2 words in vocab, 5 dimensional embeddings
lookup_tensor = torch.tensor([word_to_ix["hello"]], dtype=torch.long)
hello_embed = embeds(lookup_tensor)
print("hello embed", tuple(hello_embed.shape), hello_embed.requires_grad)

CONTEXT_SIZE = 2
EMBEDDING_DIM = 10
test_sentence = """When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held:
Then being asked, where all thy beauty lies,
Where all the treasure of thy lusty days;
To say, within thine own deep sunken eyes,
Were an all-eating shame, and thriftless praise.""".split()  # noqa: SIM905 -- the tutorial's text
ngrams = [
    ([test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)], test_sentence[i])
    for i in range(CONTEXT_SIZE, len(test_sentence))
]
print("first ngrams", ngrams[:2])
vocab = sorted(set(test_sentence))
word_to_ix = {word: i for i, word in enumerate(vocab)}
print("vocab", len(vocab))


class NGramLanguageModeler(nn.Module):
    def __init__(self, vocab_size, embedding_dim, context_size):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 128)
        self.linear2 = nn.Linear(128, vocab_size)

    def forward(self, inputs):
        embeds = self.embeddings(inputs).view((1, -1))
        out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        log_probs = F.log_softmax(out, dim=1)
        return log_probs


losses = []
loss_function = nn.NLLLoss()
model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
fill(model)
optimizer = optim.SGD(model.parameters(), lr=0.001)

for _epoch in range(3):
    total_loss = 0
    for context, target in ngrams:
        context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
        model.zero_grad()
        log_probs = model(context_idxs)
        loss = loss_function(log_probs, torch.tensor([word_to_ix[target]]))
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    losses.append(total_loss)
print("ngram epoch losses", [round(v, 3) for v in losses])
print("ngram loss went down", losses[-1] < losses[0])
beauty = model.embeddings.weight[word_to_ix["beauty"]]
print("beauty embedding", [round(v, 4) for v in beauty[:3].tolist()])

# CBOW: predict a word from the two words on each side of it.
CONTEXT_SIZE = 2
raw_text = """We are about to study the idea of a computational process.
Computational processes are abstract beings that inhabit computers.
As they evolve, processes manipulate other abstract things called data.
The evolution of a process is directed by a pattern of rules
called a program. People create programs to direct processes. In effect,
we conjure the spirits of the computer with our spells.""".split()  # noqa: SIM905
vocab = sorted(set(raw_text))
word_to_ix = {word: i for i, word in enumerate(vocab)}
data = []
for i in range(CONTEXT_SIZE, len(raw_text) - CONTEXT_SIZE):
    context = [raw_text[i - j - 1] for j in range(CONTEXT_SIZE)] + [
        raw_text[i + j + 1] for j in range(CONTEXT_SIZE)
    ]
    data.append((context, raw_text[i]))
print("cbow first", data[0])


class CBOW(nn.Module):
    def __init__(self, vocab_size, embedding_dim):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear = nn.Linear(embedding_dim, vocab_size)

    def forward(self, inputs):
        embeds = self.embeddings(inputs).sum(dim=0, keepdim=True)
        return F.log_softmax(self.linear(embeds), dim=-1)


def make_context_vector(context, word_to_ix):
    idxs = [word_to_ix[w] for w in context]
    return torch.tensor(idxs, dtype=torch.long)


cbow = CBOW(len(vocab), EMBEDDING_DIM)
fill(cbow)
optimizer = optim.SGD(cbow.parameters(), lr=0.05)
contexts = torch.stack([make_context_vector(c, word_to_ix) for c, _ in data])
targets = torch.tensor([word_to_ix[t] for _, t in data])
print("cbow batch", tuple(contexts.shape), contexts.dtype)
cbow_losses = []
for _epoch in range(5):
    total = 0.0
    for ctx, tgt in zip(contexts, targets):  # noqa: B905
        optimizer.zero_grad()
        loss = F.nll_loss(cbow(ctx), tgt.unsqueeze(0))
        loss.backward()
        optimizer.step()
        total += loss.item()
    cbow_losses.append(total)
print("cbow epoch losses", [round(v, 3) for v in cbow_losses])
print("cbow loss went down", cbow_losses[-1] < cbow_losses[0])
with torch.no_grad():
    pred = torch.cat([cbow(ctx).argmax(dim=1) for ctx in contexts])
print("cbow train acc", round((pred == targets).float().mean().item(), 3))
