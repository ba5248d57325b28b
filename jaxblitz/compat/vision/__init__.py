"""``torchvision`` stand-ins: ``datasets``, ``transforms``, ``utils``.

import jaxblitz.compat.vision as torchvision
import jaxblitz.compat.vision.transforms as transforms
"""

from jaxblitz.compat.vision import datasets, transforms, utils

__all__ = ["datasets", "transforms", "utils"]
