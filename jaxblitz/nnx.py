"""Blitz 3 and 4 in Flax NNX: the Blitz's ``Net`` as an ``nnx.Module``.

Flax NNX is the JAX API closest to ``torch.nn``: a module holds its parameters as
attributes and is called like a function. :class:`Net` is the Blitz's ``Net`` line
for line, and runs on the core's code: its forward is :func:`jaxblitz.models.lenet`
on its own weights, so it uses the same fast kernels and gives the same logits
and gradients. Its state is named and shaped like PyTorch's ``state_dict``
(``net.conv1.weight`` is OIHW), so weights move between NNX, the core's params
dict and PyTorch with no reshuffling::

    net = Net(in_channels=3, rngs=nnx.Rngs(0))     # torch: net = Net()
    params = to_params(net)                         # the core's dict
    net = from_params(params)                       # and back

Training, two ways:

- :func:`train_step` / :func:`eval_step`: what NNX code looks like
  (``nnx.Optimizer(net, tx, wrt=nnx.Param)``, ``nnx.jit``, ``optimizer.update``);
- :func:`fit`: :func:`jaxblitz.train.fit` for a ``Net``. Flax's performance guide
  says to split the module once outside the loop and train its state; that is
  what ``fit`` does (params out of the ``Net``, the core's compiled epoch,
  params back in), so checkpoints, exact resume, metrics and sharding are the
  core's, at the core's speed (BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from jaxblitz import data, kernels, models, train

Params = dict[str, Any]


class Linear(nnx.Module):
    """``nn.Linear(in_features, out_features)``: weight ``(out, in)``, bias
    ``(out,)``, PyTorch's initialisation (:func:`jaxblitz.models.init_linear`)."""

    def __init__(self, in_features: int, out_features: int, *, rngs: nnx.Rngs):
        p = models.init_linear(rngs.params(), in_features, out_features)
        self.weight = nnx.Param(p["weight"])
        self.bias = nnx.Param(p["bias"])

    def __call__(self, x: jax.Array) -> jax.Array:
        return models.linear(_values(self), x)


class Conv2d(nnx.Module):
    """``nn.Conv2d(in_channels, out_channels, kernel_size)``: weight OIHW, NCHW in
    and out, PyTorch's initialisation (:func:`jaxblitz.models.init_conv2d`)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, *, rngs: nnx.Rngs
    ):
        p = models.init_conv2d(rngs.params(), in_channels, out_channels, kernel_size)
        self.weight = nnx.Param(p["weight"])
        self.bias = nnx.Param(p["bias"])

    def __call__(self, x: jax.Array) -> jax.Array:
        return models.conv2d(_values(self), x)


def _values(module: nnx.Module) -> Params:
    """A module's parameters as the core's nested dict of arrays."""
    return nnx.to_pure_dict(nnx.state(module, nnx.Param))


class Net(nnx.Module):
    """The Blitz's ``Net``: two convolutions, pooling, three linear layers.

    ``in_channels`` 1 (section 3) or 3 (CIFAR-10, section 4); ``widths`` the two
    convolutions' output channels, as in :func:`jaxblitz.models.init_lenet`.
    """

    def __init__(
        self,
        in_channels: int = 1,
        widths: Sequence[int] = (6, 16),
        num_classes: int = 10,
        *,
        rngs: nnx.Rngs,
    ):
        if len(widths) != 2 or min(widths) < 1:
            raise ValueError(f"widths must be two positive ints, got {tuple(widths)}.")
        w1, w2 = (int(w) for w in widths)
        self.conv1 = Conv2d(in_channels, w1, 5, rngs=rngs)  # torch: nn.Conv2d(1, 6, 5)
        self.conv2 = Conv2d(w1, w2, 5, rngs=rngs)  # nn.Conv2d(6, 16, 5)
        self.fc1 = Linear(w2 * 5 * 5, 120, rngs=rngs)  # nn.Linear(16 * 5 * 5, 120)
        self.fc2 = Linear(120, 84, rngs=rngs)  # nn.Linear(120, 84)
        self.fc3 = Linear(84, num_classes, rngs=rngs)  # nn.Linear(84, 10)

    def __call__(
        self,
        x: jax.Array,  # (B, C, 32, 32)
        impl: models.Impl | None = None,
        chunk: int | None = None,
    ) -> jax.Array:
        """torch: ``forward``. The Blitz's lines, run by the core's
        :func:`jaxblitz.models.lenet` on this module's weights (its kernels,
        ``impl`` and ``chunk`` as there)::

            x = max_pool2d(relu(self.conv1(x)))   # (B, 6, 14, 14)
            x = max_pool2d(relu(self.conv2(x)))   # (B, 16, 5, 5)
            x = flatten(x)                        # (B, 400)
            x = relu(self.fc1(x))                 # (B, 120)
            x = relu(self.fc2(x))                 # (B, 84)
            return self.fc3(x)                    # (B, 10)
        """
        return models.lenet(to_params(self), x, impl, chunk)  # (B, 10)


# ---------------------------------------------------------------------------
# The core's params dict (and so PyTorch's state_dict) <-> Net.
# ---------------------------------------------------------------------------


def to_params(net: Net) -> Params:
    """``{"conv1": {"weight": w, "bias": b}, ...}``: the core's params (torch:
    ``net.state_dict()``, nested; :func:`jaxblitz.models.flatten_params` gives
    the dotted names)."""
    return _values(net)


def from_params(params: Params) -> Net:
    """A :class:`Net` holding ``params`` (the core's dict, or PyTorch's
    ``state_dict`` through :func:`jaxblitz.models.unflatten_params`); its sizes
    are read from the shapes (torch: ``net.load_state_dict(state_dict)``)."""
    try:
        w1, in_channels = params["conv1"]["weight"].shape[:2]
        w2 = params["conv2"]["weight"].shape[0]
        num_classes = params["fc3"]["weight"].shape[0]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ValueError(
            "from_params expects the core's LeNet params ({'conv1': {'weight': ..., "
            "'bias': ...}, 'conv2': ..., 'fc1': ..., 'fc2': ..., 'fc3': ...}); "
            f"could not read it ({type(e).__name__}: {e}). For a flat state_dict "
            "use models.unflatten_params first."
        ) from None
    net = nnx.eval_shape(
        lambda: Net(in_channels, (w1, w2), num_classes, rngs=nnx.Rngs(0))
    )  # shapes only: nothing is drawn
    state = nnx.state(net, nnx.Param)
    expected = models.named_shapes(nnx.to_pure_dict(state))
    got = models.named_shapes(params)
    if got != expected:
        raise ValueError(
            f"from_params: params shaped {got} do not fit the Blitz's Net, which "
            f"expects {expected}."
        )
    nnx.replace_by_pure_dict(state, jax.tree.map(jnp.asarray, params))
    nnx.update(net, state)
    return net


# ---------------------------------------------------------------------------
# Training as NNX code writes it.
# ---------------------------------------------------------------------------


def make_optimizer(net: Net, config: train.Config) -> nnx.Optimizer:
    """torch: ``optim.SGD(net.parameters(), lr=0.001, momentum=0.9)``; the same
    Optax transform as the core's (:func:`jaxblitz.train.make_optimizer`)."""
    return nnx.Optimizer(net, train.make_optimizer(config), wrt=nnx.Param)


