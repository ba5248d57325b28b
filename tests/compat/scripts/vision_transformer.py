"""pytorch/examples vision_transformer/main.py at a tiny size: PatchExtractor
cuts patches with Tensor.unfold twice, permute, contiguous and view;
InputEmbedding projects them with nn.Linear and prepends a class token held
in an nn.Parameter (moved with .to(device), as the example does) plus a
positional embedding; EncoderBlocks of LayerNorm, nn.MultiheadAttention, GELU
MLP and residual adds; an MLP head on the class token. The common variant is
built beside it: Conv2d patch embedding, a cls_token expanded over the batch,
nn.TransformerEncoder (norm_first, GELU, batch_first). Both train with
CrossEntropyLoss, AdamW and CosineAnnealingLR on 8x8 images drawn in memory.
Weights come from a fixed formula and dropout is 0 (the random streams
differ)."""

import math
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Args:
    patch_size, n_channels, latent_size, num_heads, num_encoders = 4, 3, 16, 4, 2
    dropout, num_classes, batch_size, img_size, epochs, lr = 0.0, 3, 8, 8, 4, 3e-3
    weight_decay, no_cuda = 0.03, True


args = Args()


class PatchExtractor(nn.Module):
    def __init__(self, patch_size=16):
        super().__init__()
        self.patch_size = patch_size

    def forward(self, input_data):
        batch_size, channels, height, width = input_data.size()
        assert height % self.patch_size == 0 and width % self.patch_size == 0, (
            f"Input height ({height}) and width ({width}) must be divisible "
            f"by patch size ({self.patch_size})"
        )
        num_patches_h = height // self.patch_size
        num_patches_w = width // self.patch_size
        num_patches = num_patches_h * num_patches_w
        patches = (
            input_data.unfold(2, self.patch_size, self.patch_size)
            .unfold(3, self.patch_size, self.patch_size)
            .permute(0, 2, 3, 1, 4, 5)
            .contiguous()
            .view(batch_size, num_patches, -1)
        )
        # Expected shape of a patch on default settings is (4, 196, 768)
        return patches


class InputEmbedding(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.patch_size = args.patch_size
        self.n_channels = args.n_channels
        self.latent_size = args.latent_size
        use_cuda = not args.no_cuda and torch.cuda.is_available()
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.batch_size = args.batch_size
        self.input_size = self.patch_size * self.patch_size * self.n_channels
        # Linear projection
        self.LinearProjection = nn.Linear(self.input_size, self.latent_size)
        # Class token
        self.class_token = nn.Parameter(
            torch.randn(self.batch_size, 1, self.latent_size)
        ).to(self.device)
        # Positional embedding
        self.pos_embedding = nn.Parameter(
            torch.randn(self.batch_size, 1, self.latent_size)
        ).to(self.device)

    def forward(self, input_data):
        input_data = input_data.to(self.device)
        # Patchifying the Image
        patchify = PatchExtractor(patch_size=self.patch_size)
        patches = patchify(input_data)
        linear_projection = self.LinearProjection(patches).to(self.device)
        b, n, _ = linear_projection.shape
        linear_projection = torch.cat((self.class_token, linear_projection), dim=1)
        pos_embed = self.pos_embedding[:, : n + 1, :]
        linear_projection += pos_embed
        return linear_projection


class EncoderBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.latent_size = args.latent_size
        self.num_heads = args.num_heads
        self.dropout = args.dropout
        self.norm = nn.LayerNorm(self.latent_size)
        self.attention = nn.MultiheadAttention(
            self.latent_size, self.num_heads, dropout=self.dropout
        )
        self.enc_MLP = nn.Sequential(
            nn.Linear(self.latent_size, self.latent_size * 4),
            nn.GELU(),
            nn.Dropout(self.dropout),
            nn.Linear(self.latent_size * 4, self.latent_size),
            nn.Dropout(self.dropout),
        )

    def forward(self, emb_patches):
        first_norm = self.norm(emb_patches)
        attention_out = self.attention(first_norm, first_norm, first_norm)[0]
        first_added = attention_out + emb_patches
        second_norm = self.norm(first_added)
        mlp_out = self.enc_MLP(second_norm)
        output = mlp_out + first_added
        return output


class ViT(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.num_encoders = args.num_encoders
        self.latent_size = args.latent_size
        self.num_classes = args.num_classes
        self.dropout = args.dropout
        self.embedding = InputEmbedding(args)
        # Encoder Stack
        self.encoders = nn.ModuleList(
            [EncoderBlock(args) for _ in range(self.num_encoders)]
        )
        self.MLPHead = nn.Sequential(
            nn.LayerNorm(self.latent_size),
            nn.Linear(self.latent_size, self.latent_size),
            nn.Linear(self.latent_size, self.num_classes),
        )

    def forward(self, test_input):
        enc_output = self.embedding(test_input)
        for enc_layer in self.encoders:
            enc_output = enc_layer(enc_output)
        class_token_embed = enc_output[:, 0]
        return self.MLPHead(class_token_embed)


class ConvViT(nn.Module):
    """The usual form: Conv2d patches, an expanded cls_token, TransformerEncoder."""

    def __init__(self, args):
        super().__init__()
        d, n = args.latent_size, (args.img_size // args.patch_size) ** 2
        self.patch_embed = nn.Conv2d(args.n_channels, d, args.patch_size,
                                     stride=args.patch_size)  # fmt: skip
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, d))
        layer = nn.TransformerEncoderLayer(
            d, args.num_heads, dim_feedforward=4 * d, dropout=args.dropout,
            activation="gelu", batch_first=True, norm_first=True,
        )  # fmt: skip
        self.encoder = nn.TransformerEncoder(layer, args.num_encoders,
                                             enable_nested_tensor=False)  # fmt: skip
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, args.num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B, N, D)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


