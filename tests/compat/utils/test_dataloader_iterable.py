"""compat ``DataLoader`` over an ``IterableDataset`` with worker processes,
beside torch's: each worker iterates its own copy, shards itself with
``get_worker_info()``, and the batches come back in torch's order.

Workers are real processes, so every case keeps to two workers and a handful of
samples.
"""

import warnings

import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.utils import data as compat_data

pt = pytest.importorskip("torch")
# torch's workers fork this process, which has started JAX; they run torch only.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called")


def _info():
    """The worker's info under either library (compat's is None in torch's)."""
    return compat_data.get_worker_info() or pt.utils.data.get_worker_info()


def _base(lib):
    return lib.utils.data.IterableDataset


def _lists(loader):
    return [b.tolist() if hasattr(b, "tolist") else b for b in loader]


def _both(make, **kwargs):
    """The batches of ``make(lib)`` under compat and under torch."""
    out = []
    for lib in (torch, pt):
        loader = lib.utils.data.DataLoader(make(lib), **kwargs)
        out.append(_lists(loader))
    return out


def sharded(lib, n=11, weights=(3, 1)):
    """torch's documented pattern: each worker reads its share of range(n),
    here uneven (worker 0 gets 3/4), so one worker's stream ends first."""

    class Sharded(_base(lib)):
        def __iter__(self):
            info = _info()
            if info is None:
                return iter(range(n))
            cut = n * weights[0] // sum(weights)
            return iter(range(cut) if info.id == 0 else range(cut, n))

    return Sharded()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 2},
        {"batch_size": 3, "drop_last": True, "prefetch_factor": 1},
        {"batch_size": None},
    ],
    ids=["batched", "drop_last_prefetch_1", "unbatched"],
)
def test_sharded_workers_give_torchs_batches_in_torchs_order(kwargs):
    ours, theirs = _both(sharded, num_workers=2, **kwargs)
    assert ours == theirs
    single = _lists(torch.utils.data.DataLoader(sharded(torch), batch_size=2))
    assert single == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]


def whole(lib):
    class Whole(_base(lib)):
        def __iter__(self):
            return iter(range(3))

        def __len__(self):
            return 3

    return Whole()


def test_each_worker_iterates_its_own_copy_and_len_warns_as_torch():
    got = []
    for lib in (torch, pt):
        loader = lib.utils.data.DataLoader(whole(lib), batch_size=2, num_workers=2)
        assert len(loader) == 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = _lists(loader)
        messages = [str(w.message) for w in caught if "Length of" in str(w.message)]
        got.append((batches, len(messages), messages[-1].split("was reported")[1]))
    assert got[0] == got[1]
    assert got[0][0] == [[0, 1], [0, 1], [2], [2]]  # every worker, the whole stream


def test_len_warning_without_workers_as_torch():
    got = []
    for lib in (torch, pt):
        ds = whole(lib)
        ds.__class__.__len__ = lambda self: 2
        loader = lib.utils.data.DataLoader(ds, batch_size=None)
        assert len(loader) == 2
        with pytest.warns(UserWarning, match="Length of IterableDataset") as caught:
            batches = _lists(loader)
        got.append((batches, [str(w.message).split("reported")[1] for w in caught]))
    assert got[0] == got[1]


class Ranged:
    """torch's second documented pattern: worker_init_fn splits the range."""

    def __init__(self, lib, start, end):
        self.lib, self.start, self.end = lib.__name__, start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def _split(worker_id):
    info = _info()
    ds = info.dataset  # this worker's copy
    per = -(-(ds.end - ds.start) // info.num_workers)
    ds.start, ds.end = (
        ds.start + worker_id * per,
        min(ds.start + (worker_id + 1) * per, ds.end),
    )


def test_worker_init_fn_shards_each_workers_copy_as_torch():
    def make(lib):
        return type("R", (Ranged, _base(lib)), {})(lib, 3, 10)

    ours, theirs = _both(make, num_workers=2, worker_init_fn=_split, batch_size=2)
    assert ours == theirs == [[3, 4], [7, 8], [5, 6], [9]]


def test_persistent_workers_start_each_epoch_with_a_new_iterator():
    loader = torch.utils.data.DataLoader(
        sharded(torch), batch_size=2, num_workers=2, persistent_workers=True
    )
    theirs = pt.utils.data.DataLoader(
        sharded(pt), batch_size=2, num_workers=2, persistent_workers=True
    )
    first = _lists(loader)
    assert first == _lists(loader) == _lists(theirs) == _lists(theirs)


def failing(lib):
    class Failing(_base(lib)):
        def __iter__(self):
            if _info().id == 1:
                raise ValueError("no stream here")
            return iter(range(4))

    return Failing()


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_an_exception_in_a_workers_iter_is_raised_naming_the_worker(lib_name):
    lib = torch if lib_name == "compat" else pt
    loader = lib.utils.data.DataLoader(failing(lib), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match="in DataLoader worker process 1"):
        list(loader)
