"""pytorch/examples word_language_model (data.py, model.py, main.py and
generate.py) on a small in-memory corpus: a Dictionary and Corpus tokenizing
lines with <eos>, batchify (narrow, view, t, contiguous) and get_batch over
bptt, the RNNModel (LSTM, GRU, RNN_TANH) with the decoder's weight tied to the
encoder's, repackage_hidden with detach, manual SGD (p.data.add_(p.grad,
alpha=-lr)) after clip_grad_norm_, perplexities with math.exp, the learning
rate divided by 4 when validation does not improve, the best model saved and
loaded, the TransformerModel (an nn.Transformer subclass whose decoder is
replaced by a Linear) with its positional encoding and log(tril(ones)) mask,
and generation feeding the chosen word back. Dropout is 0 (the random streams
differ); generation takes the argmax where upstream samples."""

import math
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1111)

TEXT = {
    "train": """the cat sat on the mat
the dog sat on the log
a cat saw a dog on the mat
the dog saw the cat and ran
a bird sat on the dog
the cat ran to the log and sat
a dog and a cat sat on a mat
the bird saw the cat on the log""",
    "valid": """the cat sat on the log
a dog saw the bird""",
    "test": """the bird sat on the mat
a cat ran to the dog""",
}


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self):
        self.dictionary = Dictionary()
        self.train = self.tokenize(TEXT["train"])
        self.valid = self.tokenize(TEXT["valid"])
        self.test = self.tokenize(TEXT["test"])

    def tokenize(self, text):
        """Tokenizes a text (upstream: a file)."""
        for line in text.splitlines():
            words = line.split() + ["<eos>"]
            for word in words:
                self.dictionary.add_word(word)
        idss = []
        for line in text.splitlines():
            words = line.split() + ["<eos>"]
            ids = []
            for word in words:
                ids.append(self.dictionary.word2idx[word])
            idss.append(torch.tensor(ids).type(torch.int64))
        ids = torch.cat(idss)
        return ids


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(
        self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False
    ):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            except KeyError as e:
                raise ValueError(
                    "An invalid option for `--model` was supplied, "
                    "options are ['LSTM', 'GRU', 'RNN_TANH' or "
                    "'RNN_RELU']"
                ) from e
            self.rnn = nn.RNN(
                ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout
            )
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError(
                    "When using the tied flag, nhid must be equal to emsize"
                )
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (
                weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid),
            )
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model)
        )
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """Container module with an encoder, a recurrent or transformer module, and
    a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        # upstream leaves nn.Transformer's own dropout at its default
        super().__init__(
            d_model=ninp,
            nhead=nhead,
            dim_feedforward=nhid,
            num_encoder_layers=nlayers,
            num_decoder_layers=1,
            dropout=dropout,
        )
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def fill(model):
    """The random initialisation replaced by a fixed formula."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float32)
                .mul(0.53 + 0.29 * i)
                .sin()
                .mul(0.2)
                .view(p.shape)
            )


device = torch.device("cpu")
corpus = Corpus()
print(
    "vocab",
    len(corpus.dictionary),
    corpus.dictionary.idx2word[:7],
    "tokens",
    corpus.train.size(0),
    corpus.train.dtype,
)


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


BATCH, EVAL_BATCH, BPTT, CLIP = 4, 2, 5, 0.25
train_data = batchify(corpus.train, BATCH)
val_data = batchify(corpus.valid, EVAL_BATCH)
test_data = batchify(corpus.test, EVAL_BATCH)
print(
    "batchified",
    tuple(train_data.shape),
    train_data.is_contiguous(),
    train_data[:2].tolist(),
)
ntokens = len(corpus.dictionary)
criterion = nn.NLLLoss()


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    data = source[i : i + seq_len]
    target = source[i + 1 : i + 1 + seq_len].view(-1)
    return data, target


