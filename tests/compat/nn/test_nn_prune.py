"""compat's ``torch.nn.utils.prune`` against real PyTorch: the parameters,
buffers and hooks a pruning leaves, the masks of the magnitude methods, a
container of two methods, ``remove``, global pruning and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
pytest.importorskip("torch.nn.utils.prune")  # torch.nn.utils does not import it
ct = jaxblitz.compat
RNG = np.random.default_rng(5)
CONV = RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)
LINEAR = RNG.standard_normal((5, 6)).astype(np.float32)
X = RNG.standard_normal((3, 6)).astype(np.float32)


def _linear(torch):
    layer = torch.nn.Linear(6, 5)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(LINEAR))
        layer.bias.copy_(torch.arange(5.0) - 2)
    return layer


def _names(module):
    return (
        [n for n, _ in module.named_parameters()],
        [n for n, _ in module.named_buffers()],
        [type(h).__name__ for h in module._forward_pre_hooks.values()],
    )


def test_l1_unstructured_moves_the_weight_to_orig_and_masks_the_smallest():
    def fn(torch):
        layer = _linear(torch)
        torch.nn.utils.prune.l1_unstructured(layer, name="weight", amount=0.3)
        y = layer(torch.tensor(X))
        y.sum().backward()
        return [_names(layer), layer.weight_mask, layer.weight,
                list(layer.state_dict()), y, layer.weight_orig.grad]  # fmt: skip

    check(fn)


def test_ln_structured_after_l1_joins_them_in_a_container():
    def fn(torch):
        prune = torch.nn.utils.prune
        conv = torch.nn.Conv2d(2, 4, 3)
        with torch.no_grad():
            conv.weight.copy_(torch.tensor(CONV))
        prune.l1_unstructured(conv, name="weight", amount=10)
        prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)
        hook = next(iter(conv._forward_pre_hooks.values()))
        return [_names(conv), [type(m).__name__ for m in hook], conv.weight_mask]

    check(fn)


def test_remove_makes_the_pruning_permanent():
    def fn(torch):
        prune = torch.nn.utils.prune
        layer = _linear(torch)
        prune.l1_unstructured(layer, name="bias", amount=2)
        prune.remove(layer, "bias")
        return [_names(layer), layer.bias, type(layer.bias).__name__,
                prune.is_pruned(layer)]  # fmt: skip

    check(fn)


def test_global_unstructured_ranks_all_the_tensors_together():
    def fn(torch):
        prune = torch.nn.utils.prune
        net = torch.nn.Sequential(_linear(torch), torch.nn.Linear(5, 2))
        with torch.no_grad():
            net[1].weight.copy_(torch.arange(10.0).view(2, 5) / 7 - 0.6)
        pairs = ((net[0], "weight"), (net[1], "weight"))
        prune.global_unstructured(pairs, pruning_method=prune.L1Unstructured,
                                  amount=0.4)  # fmt: skip
        return [net[0].weight_mask, net[1].weight_mask, prune.is_pruned(net)]

    check(fn)


def test_random_unstructured_prunes_the_count_asked():
    def fn(torch):
        layer = _linear(torch)
        torch.nn.utils.prune.random_unstructured(layer, name="weight", amount=0.5)
        mask = layer.weight_mask
        masked = torch.equal(layer.weight, layer.weight_orig * mask)
        return [int((mask == 0).sum()), masked]

    check(fn)


def test_a_scripts_own_pruning_method_is_applied():
    def fn(torch):
        class FooBarPruningMethod(torch.nn.utils.prune.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        layer = _linear(torch)
        FooBarPruningMethod.apply(layer, "bias")
        return [layer.bias_mask, layer.bias]

    check(fn)


@pytest.mark.parametrize(
    "call",
    [
        lambda torch: torch.nn.utils.prune.l1_unstructured(
            _linear(torch), "weight", 1.5
        ),
        lambda torch: torch.nn.utils.prune.l1_unstructured(
            _linear(torch), "weight", 31
        ),
        lambda torch: torch.nn.utils.prune.ln_structured(
            _linear(torch), "bias", 1, 2, 0
        ),
        lambda torch: torch.nn.utils.prune.remove(_linear(torch), "weight"),
    ],
    ids=[
        "fraction over one",
        "more than there are",
        "structured 1-d",
        "remove unpruned",
    ],
)
def test_pruning_errors_are_torchs(call):
    check(call)
