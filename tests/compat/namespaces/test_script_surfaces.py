"""What ported training scripts import besides the model code -- ``torch.jit``,
``torch.testing``, ``torch.utils.tensorboard``, ``torch.hub``, ``torch.profiler``
-- against PyTorch: the same results and warnings, or a refusal by name at use."""

from __future__ import annotations

import importlib
import os
import warnings

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def caught(make):
    """``make()``'s result and the (category, message) of each warning it gave."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = make()
    return result, [(w.category.__name__, str(w.message)) for w in seen]


@pytest.mark.parametrize("name", ["jit"])
def test_each_surface_is_an_importable_module_and_an_attribute(name):
    module = importlib.import_module(f"jaxblitz.compat.{name}")
    attribute = ct
    for part in name.split("."):
        attribute = getattr(attribute, part)
    assert attribute is module


# -- torch.jit -----------------------------------------------------------------


def _nets():
    """A compat net and a torch net with the same weights."""
    theirs = pt.nn.Sequential(pt.nn.Linear(3, 4), pt.nn.Dropout(0.5))
    ours = ct.nn.Sequential(ct.nn.Linear(3, 4), ct.nn.Dropout(0.5))
    ours.load_state_dict(
        {k: ct.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    )
    return ours, theirs


@pytest.mark.parametrize(
    "make",
    [lambda t, m: t.jit.script(m), lambda t, m: t.jit.trace(m, t.ones(2, 3))],
    ids=["script", "trace"],
)
def test_script_and_trace_give_the_module_that_runs_and_trains_as_the_original(
    make,
):
    net, torch_net = _nets()
    ours, our_warnings = caught(lambda: make(ct, net))
    theirs, their_warnings = caught(lambda: make(pt, torch_net))
    assert our_warnings == their_warnings[:1]  # torch's trace warns twice more
    assert ours is net and list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.training and not isinstance(ours, ct.jit.ScriptModule)
    ours.eval()
    torch_net.eval()  # (torch's traced module would keep the example's training path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(
        ours(ct.tensor(x)).detach().numpy(),
        torch_net(pt.tensor(x)).detach().numpy(),
        rtol=1e-5,  # float32 sums in another order: a few ulps (the weights are
        atol=1e-6,  # torch's random init, so a value near 0 can come up)
    )
    assert not net.training


def test_a_scripted_function_follows_the_values_on_every_call():
    def sign_flip(x):
        return x if float(x.sum()) > 0 else -x

    (scripted, traced), seen = caught(
        lambda: (ct.jit.script(sign_flip), ct.jit.trace(sign_flip, ct.ones(2)))
    )
    assert scripted is traced is sign_flip
    assert [message for _, message in seen] == [
        "`torch.jit.script` is deprecated. Please switch to `torch.compile` or "
        "`torch.export`.",
        "`torch.jit.trace` is deprecated. Please switch to `torch.compile` or "
        "`torch.export`.",
    ]
    assert traced(ct.tensor([-1.0, -2.0])).tolist() == [1.0, 2.0]


def test_the_decorators_and_queries_answer_as_torchs():
    def f(x):
        return x + 1

    for torch in (ct, pt):
        assert torch.jit.ignore(f) is f and torch.jit.unused(f) is f
        assert torch.jit.export(f) is f
        assert torch.jit.script_if_tracing(f)(1) == 2
        assert torch.jit.is_scripting() is torch.jit.is_tracing() is False
        assert torch.jit.annotate(list[int], [3]) == [3]
        assert torch.jit.Final[int] == __import__("typing").Final[int]
    ours, our_warnings = caught(lambda: ct.jit.ignore(drop=True)(f))
    _, their_warnings = caught(lambda: pt.jit.ignore(drop=True)(f))
    assert ours is f and our_warnings == their_warnings
    with pytest.raises(RuntimeError, match="must be a bool or a function but got 3"):
        ct.jit.ignore(3)


def _fork_and_wait(torch):
    future = torch.jit.fork(lambda x, y=2: x + y, 1, y=5)
    return future, torch.jit.wait(future)


def _boom():
    raise ValueError("boom")


@pytest.mark.parametrize("torch", [ct, pt], ids=["compat", "torch"])
def test_fork_runs_at_once_and_wait_gives_its_result(torch):
    (future, value), seen = caught(lambda: _fork_and_wait(torch))
    assert value == 6 and future.done() and future.value() == 6
    assert future.then(lambda fut: fut.value() * 10).wait() == 60
    assert seen == caught(lambda: _fork_and_wait(pt))[1]
    with pytest.raises(ValueError, match="boom"):
        caught(lambda: torch.jit.fork(_boom))


def test_freeze_and_optimize_for_inference_return_the_module():
    net, torch_net = _nets()
    frozen, seen = caught(lambda: ct.jit.optimize_for_inference(ct.jit.freeze(net)))
    assert frozen is net
    scripted = caught(lambda: pt.jit.script(torch_net.eval()))[0]
    _, their_seen = caught(
        lambda: pt.jit.optimize_for_inference(pt.jit.freeze(scripted))
    )
    assert seen == [w for w in their_seen if "jit.script" not in w[1]]
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        caught(lambda: ct.jit.freeze(lambda x: x))


@pytest.mark.parametrize("call", [
    lambda jit, tmp: jit.save(ct.nn.Linear(2, 2), str(tmp / "m.pt")),
    lambda jit, tmp: jit.load(str(tmp / "m.pt")),
])  # fmt: skip
def test_torchscript_archives_are_refused_by_name_pointing_at_state_dicts(
    call, tmp_path
):
    with pytest.raises(NotImplementedError, match=r"torch\.jit\.(save|load) is not su"):
        call(ct.jit, tmp_path)
    try:
        call(ct.jit, tmp_path)
    except NotImplementedError as error:
        assert "state_dict" in str(error)
    assert not (tmp_path / "m.pt").exists()


def test_torchscript_only_names_are_refused_by_name_and_hasattr_is_false():
    with pytest.raises(NotImplementedError, match="torch.jit.CompilationUnit is not"):
        ct.jit.CompilationUnit  # noqa: B018
    assert not hasattr(ct.jit, "interface")


# -- torch.testing ---------------------------------------------------------------


def _both(make):
    """``make`` on each side: (compat's, torch's)."""
    return make(ct), make(pt)


def _outcome(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 -- the outcome is what is compared
        return type(error).__name__, str(error)
    return "passed"


@pytest.mark.parametrize(
    "make, options",
    [
        (lambda t: (t.tensor([1.0, 2.0, 3.0]), t.tensor([1.0, 2.5, 3.1])), {}),
        (lambda t: (t.eye(2), t.eye(2) + t.tensor([[0.0, 0.0], [0.0, 1e-5]])), {}),
        (lambda t: (t.tensor(1.0), t.tensor(1.5)), {}),
        (lambda t: (t.tensor([1, 2, 3]), t.tensor([1, 2, 4])), {}),
        (lambda t: (t.tensor([0.0, 5.0]), t.tensor([0.0, 0.0])), {}),
        (lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, float("inf")])), {}),
        (
            lambda t: (
                t.tensor([1.0, 2.0, 3.0]).half(),
                t.tensor([1.0, 2.0, 3.01]).half(),
            ),
            {},
        ),
        (
            lambda t: (
                t.tensor([1.0, 3.1]).bfloat16(),
                t.tensor([1.0, 3.0]).bfloat16(),
            ),
            {},
        ),
        (lambda t: (t.tensor([1.0]), t.tensor([1.0], dtype=t.float64)), {}),
        (
            lambda t: (t.tensor([1.0]), t.tensor([1.5], dtype=t.float64)),
            {"check_dtype": False},
        ),
        (lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0, 3.0])), {}),
        (lambda t: (t.tensor([float("nan")]), t.tensor([float("nan")])), {}),
        (
            lambda t: (t.tensor([float("nan")]), t.tensor([float("nan")])),
            {"equal_nan": True},
        ),
        (
            lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.1])),
            {"rtol": 0.1, "atol": 0},
        ),
        (lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.1])), {"rtol": 0.1}),
        (lambda t: (t.tensor([1.0]), t.tensor([2.0])), {"msg": "custom"}),
        (lambda t: (t.tensor([1.0]), t.tensor([2.0])), {"msg": lambda m: f"<{m}>"}),
        (
            lambda t: (
                [t.ones(1), (t.ones(1), {"x": t.ones(1)})],
                [t.ones(1), (t.ones(1), {"x": t.zeros(1)})],
            ),
            {},
        ),
        (lambda t: ({"a": t.ones(1)}, {"b": t.ones(1)}), {}),
        (lambda t: ([1, 2], [1, 2, 3]), {}),
        (lambda t: (1.0, 1.1), {}),
        (lambda t: (1, 1.0), {}),
        (lambda t: (True, False), {}),
        (lambda t: (None, 1), {}),
        (lambda t: ("a", "a"), {}),
        (lambda t: (np.array([1.0, 2.0]), np.array([1.0, 2.5])), {}),
    ],
)
def test_assert_close_passes_and_fails_as_torchs_with_its_message(make, options):
    ours, theirs = _both(
        lambda t: _outcome(lambda: t.testing.assert_close(*make(t), **options))
    )
    assert ours == theirs


def test_assert_close_names_the_classes_it_cannot_compare():
    with pytest.raises(TypeError, match="No comparison pair was able to handle"):
        ct.testing.assert_close(ct.ones(1), [1.0])


def test_assert_allclose_is_still_there_with_its_warning_and_older_tolerances():
    for call in (
        lambda t: t.testing.assert_allclose(t.tensor([1.0, 2.0]), [1.0, 2.0001]),
        lambda t: t.testing.assert_allclose(t.tensor([1.0, float("nan")]), [1.0, 2.0]),
    ):
        ours, theirs = _both(
            lambda t, call=call: caught(lambda: _outcome(lambda: call(t)))
        )
        assert ours == theirs


@pytest.mark.parametrize(
    "shape, options",
    [
        ((8,), {"dtype": "float32"}),
        ((8,), {"dtype": "int64"}),
        ((8,), {"dtype": "uint8"}),
        ((8,), {"dtype": "bool"}),
        ((2, 4), {"dtype": "float32", "noncontiguous": True}),
        (((8,),), {"dtype": "float64", "requires_grad": True}),
        ((8,), {"dtype": "int8", "low": -2, "high": 2, "exclude_zero": True}),
        ((8,), {"dtype": "float16", "low": 1.5, "high": 1.6}),
        ((4,), {"dtype": "int32", "requires_grad": True}),
        ((5,), {"dtype": "float32", "low": 2, "high": 1}),
        ((5,), {"dtype": "float32", "low": 1, "high": 1}),
        ((5,), {"dtype": "uint8", "low": -10, "high": -1}),
        ((5,), {"dtype": "float32", "low": float("nan")}),
    ],
)
def test_make_tensor_gives_torchs_dtype_shape_range_and_errors(shape, options):
    def make(t):
        kw = {**options, "dtype": getattr(t, options["dtype"])}
        try:
            x, seen = caught(lambda: t.testing.make_tensor(*shape, device="cpu", **kw))
        except ValueError as error:
            return str(error)
        values = x.detach().double().numpy()
        low, high = (
            options.get("low", -9 if x.dtype != t.uint8 else 0),
            options.get("high", 9),
        )
        inside = ((values >= low) & (values <= high)).all()
        zero = options.get("exclude_zero") and (values == 0).any()
        return (
            str(x.dtype),
            tuple(x.shape),
            x.is_contiguous(),
            x.requires_grad,
            seen,
            inside,
            zero,
        )

    ours, theirs = _both(make)
    assert ours == theirs


def test_make_tensor_refuses_memory_format_by_name():
    with pytest.raises(NotImplementedError, match="make_tensor: memory_format"):
        ct.testing.make_tensor(2, 2, dtype=ct.float32, device="cpu", memory_format=1)


# -- torch.utils.tensorboard ---------------------------------------------------------


def _record(torch, writer_class, logdir):
    """The same calls, with the same numbers, through either SummaryWriter."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=300).astype(np.float32)
    chw = rng.random((3, 6, 5)).astype(np.float32)
    nchw = rng.random((10, 1, 4, 3)).astype(np.float32)
    hwc = (rng.random((4, 5, 3)) * 255).astype(np.uint8)
    with writer_class(logdir) as w:
        w.add_scalar("loss/train", torch.tensor(0.25), 0)
        w.add_scalar("loss/train", 0.125, 1)
        w.add_scalar("acc", torch.tensor([0.5], dtype=torch.float64), 2, new_style=True)
        w.add_scalars("run", {"a": 1.0, "b": torch.tensor(2.0)}, 3)
        w.add_histogram("w", torch.tensor(values), 4)
        w.add_histogram("w_auto", torch.tensor(values), 5, bins="auto", max_bins=7)
        w.add_histogram("ints", torch.tensor([1, 2, 2, 3]), 5)
        w.add_image("chw", torch.tensor(chw), 6)
        w.add_image("hwc", hwc, 6, dataformats="HWC")
        w.add_image("hw", torch.tensor(chw[0]), 6, dataformats="HW")
        w.add_images("nchw", torch.tensor(nchw), 7)
        w.add_text("note", "hello *world*", 8)
        w.add_hparams(
            {"lr": 0.1, "bs": 32, "opt": "sgd"}, {"hp/acc": 0.9}, run_name="hp"
        )