def _loss_sum_and_grads(net: Net, images, labels, mask):
    """The batch's summed loss and its gradients (an ``nnx.State`` like the
    net's), taken ``kernels.grad_chunk`` images at a time as the core's step."""
    graphdef, params = nnx.split(net, nnx.Param)

    def masked_sum(params, images, labels, mask):
        logits = nnx.merge(graphdef, params)(images)
        return models.cross_entropy(logits, labels, mask) * jnp.sum(mask)

    chunk = kernels.grad_chunk(images.shape[0])
    value_and_grad = kernels.chunked_value_and_grad(masked_sum, chunk)
    return value_and_grad(params, images, labels, mask)


@nnx.jit
def train_step(
    net: Net,
    optimizer: nnx.Optimizer,
    images: jax.Array,  # (B, C, 32, 32)
    labels: jax.Array,  # (B,)
    mask: jax.Array,  # (B,) 1 for real examples, 0 for padding
) -> jax.Array:
    """One optimizer step, updating ``net`` and ``optimizer`` in place; returns
    the batch loss (torch: ``zero_grad``, ``forward``, ``backward``, ``step``).

    The same arithmetic as :func:`jaxblitz.train.train_step`. In a loop, wrap it
    once with ``nnx.cached_partial(train_step, net, optimizer)`` (Flax's
    performance guide): ``nnx.jit`` walks the module on every call otherwise.
    """
    loss, grads = _loss_sum_and_grads(net, images, labels, mask)
    count = jnp.maximum(jnp.sum(mask), 1)
    optimizer.update(net, jax.tree.map(lambda g: g / count, grads))
    return loss / count


@nnx.jit
def eval_step(net: Net, images: jax.Array) -> jax.Array:
    """The predicted class of each image ``(B,)`` (torch: ``torch.max(net(x), 1)``),
    the convolutions run ``kernels.eval_chunk`` images at a time."""
    chunk = kernels.eval_chunk(images.shape[0])
    return jnp.argmax(net(images, chunk=chunk), axis=-1)


# ---------------------------------------------------------------------------
# Training through the core's fit.
# ---------------------------------------------------------------------------


def init_net(config: train.Config, in_channels: int, num_classes: int = 10) -> Net:
    """The :class:`Net` holding the core's first weights for ``config``
    (:func:`jaxblitz.train.init_state`): an NNX run and a functional run of the
    same config start, and so end, with the same weights."""
    return from_params(train.init_state(config, in_channels, num_classes).params)


def fit(
    config: train.Config, dataset, net: Net | None = None, **kwargs
) -> tuple[Net, list[dict]]:
    """:func:`jaxblitz.train.fit` for an NNX ``net``: returns it trained (updated
    in place, as torch's training loop leaves its ``Net``) and the metrics.

    ``net``'s parameters are taken out once, the core's compiled epochs train them
    with a fresh optimizer state for ``config`` (``kwargs``: ``checkpointer``,
    ``resume``, ``runner``, ... as there; a resumed run takes its weights and
    optimizer state from the checkpoint), and the result is put back. None:
    :func:`init_net` (the functional run's first weights).
    """
    data.check_dataset(dataset)  # before its parts are read here
    in_channels, num_classes = dataset.images.shape[1], len(dataset.class_names)
    if net is None:
        net = init_net(config, in_channels, num_classes)
    params = to_params(net)
    widths = (params["conv1"]["weight"].shape[0], params["conv2"]["weight"].shape[0])
    if widths != tuple(config.widths):
        raise ValueError(
            f"fit: the Net has widths {widths} but config.widths is "
            f"{tuple(config.widths)}; build Net(widths={tuple(config.widths)}) or "
            f"set Config(widths={widths})."
        )
    params = jax.tree.map(jnp.copy, params)  # fit donates its state; keep net's
    tx = train.make_optimizer(config)
    state = train.TrainState(params, tx.init(params), jnp.zeros((), jnp.int32))
    state, history = train.fit(config, dataset, state, **kwargs)
    runner = kwargs.get("runner")
    trained = state.params if runner is None else runner.to_host(state.params)
    nnx.update(net, nnx.state(from_params(trained), nnx.Param))
    return net, history
