"""compat ``DataLoader`` with worker processes, beside torch's: each argument
honoured with torch's observable behaviour or refused naming it.

Workers are real processes (a fresh interpreter each), so every case here keeps
to one or two workers and a handful of samples.
"""

import os
import random
import threading
import time
import warnings

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.utils import data as compat_data
from jaxblitz.compat.utils._worker import _generate_state

# torch's workers fork this process, which has started JAX; they run torch only.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called")


def _data(lib):
    return lib.utils.data


def _torch():
    return pytest.importorskip("torch")


def _lists(loader):
    return [b.tolist() if hasattr(b, "tolist") else b for b in loader]


class Scaled:
    """Yields ``index * scale``; ``worker_init_fn`` sets the worker's scale."""

    scale = 1

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return index * self.scale


def _scale_by_100(worker_id):
    info = compat_data.get_worker_info()
    if info is None:  # under torch
        info = pytest.importorskip("torch.utils.data").get_worker_info()
    info.dataset.scale = 100


def test_worker_init_fn_configures_each_workers_dataset_as_in_torch():
    loader = torch.utils.data.DataLoader(
        Scaled(), batch_size=2, num_workers=2, worker_init_fn=_scale_by_100
    )
    assert _lists(loader) == [[0, 100], [200, 300]]
    pt = _torch()
    theirs = pt.utils.data.DataLoader(
        Scaled(), batch_size=2, num_workers=2, worker_init_fn=_scale_by_100
    )
    assert _lists(theirs) == [[0, 100], [200, 300]]