def _events(logdir):
    """Every event under ``logdir``: (its run's folder, the event without its time)."""
    import os

    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    found = []
    for root, _, files in sorted(os.walk(logdir)):
        for name in sorted(files):
            for event in EventFileLoader(os.path.join(root, name)).Load():
                event.wall_time = 0
                found.append((os.path.relpath(root, logdir), event))
    return found


def test_summary_writer_writes_the_events_torchs_writes(tmp_path):
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from jaxblitz.compat.utils.tensorboard import SummaryWriter

    _record(ct, SummaryWriter, tmp_path / "ours")
    _record(pt, TorchWriter, tmp_path / "theirs")
    ours, theirs = _events(tmp_path / "ours"), _events(tmp_path / "theirs")
    assert [run for run, _ in ours] == [run for run, _ in theirs]
    assert {"run_a", "run_b", "hp"} <= {run for run, _ in ours}
    for (_, mine), (_, expected) in zip(ours, theirs, strict=True):
        assert mine == expected  # tags, steps, values, buckets, PNG bytes

    from tensorboard.backend.event_processing.event_accumulator import (
        EventAccumulator,
    )

    run = EventAccumulator(str(tmp_path / "ours"), size_guidance={"images": 0})
    run.Reload()
    assert [(s.step, s.value) for s in run.Scalars("loss/train")] == [
        (0, 0.25),
        (1, 0.125),
    ]
    assert [(i.width, i.height) for i in run.Images("nchw")] == [(24, 8)]
    histogram = run.Histograms("w")[0].histogram_value
    assert histogram.num == 300 and sum(histogram.bucket) == 300