def fill(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if "norm" in name:
                continue
            p.copy_(torch.arange(p.numel(), dtype=torch.float32).mul(0.61 + 0.23 * i)
                    .sin().mul(0.4 / math.sqrt(p.shape[-1])).view(p.shape))  # fmt: skip


def images(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, args.num_classes, size=n)
    x = 0.2 * rng.randn(n, 3, args.img_size, args.img_size).astype(np.float32)
    for i, y in enumerate(labels):
        x[i, y, : 4 + 2 * y, :] += 1.0
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(labels))


train_loader = DataLoader(images(32, 1), batch_size=args.batch_size)
val_loader = DataLoader(images(16, 2), batch_size=args.batch_size)
device = torch.device("cpu")

p = PatchExtractor(4)(torch.arange(2 * 3 * 8 * 8, dtype=torch.float32)
                      .view(2, 3, 8, 8))  # fmt: skip
print("patches", tuple(p.shape), p[0, 1, :5].tolist(), p[1, 3, -3:].tolist())
try:
    PatchExtractor(3)(torch.zeros(1, 3, 8, 8))
except AssertionError as e:
    print("AssertionError", e)


class TrainEval:
    def __init__(self, args, model, train_dataloader, val_dataloader, optimizer,
                 scheduler, criterion, device):  # fmt: skip
        self.model = model
        self.train_dataloader = train_dataloader
        self.val_dataloader = val_dataloader
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.criterion = criterion
        self.epoch = args.epochs
        self.device = device
        self.args = args

    def train_fn(self, current_epoch):
        self.model.train()
        total_loss = 0.0
        for t, data in enumerate(self.train_dataloader):  # noqa: B007
            images, labels = data
            images, labels = images.to(self.device), labels.to(self.device)
            self.optimizer.zero_grad()
            logits = self.model(images)
            loss = self.criterion(logits, labels)
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
        self.scheduler.step()
        return total_loss / len(self.train_dataloader)

    def eval_fn(self, current_epoch):
        self.model.eval()
        total_loss, correct = 0.0, 0
        with torch.no_grad():
            for t, data in enumerate(self.val_dataloader):  # noqa: B007
                images, labels = data
                images, labels = images.to(self.device), labels.to(self.device)
                logits = self.model(images)
                loss = self.criterion(logits, labels)
                total_loss += loss.item()
                correct += (logits.argmax(1) == labels).sum().item()
        return total_loss / len(self.val_dataloader), correct

    def train(self, path):
        best_valid_loss = np.inf
        best_train_loss = np.inf
        for i in range(self.epoch):
            train_loss = self.train_fn(i)
            val_loss, correct = self.eval_fn(i)
            print(f"EPOCH [{i + 1}/{self.epoch}] train {train_loss:.4f} "
                  f"valid {val_loss:.4f} correct {correct}/16 "
                  f"lr {self.scheduler.get_last_lr()[0]:.6f}")  # fmt: skip
            if val_loss < best_valid_loss:
                torch.save(self.model.state_dict(), path)
                print("Saved Best Weights")
                best_valid_loss = val_loss
                best_train_loss = train_loss
        print(f"Training Loss : {best_train_loss:.4f}")
        print(f"Valid Loss : {best_valid_loss:.4f}")


tmp = tempfile.mkdtemp()
for cls in (ViT, ConvViT):
    model = cls(args).to(device)
    fill(model)
    names = [n for n, _ in model.named_parameters()]
    size = sum(p.numel() for p in model.parameters())
    print(cls.__name__, "params", len(names), size, names[:3])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                  weight_decay=args.weight_decay)  # fmt: skip
    scheduler = CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-4)
    criterion = nn.CrossEntropyLoss()
    path = os.path.join(tmp, f"best-weights-{cls.__name__}.pt")
    TrainEval(args, model, train_loader, val_loader, optimizer, scheduler,
              criterion, device).train(path)  # fmt: skip
    reloaded = cls(args)
    print("reloaded", reloaded.load_state_dict(torch.load(path, weights_only=True)))

vit = ViT(args)
fill(vit)
print("class token is a parameter", isinstance(vit.embedding.class_token, nn.Parameter),
      "in state_dict", "embedding.class_token" in vit.state_dict())  # fmt: skip
x = next(iter(val_loader))[0]
out = vit(x)
print("out", tuple(out.shape), [round(v, 4) for v in out[0].tolist()])
attn = vit.encoders[0].attention
q = torch.linspace(-1, 1, 9 * 8 * 16).view(9, 8, 16)
o, w = attn(q, q, q)
print("mha", tuple(o.shape), tuple(w.shape), "rows sum to 1",
      bool(torch.allclose(w.sum(-1), torch.ones(8, 9))))  # fmt: skip
o2, w2 = attn(q, q, q, average_attn_weights=False)
print("per-head weights", tuple(w2.shape), bool(torch.allclose(w2.mean(1), w)))
