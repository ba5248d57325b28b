"""Blitz 3/4 (update the weights): ``torch.optim`` -- optimizers over Optax, and
``torch.optim.lr_scheduler``.

    import jaxblitz.compat.optim as optim
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
"""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.optim import lr_scheduler, swa_utils
from jaxblitz.compat.optim.adafactor import Adafactor
from jaxblitz.compat.optim.adam import Adam, AdamW
from jaxblitz.compat.optim.adam_variants import Adamax, NAdam, RAdam
from jaxblitz.compat.optim.adaptive import Adadelta, Adagrad, RMSprop
from jaxblitz.compat.optim.asgd import ASGD
from jaxblitz.compat.optim.lbfgs import LBFGS
from jaxblitz.compat.optim.muon import Muon
from jaxblitz.compat.optim.optimizer import Optimizer
from jaxblitz.compat.optim.rprop import Rprop
from jaxblitz.compat.optim.sgd import SGD

__all__ = [
    "ASGD",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "RAdam",
    "Optimizer",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
    "swa_utils",
]

# torch names compat does not offer: refused by name, with the reason
__getattr__ = _not_offered.refuser(__name__, "torch.optim")