def test_summary_writer_defaults_to_runs_date_host_as_torch(tmp_path, monkeypatch):
    pytest.importorskip("tensorboard")
    import os
    import re
    import socket

    from jaxblitz.compat.utils.tensorboard import SummaryWriter

    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1")
    writer.add_scalar("x", 1.0)
    writer.close()
    writer.close()  # a second close does nothing, as torch's
    folder, name = os.path.split(writer.log_dir)
    assert folder == "runs" and os.path.isdir(writer.log_dir)
    assert re.fullmatch(
        r"[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname())
        + r"_lr0\.1",
        name,
    )  # fmt: skip


def test_summary_writer_refuses_add_graph_by_name(tmp_path):
    pytest.importorskip("tensorboard")
    from jaxblitz.compat.utils.tensorboard import SummaryWriter

    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(NotImplementedError, match="SummaryWriter.add_graph is not"):
            writer.add_graph(ct.nn.Linear(2, 2), ct.ones(1, 2))
        assert not hasattr(writer, "add_embedding")
        with pytest.raises(AssertionError, match="Tensor should contain one element"):
            writer.add_scalar("x", ct.ones(2))


def test_without_tensorboard_the_import_fails_as_torchs(monkeypatch):
    import sys

    for name in ("torch.utils.tensorboard", "jaxblitz.compat.utils.tensorboard"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    errors = []
    for name in ("torch.utils.tensorboard", "jaxblitz.compat.utils.tensorboard"):
        with pytest.raises(ImportError) as caught_error:
            importlib.import_module(name)
        errors.append((caught_error.type, str(caught_error.value)))
    assert errors[0] == errors[1]


# -- torch.hub -------------------------------------------------------------------


def test_hub_dir_follows_torch_home_and_set_dir_as_torchs(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert ct.hub.get_dir() == pt.hub.get_dir() == str(tmp_path / "home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ct.hub.get_dir() == pt.hub.get_dir()
    monkeypatch.setattr(ct.hub, "_hub_dir", None)
    ct.hub.set_dir("~/elsewhere")
    assert ct.hub.get_dir() == os.path.expanduser("~/elsewhere")


def _saved_weights(folder):
    """A torch-saved state dict named as torchvision names them (hash prefix)."""
    import hashlib

    path = folder / "weights.pth"
    pt.save({"w": pt.arange(3.0)}, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return path.rename(folder / f"net-{digest[:8]}.pth")


def test_a_cached_checkpoint_loads_without_network(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    monkeypatch.setattr(ct.hub, "_hub_dir", None)
    (tmp_path / "hub" / "checkpoints").mkdir(parents=True)
    cached = _saved_weights(tmp_path / "hub" / "checkpoints")
    url = "https://download.example.invalid/models/" + cached.name
    monkeypatch.setattr(ct.hub, "urlopen", None)  # any download attempt would fail
    state = ct.hub.load_state_dict_from_url(url, map_location="cpu")
    assert state["w"].tolist() == [0.0, 1.0, 2.0]


def test_a_missing_checkpoint_is_downloaded_and_checked_as_torch(tmp_path, capsys):
    source = _saved_weights(tmp_path)
    url = source.as_uri()  # file://: the download path without network
    seen = []
    for torch in (ct, pt):
        folder = tmp_path / torch.__name__
        capsys.readouterr()
        state = torch.hub.load_state_dict_from_url(
            url, model_dir=str(folder), check_hash=True, progress=False
        )
        said = capsys.readouterr().out.replace(str(folder), "<dir>")
        seen.append((state["w"].tolist(), said))
        bad = tmp_path / "net-deadbeef.pth"
        bad.write_bytes(source.read_bytes())
        with pytest.raises(RuntimeError, match='invalid hash value .expected "dead'):
            torch.hub.load_state_dict_from_url(
                bad.as_uri(), model_dir=str(folder / "bad"), check_hash=True
            )
        assert list((folder / "bad").iterdir()) == []  # nothing half-written is left
    assert seen[0] == seen[1]


def test_a_missing_checkpoint_without_network_says_where_to_put_it(tmp_path):
    import urllib.error

    url = "http://127.0.0.1:9/net.pth"  # the discard port: refused at once
    with pytest.raises(urllib.error.URLError) as caught_error:
        ct.hub.load_state_dict_from_url(url, model_dir=str(tmp_path), progress=False)
    assert str(tmp_path / "net.pth") in caught_error.value.__notes__[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["load", "list", "help"])
def test_hub_load_list_and_help_are_refused_by_name(name):
    with pytest.raises(NotImplementedError, match=f"torch.hub.{name} is not supported"):
        getattr(ct.hub, name)("pytorch/vision", "resnet18")


# -- torch.profiler --------------------------------------------------------------


def test_record_function_names_its_span_in_jaxs_trace(tmp_path):
    import jax

    @ct.profiler.record_function("decorated_step")
    def step(x):
        return (x * 2).sum()

    with jax.profiler.trace(str(tmp_path)):
        with ct.profiler.record_function("forward_pass") as span:
            ct.ones(3) + 1
        assert step(ct.ones(2)).item() == 4.0
    assert isinstance(span, ct.profiler.record_function)
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*.xplane.pb"))
    assert b"forward_pass" in written and b"decorated_step" in written


def test_schedule_gives_torchs_actions_and_checks():
    options = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    ours, theirs = (t.profiler.schedule(**options) for t in (ct, pt))
    assert [ours(i).name for i in range(12)] == [theirs(i).name for i in range(12)]
    for torch in (ct, pt):
        _, seen = caught(
            lambda t=torch: t.profiler.schedule(wait=0, warmup=0, active=1)
        )
        assert seen == [("UserWarning", "Profiler won't be using warmup, this can skew "
                         "profiler results")]  # fmt: skip
        with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
            torch.profiler.schedule(wait=0, warmup=1, active=0)
    assert [a.name for a in ct.profiler.ProfilerActivity] == [
        a for a in pt.profiler.ProfilerActivity.__members__
    ]


def _small_step(torch):
    """A Linear, a relu and a loss, forward and backward, inside labelled spans."""
    net = torch.nn.Linear(4, 3)
    x, y = torch.ones(2, 4), torch.tensor([0, 2])
    prof = torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True
    )
    with prof:
        with torch.profiler.record_function("outer"):
            with torch.profiler.record_function("inner"):
                out = torch.nn.functional.relu(net(x))
            loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
    return prof


def test_profile_names_the_ops_the_user_called_as_torch_does():
    ours, theirs = _small_step(ct), _small_step(pt)
    wanted = {"outer", "inner", "aten::linear", "aten::relu"}
    wanted |= {"aten::cross_entropy_loss", "AddmmBackward0", "ReluBackward0"}
    assert wanted <= {e.key for e in theirs.key_averages()}
    assert wanted <= {e.key for e in ours.key_averages()}
    (relu,) = [e for e in ours.key_averages() if e.key == "aten::relu"]
    assert relu.count == 1 and relu.cpu_time_total > 0
    shaped = ours.key_averages(group_by_input_shape=True)
    (linear,) = [e for e in shaped if e.key == "aten::linear"]
    assert linear.input_shapes == [[2, 4], [3, 4], [3]]


def test_record_function_spans_nest_and_hold_their_ops():
    events = _small_step(ct).events()
    (outer,) = [e for e in events if e.name == "outer"]
    (inner,) = [e for e in events if e.name == "inner"]
    assert inner.cpu_parent is outer
    assert [e.name for e in inner.cpu_children] == ["aten::linear", "aten::relu"]
    assert outer.cpu_time_total >= inner.cpu_time_total > 0
    assert outer.self_cpu_time_total < outer.cpu_time_total


def test_the_table_has_torchs_header_and_rows():
    def layout(torch, **options):
        averages = _small_step(torch).key_averages(**options)
        lines = averages.table(sort_by="cpu_time_total", row_limit=3).splitlines()
        header = [h.strip() for h in lines[1].split("  ") if h.strip()]
        return header, len(lines), set(lines[0]), lines[-1].split(":")[0]

    assert layout(ct) == layout(pt)
    shaped = layout(ct, group_by_input_shape=True)
    assert shaped == layout(pt, group_by_input_shape=True)
    assert shaped[0][-1] == "Input Shapes"


def test_the_chrome_trace_is_json_with_the_spans(tmp_path):
    import json

    path = tmp_path / "trace.json"
    _small_step(ct).export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["name"] for e in events}
    assert {"outer", "inner", "aten::linear", "ReluBackward0"} <= names
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_a_scheduled_profile_calls_its_handler_as_torch_does(tmp_path):
    def run(torch, folder):
        calls = []

        def handler(prof):
            calls.append((prof.step_num, len(prof.key_averages()) > 0))
            torch.profiler.tensorboard_trace_handler(str(folder))(prof)

        plan = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
        with torch.profiler.profile(schedule=plan, on_trace_ready=handler) as p:
            for _ in range(9):
                torch.ones(3).relu()
                p.step()
        steps = sorted(
            e.key for e in p.key_averages() if e.key.startswith("ProfilerStep")
        )
        return calls, steps, len(list(folder.glob("*.pt.trace.json")))

    assert run(ct, tmp_path / "ours") == run(pt, tmp_path / "theirs")


def test_the_legacy_autograd_profiler_records_too():
    for torch in (ct, pt):
        with torch.autograd.profiler.profile() as prof:
            torch.ones(2, 3).relu()
        assert "aten::relu" in {e.key for e in prof.key_averages()}
        assert prof.self_cpu_time_total > 0
        with torch.autograd.profiler.profile(enabled=False) as off:
            torch.ones(2).relu()
        assert off is None  # torch's: a disabled profiler enters as None


def test_profile_refuses_by_name_what_its_events_cannot_carry():
    with pytest.raises(NotImplementedError, match="with_flops"):
        ct.profiler.profile(with_flops=True)
    with ct.profiler.profile() as prof:
        ct.ones(2).relu()
    with pytest.raises(NotImplementedError, match="group_by_stack_n"):
        prof.key_averages(group_by_stack_n=5)


def test_lazily_the_pending_work_runs_in_its_own_sync_event():
    from jaxblitz.compat import lazy

    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        with ct.profiler.profile() as prof, ct.profiler.record_function("read"):
            value = (ct.ones(3).relu() * 2).sum().item()
    finally:
        lazy.set_lazy(was)
    assert value == 6.0
    (read,) = [e for e in prof.events() if e.name == "read"]
    names = [e.name for e in read.cpu_children]
    assert names[-1] == "compat::sync"
    assert names[:3] == ["aten::relu", "aten::mul", "aten::sum"]
