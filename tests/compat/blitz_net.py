"""The Blitz's CIFAR-10 ``Net``, with the compat imports, for the tests: the one
definition in ``benchmarks/bench_compat.py``, shared with the benchmarks."""

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F
from benchmarks.bench_compat import blitz_net_class
from jaxblitz.compat import nn

Net = blitz_net_class(torch, nn, F)
