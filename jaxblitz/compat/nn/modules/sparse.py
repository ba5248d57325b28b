"""``torch.nn.modules.sparse``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.sparse import (
    Embedding,
    EmbeddingBag,
)

__all__ = [
    "Embedding",
    "EmbeddingBag",
]
