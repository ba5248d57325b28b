"""Runs in a subprocess with 8 simulated CPU devices; prints results as JSON.

``tests/test_parallel.py`` starts it once (JAX's device count is fixed when JAX
starts, so the many-device checks cannot share the test process).
"""

import json
import os

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["JAX_NUM_CPU_DEVICES"] = "8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from jaxblitz import kernels, models, parallel, train  # noqa: E402
from jaxblitz.data import Dataset  # noqa: E402


def max_rel(a, b) -> float:
    diffs = jax.tree.map(
        lambda x, y: float(
            np.max(np.abs(np.asarray(x) - np.asarray(y)))
            / (np.max(np.abs(np.asarray(y))) + 1e-12)
        ),
        a,
        b,
    )
    return max(jax.tree.leaves(diffs))


def random_dataset(rows: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    return Dataset(
        rng.uniform(-1, 1, (rows, 3, 32, 32)).astype(np.float32),
        rng.integers(0, 10, rows).astype(np.int32),
        tuple("abcdefghij"),
    )


def training(results: dict) -> None:
    """Params after an epoch on 1..8 devices vs one device, both loops."""
    ds = random_dataset(67, seed=0)
    for batch in (8, 7):  # 67 rows: the last batch is partial (3 and 4 rows)
        for loop in ("scan", "step"):
            cfg = train.Config(dataset="x", batch_size=batch, epochs=1, lr=0.01,
                               loop=loop)  # fmt: skip
            ref, ref_hist = train.fit(cfg, ds)
            for n in (1, 2, 3, 4, 8):
                state, hist = train.fit(
                    cfg, ds, runner=parallel.Sharded(parallel.make_mesh(n))
                )
                results[f"params {loop} batch {batch} devices {n}"] = {
                    "rel": max_rel(state.params, ref.params),
                    "loss_diff": float(
                        np.max(
                            np.abs(
                                np.subtract(hist[0]["losses"], ref_hist[0]["losses"])
                            )
                        )  # fmt: skip
                    ),
                    "steps": int(np.asarray(state.step.addressable_data(0))),
                    "replicated": state.params["fc1"][
                        "weight"
                    ].sharding.is_fully_replicated,
                }


def chunked(results: dict) -> None:
    """Batch 128: one device and 2 or 4 devices each chunk their gradient (by 8);
    8 devices' 16 rows run whole."""
    ds = random_dataset(300, seed=1)
    cfg = train.Config(dataset="x", batch_size=128, epochs=1, lr=0.01)
    ref, _ = train.fit(cfg, ds)
    for n in (2, 4, 8):
        state, _ = train.fit(cfg, ds, runner=parallel.Sharded(parallel.make_mesh(n)))
        results[f"chunked devices {n}"] = {
            "rel": max_rel(state.params, ref.params),
            "local_chunk": kernels.grad_chunk(128 // n, shard=True),
        }


def uneven(results: dict) -> None:
    """Loss and grads of a batch padded to 8 equal shards vs the plain batch."""
    key = jax.random.key(1)
    params = models.init_lenet(key, 3)
    mesh = parallel.make_mesh(8)
    for rows in (30, 10):
        x = jax.random.normal(jax.random.fold_in(key, rows), (rows, 3, 32, 32))
        y = jnp.arange(rows) % 10

        def loss(p, x, y, m):
            return models.cross_entropy(models.lenet(p, x), y, m)

        grad_fn = jax.jit(jax.value_and_grad(loss))
        ref_loss, ref_grads = grad_fn(params, x, y, jnp.ones(rows))
        size = parallel.padded_size(rows, 8)
        pad = size - rows
        xs = jax.device_put(jnp.pad(x, ((0, pad), (0, 0), (0, 0), (0, 0))),
                            NamedSharding(mesh, P("data")))  # fmt: skip
        ys = jax.device_put(jnp.pad(y, (0, pad)), NamedSharding(mesh, P("data")))
        ms = jax.device_put((jnp.arange(size) < rows).astype(jnp.float32),
                            NamedSharding(mesh, P("data")))  # fmt: skip
        reps = parallel.replicate(params, mesh)
        sh_loss, sh_grads = grad_fn(reps, xs, ys, ms)
        inside, out = parallel.per_device_view(
            mesh, np.asarray(x[:, 0, 0, :5]), lambda s: s[:, :2] * 2.0
        )
        results[f"uneven {rows}"] = {
            "loss_diff": abs(float(sh_loss) - float(ref_loss)),
            "grad_rel": max_rel(sh_grads, ref_grads),
            "shard_rows": [len(s.data) for s in xs.addressable_shards],
            "inside": inside,
            "outside": list(out.shape),
            "view_equal": bool(np.array_equal(out, np.asarray(x[:, 0, 0, :2]) * 2.0)),
        }


if __name__ == "__main__":
    results: dict = {"device_count": jax.device_count()}
    training(results)
    chunked(results)
    uneven(results)
    print("RESULTS " + json.dumps(results))
