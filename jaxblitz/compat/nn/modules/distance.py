"""``torch.nn.modules.distance``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.distance import (
    CosineSimilarity,
    PairwiseDistance,
)

__all__ = [
    "PairwiseDistance",
    "CosineSimilarity",
]
