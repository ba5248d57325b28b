"""Names generated one letter at a time, in the shape of the char-RNN
generation tutorial (pytorch/tutorials intermediate_source/
char_rnn_generation_tutorial.py): a category one-hot, the input letter and the
hidden state concatenated through nn.Linear layers (i2h, i2o, o2o), dropout,
log_softmax, NLLLoss summed over a sequence by hand, the gradients applied with
``p.data.add_(p.grad.data, alpha=-learning_rate)``, and sampling by ``topk``."""

import string

import torch
import torch.nn as nn

torch.manual_seed(0)

all_letters = string.ascii_letters + " .,;'-"
n_letters = len(all_letters) + 1  # plus EOS marker

category_lines = {
    "English": ["Abbott", "Barker", "Carter", "Dawson", "Ellis", "Fisher"],
    "Italian": ["Abate", "Bellini", "Cara", "Donati", "Esposito", "Ferrari"],
    "Russian": ["Abakumov", "Belov", "Chernov", "Dudin", "Egorov", "Fomin"],
}
all_categories = list(category_lines)
n_categories = len(all_categories)
print("# categories:", n_categories, all_categories, "letters", n_letters)


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def categoryTensor(category):
    li = all_categories.index(category)
    tensor = torch.zeros(1, n_categories)
    tensor[0][li] = 1
    return tensor


def inputTensor(line):
    """One-hot matrix of first to last letters (not including EOS) for input."""
    tensor = torch.zeros(len(line), 1, n_letters)
    for li in range(len(line)):
        letter = line[li]
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


def targetTensor(line):
    """``LongTensor`` of second letter to end (EOS) for target."""
    letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(n_letters - 1)  # EOS
    return torch.LongTensor(letter_indexes)


def pair(k):
    """The k-th training pair, in a fixed order (the tutorial draws at random)."""
    category = all_categories[k % n_categories]
    lines = category_lines[category]
    line = lines[(k // n_categories) % len(lines)]
    return categoryTensor(category), inputTensor(line), targetTensor(line)


criterion = nn.NLLLoss()
learning_rate = 0.05
rnn = RNN(n_letters, 32, n_letters)
with torch.no_grad():
    for i, p in enumerate(rnn.parameters()):
        n = p.numel()
        p.copy_(torch.arange(n, dtype=torch.float32).mul(1.17 + 0.43 * i).sin()
                .mul(0.1).view(p.shape))  # fmt: skip
# Dropout off: its random draws differ between PyTorch and compat.
rnn.dropout.p = 0.0
print(rnn)


def train(category_tensor, input_line_tensor, target_line_tensor):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()
    rnn.zero_grad()
    loss = torch.Tensor([0])  # you can also just simply use ``loss = 0``
    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        l = criterion(output, target_line_tensor[i])  # noqa: E741
        loss += l
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item() / input_line_tensor.size(0)


cat0, inp0, tgt0 = pair(0)
print("tensors", tuple(cat0.shape), tuple(inp0.shape), tgt0.tolist()[:4],
      tgt0.dtype)  # fmt: skip
losses = []
total_loss = 0
for it in range(1, 61):
    output, loss = train(*pair(it))
    total_loss += loss
    if it % 20 == 0:
        print(f"iter {it} loss avg {total_loss / 20:.4f}")
        losses.append(total_loss / 20)
        total_loss = 0
print("output", tuple(output.shape), "loss went down", losses[-1] < losses[0])

max_length = 10


def sample(category, start_letter="A"):
    with torch.no_grad():  # no need to track history in sampling
        category_tensor = categoryTensor(category)
        input = inputTensor(start_letter)
        hidden = rnn.initHidden()
        output_name = start_letter
        for i in range(max_length):  # noqa: B007
            output, hidden = rnn(category_tensor, input[0], hidden)
            topv, topi = output.topk(1)
            topi = topi[0][0]
            if topi == n_letters - 1:
                break
            else:
                letter = all_letters[topi]
                output_name += letter
            input = inputTensor(letter)
        return output_name


def samples(category, start_letters="ABC"):
    for start_letter in start_letters:
        print("sample", category, sample(category, start_letter))


samples("Russian", "RUS")
samples("Italian", "ITA")
output, hidden = rnn(cat0, inp0[0], rnn.initHidden())
topv, topi = output.topk(3)
print("topk", topi.tolist(), [round(v, 3) for v in topv[0].tolist()])