class Described:
    """Each sample is what ``get_worker_info`` says in the process reading it."""

    def __init__(self, lib):
        self.lib = lib.__name__

    def __len__(self):
        return 2  # one sample per worker: each worker's first draws

    def __getitem__(self, index):
        import importlib

        info = importlib.import_module(self.lib).utils.data.get_worker_info()
        return (
            info.id,
            info.num_workers,
            info.seed - info.id,  # torch: base_seed + worker id
            info.dataset is self,  # the worker's own copy of the dataset
            random.random() == random.Random(info.seed).random(),
            np.random.randint(1 << 30)  # noqa: NPY002 (torch seeds this one)
            == np.random.RandomState(
                _generate_state(info.seed - info.id, info.id)
            ).randint(1 << 30),
        )


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_get_worker_info_and_the_workers_seeds_follow_torchs_rules(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    assert lib.utils.data.get_worker_info() is None  # the main process
    loader = lib.utils.data.DataLoader(
        Described(lib), batch_size=None, num_workers=2, collate_fn=lambda s: s
    )
    rows = list(loader)
    assert [r[:2] for r in rows] == [(0, 2), (1, 2)]
    assert len({r[2] for r in rows}) == 1  # one base seed for every worker
    assert all(r[3:] == (True, True, True) for r in rows)


def test_each_start_of_workers_gets_a_new_base_seed_repeatable_by_seeding():
    def loader(generator):
        return torch.utils.data.DataLoader(
            Described(torch),
            batch_size=None,
            num_workers=1,
            collate_fn=lambda s: s,
            generator=generator,
        )

    twice = loader(torch.Generator().manual_seed(7))
    first, second = (next(iter(twice))[2] for _ in range(2))
    assert first != second
    assert next(iter(loader(torch.Generator().manual_seed(7))))[2] == first
    assert next(iter(loader(torch.Generator().manual_seed(8))))[2] != first


def test_workers_leave_the_random_stream_as_a_single_process_does():
    def after(num_workers):
        torch.manual_seed(0)
        loader = torch.utils.data.DataLoader(
            list(range(6)), batch_size=2, shuffle=True, num_workers=num_workers
        )
        order = [b.tolist() for _ in range(2) for b in loader]
        return order, torch.rand(3).tolist()

    assert after(2) == after(0)


def _in_a_worker():
    if compat_data.get_worker_info() is not None:
        return True
    torch_data = pytest.importorskip("torch.utils.data")
    return torch_data.get_worker_info() is not None


class Sleepy:
    def __len__(self):
        return 2

    def __getitem__(self, index):
        if index == 1:
            assert _in_a_worker(), "a sample was read in the main process"
            time.sleep(60)  # blocks, as a read from a hung network share would
        return index


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_a_blocking_getitem_raises_torchs_timeout_error(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(Sleepy(), num_workers=1, timeout=1)
    batches = iter(loader)
    assert next(batches).tolist() == [0]
    began = time.time()
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 1 seconds$"):
        next(batches)
    assert 1 <= time.time() - began < 15
    del batches


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_timeout_without_workers_is_refused_when_iterated(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(list(range(3)), timeout=2)
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(loader)


def test_batches_from_workers_are_bitwise_the_single_process_ones():
    x = torch.randn(11, 3, 4, 4)
    ds = torch.utils.data.TensorDataset(x, torch.arange(11))

    def run(num_workers):
        g = torch.Generator().manual_seed(3)
        loader = torch.utils.data.DataLoader(
            ds, batch_size=3, shuffle=True, generator=g, num_workers=num_workers
        )
        return [(a.numpy(), b.numpy()) for a, b in loader]

    alone, workers = run(0), run(2)
    assert len(alone) == len(workers) == 4
    for (a0, b0), (a2, b2) in zip(alone, workers, strict=True):
        assert a0.dtype == a2.dtype == np.float32 and b2.dtype == np.int64
        np.testing.assert_array_equal(a0, a2)
        np.testing.assert_array_equal(b0, b2)


class WithJax:
    """Compat tensor operations and a random transform inside the worker."""

    def __len__(self):
        return 3

    def __getitem__(self, index):
        import jaxblitz.compat as torch
        import jaxblitz.compat.vision.transforms as T

        flipped = T.RandomHorizontalFlip(p=1.0)(torch.arange(4.0).view(1, 1, 4))
        return torch.tensor([index]) * 2, flipped


def test_compat_tensor_operations_run_inside_workers():
    loader = torch.utils.data.DataLoader(WithJax(), batch_size=3, num_workers=1)
    (doubled, flipped) = next(iter(loader))
    assert doubled.tolist() == [[0], [2], [4]]
    assert flipped.shape == (3, 1, 1, 4) and flipped[0, 0, 0].tolist() == [3, 2, 1, 0]


class Failing:
    def __len__(self):
        return 2

    def __getitem__(self, index):
        if index == 1:
            raise ValueError(f"bad sample {index}")
        return index


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_an_exception_in_a_worker_is_raised_naming_the_worker(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(Failing(), num_workers=2)
    with pytest.raises(ValueError) as e:
        list(loader)
    text = str(e.value)
    assert text.startswith(
        "Caught ValueError in DataLoader worker process 1.\n"
        "Original Traceback (most recent call last):\n"
    )
    assert text.endswith("ValueError: bad sample 1\n")


def _refuse_to_start(worker_id):
    raise OSError(f"worker {worker_id} cannot open its shard")


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_an_exception_in_worker_init_fn_is_raised_at_the_first_batch(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(
        list(range(2)), num_workers=1, worker_init_fn=_refuse_to_start
    )
    with pytest.raises(OSError) as e:
        list(loader)
    assert str(e.value).startswith("Caught OSError in DataLoader worker process 0.")
    assert str(e.value).endswith("OSError: worker 0 cannot open its shard\n")


class Dying:
    def __len__(self):
        return 2

    def __getitem__(self, index):
        assert _in_a_worker(), "a sample was read in the main process"
        os._exit(3)


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_a_worker_that_dies_is_reported_by_pid(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(Dying(), num_workers=1)
    with pytest.raises(
        RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited"
    ):
        list(loader)


class Counting:
    """Each worker counts the samples it has read."""

    calls = 0

    def __len__(self):
        return 2

    def __getitem__(self, index):
        self.calls += 1
        return self.calls


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_persistent_workers_keep_their_state_between_epochs(lib_name):
    lib = torch if lib_name == "compat" else _torch()

    def epochs(persistent):
        loader = lib.utils.data.DataLoader(
            Counting(), num_workers=1, persistent_workers=persistent
        )
        return [_lists(loader) for _ in range(2)]

    assert epochs(True) == [[[1], [2]], [[3], [4]]]
    assert epochs(False) == [[[1], [2]], [[1], [2]]]


class SlowFirst:
    def __len__(self):
        return 4

    def __getitem__(self, index):
        if index == 0:
            time.sleep(1.5)
        return index


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_in_order_false_yields_batches_as_workers_finish(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(SlowFirst(), num_workers=2, in_order=False)
    got = [b.item() for b in loader]
    assert sorted(got) == [0, 1, 2, 3] and got[0] != 0


ARGUMENT_ERRORS = {
    "negative timeout": (dict(timeout=-1), ValueError),
    "prefetch without workers": (dict(prefetch_factor=2), ValueError),
    "negative prefetch": (dict(num_workers=1, prefetch_factor=-1), ValueError),
    "persistent without workers": (dict(persistent_workers=True), ValueError),
    "context without workers": (dict(multiprocessing_context="spawn"), ValueError),
    "unknown start method": (
        dict(num_workers=1, multiprocessing_context="thread"),
        ValueError,
    ),
    "context of another type": (
        dict(num_workers=1, multiprocessing_context=3),
        TypeError,
    ),
}


@pytest.mark.parametrize("case", ARGUMENT_ERRORS)
def test_bad_worker_arguments_are_refused_in_torchs_words(case):
    kwargs, kind = ARGUMENT_ERRORS[case]
    with pytest.raises(kind) as ours:
        torch.utils.data.DataLoader(list(range(3)), **kwargs)
    pt = _torch()
    with pytest.raises(kind) as theirs:
        pt.utils.data.DataLoader(list(range(3)), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_prefetch_factor_zero_is_refused_when_iterated(lib_name):
    lib = torch if lib_name == "compat" else _torch()
    loader = lib.utils.data.DataLoader(list(range(3)), num_workers=1, prefetch_factor=0)
    with pytest.raises(AssertionError, match="prefetch_factor must be greater than 0"):
        iter(loader)


def test_a_fork_context_is_refused_and_spawn_or_forkserver_accepted():
    with pytest.raises(NotImplementedError, match="multiprocessing_context='fork'"):
        torch.utils.data.DataLoader(
            list(range(3)), num_workers=1, multiprocessing_context="fork"
        )
    for method in ("spawn", "forkserver"):
        loader = torch.utils.data.DataLoader(
            list(range(3)), num_workers=1, multiprocessing_context=method
        )
        assert loader.multiprocessing_context.get_start_method() == method


def test_pin_memory_warns_as_torch_does_on_a_machine_without_accelerator():
    if torch.accelerator.is_available():
        pytest.skip("this machine has an accelerator")

    def caught(lib):
        loader = lib.utils.data.DataLoader(
            list(range(2)), pin_memory=True, pin_memory_device="cuda"
        )
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            values = _lists(loader)
        return values, [str(w.message) for w in seen]

    ours = caught(torch)
    assert ours[0] == [[0], [1]]
    assert any("no accelerator is found" in m for m in ours[1])
    assert ours == caught(_torch())


def test_a_dataset_that_cannot_be_pickled_is_refused_naming_it():
    class Locked(Scaled):
        def __init__(self):
            self.lock = threading.Lock()

    loader = torch.utils.data.DataLoader(Locked(), num_workers=1)
    with pytest.raises(TypeError, match="sends the dataset to each worker process"):
        list(loader)


def test_get_worker_info_is_offered_where_torch_has_it():
    assert compat_data.get_worker_info is torch.utils.data.get_worker_info
    assert compat_data.get_worker_info() is None