def evaluate(model, data_source):
    # Turn on evaluation mode which disables dropout.
    model.eval()
    total_loss = 0.0
    transformer = isinstance(model, TransformerModel)
    if not transformer:
        hidden = model.init_hidden(EVAL_BATCH)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, BPTT):
            data, targets = get_batch(data_source, i)
            if transformer:
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(model, epoch, lr, log_interval=2):
    # Turn on training mode which enables dropout.
    model.train()
    total_loss = 0.0
    transformer = isinstance(model, TransformerModel)
    if not transformer:
        hidden = model.init_hidden(BATCH)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, BPTT)):
        data, targets = get_batch(train_data, i)
        # Starting each batch, we detach the hidden state from how it was
        # previously produced.
        model.zero_grad()
        if transformer:
            output = model(data)
            output = output.view(-1, ntokens)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()

        # `clip_grad_norm` helps prevent the exploding gradient problem.
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)

        total_loss += loss.item()
        if batch % log_interval == 0 and batch > 0:
            cur_loss = total_loss / log_interval
            print(
                f"| epoch {epoch:3d} | {batch:5d}/{len(train_data) // BPTT:5d} batches "
                f"| lr {lr:02.2f} | "
                f"cur loss {cur_loss:5.4f} | ppl {math.exp(cur_loss):8.2f}"
            )
            total_loss = 0


def run(model, name, epochs, lr):
    path = os.path.join(tempfile.mkdtemp(), "model.pt")
    best_val_loss = None
    for epoch in range(1, epochs + 1):
        train(model, epoch, lr)
        val_loss = evaluate(model, val_data)
        print(
            f"| {name} end of epoch {epoch:3d} | valid loss {val_loss:5.4f} | "
            f"valid ppl {math.exp(val_loss):8.2f}"
        )
        # Save the model if the validation loss is the best we've seen so far.
        if not best_val_loss or val_loss < best_val_loss:
            with open(path, "wb") as f:
                torch.save(model.state_dict(), f)
            best_val_loss = val_loss
        else:
            # Anneal the learning rate if no improvement has been seen.
            lr /= 4.0
            print(f"| {name} lr annealed to {lr}")
    with open(path, "rb") as f:
        model.load_state_dict(torch.load(f))
        if name in ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]:
            model.rnn.flatten_parameters()
    test_loss = evaluate(model, test_data)
    print(
        f"| {name} end of training | test loss {test_loss:5.4f} | "
        f"test ppl {math.exp(test_loss):8.2f}"
    )
    return model


for rnn_type, epochs in (("LSTM", 3), ("GRU", 1), ("RNN_TANH", 1)):
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, dropout=0.0, tie_weights=True)
    print(
        rnn_type,
        "tied",
        model.decoder.weight is model.encoder.weight,
        "params",
        len(list(model.parameters())),
        sum(p.numel() for p in model.parameters()),
    )
    fill(model)
    run(model, rnn_type, epochs, lr=20.0)
    print(
        rnn_type,
        "still tied",
        model.decoder.weight is model.encoder.weight,
        "keys",
        len(model.state_dict()),
    )

try:
    RNNModel("LSTM", ntokens, 16, 8, 1, tie_weights=True)
except ValueError as e:
    print("refused:", e)

tmodel = TransformerModel(ntokens, 16, 2, 32, 2, dropout=0.0)
print(
    "transformer decoder",
    type(tmodel.decoder).__name__,
    "mask",
    tmodel._generate_square_subsequent_mask(3).tolist(),
)
fill(tmodel)
run(tmodel, "Transformer", 2, lr=5.0)
print("cached mask", tuple(tmodel.src_mask.shape))

# generate.py: feed each chosen word back in
model = RNNModel("LSTM", ntokens, 16, 16, 2, dropout=0.0, tie_weights=True)
fill(model)
model.eval()
hidden = model.init_hidden(1)
input = torch.randint(ntokens, (1, 1), dtype=torch.long)
input.fill_(corpus.dictionary.word2idx["the"])
words = []
with torch.no_grad():
    for i in range(6):  # noqa: B007
        output, hidden = model(input, hidden)
        word_weights = output.squeeze().div(1.0).exp().cpu()
        word_idx = torch.argmax(word_weights)
        sampled = torch.multinomial(word_weights, 1)[0]
        input.fill_(word_idx)
        words.append(corpus.dictionary.idx2word[word_idx])
print("generated", words, "sample in vocab", 0 <= sampled.item() < ntokens)

tinput = torch.tensor([[corpus.dictionary.word2idx["a"]]])
with torch.no_grad():
    for i in range(4):  # noqa: B007
        output = tmodel(tinput, False)
        word_weights = output[-1].squeeze().div(1.0).exp().cpu()
        word_idx = torch.argmax(word_weights)
        word_tensor = torch.Tensor([[word_idx]]).long()
        tinput = torch.cat([tinput, word_tensor], 0)
print("transformer generated", tinput.view(-1).tolist(), tinput.dtype)
