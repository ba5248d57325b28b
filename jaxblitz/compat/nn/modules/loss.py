"""``torch.nn.modules.loss``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.nn.ctc import (
    CTCLoss,
)
from jaxblitz.compat.nn.losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    NLLLoss2d,
    SmoothL1Loss,
    _Loss,
    _WeightedLoss,
)
from jaxblitz.compat.nn.losses_likelihood import (
    GaussianNLLLoss,
    KLDivLoss,
    PoissonNLLLoss,
)
from jaxblitz.compat.nn.losses_margin import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)

__all__ = [
    "L1Loss",
    "NLLLoss",
    "NLLLoss2d",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "KLDivLoss",
    "MSELoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "HingeEmbeddingLoss",
    "MultiLabelMarginLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "SoftMarginLoss",
    "CrossEntropyLoss",
    "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "CTCLoss",
]

# torch.nn's names compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.nn.modules.loss",
    _not_offered.reasons("torch.nn", "LinearCrossEntropyLoss"),
)
